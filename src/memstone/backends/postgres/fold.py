"""Row writes queued on a PostgreSQL transaction (``PostgresConn.defer``) sent as one statement of data-modifying
CTEs: a write's Revision, manifest nodes, entry version and head compare-and-swap cost the client and the server one
Parse/Bind/Execute instead of one each (issue 13)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

Queued = tuple[str, list[object] | None]  # a queued statement (``%s`` placeholders) and its arguments

# How a queued statement that must change exactly one row begins and where its check begins (``engine._exactly_one``
# builds it of these).
ONE_HEAD = "WITH changed AS ("
ONE_CHECK = " RETURNING 1) SELECT CASE WHEN count(*) = 1 THEN 1 "
# The parameters and characters of one folded statement at most: psycopg converts a statement's placeholders once
# and keeps the result only up to 50 parameters and 4,096 bytes (``psycopg._queries.MAX_CACHED_STATEMENT_*``);
# past them it would convert the statement again on every call, which costs more than the statements saved.
FOLD_PARAMS = 50
FOLD_CHARS = 3_800
UNNEST = ") SELECT * FROM unnest("  # an INSERT of rows given as one array parameter a column


@functools.lru_cache(maxsize=256)
def _row_write(sql: str) -> str | None:
    """The table of a plain ``INSERT INTO t (…) VALUES (…)`` (an upsert too) or ``INSERT INTO t (…) SELECT * FROM
    unnest(…)`` (``PostgresDialect.insert_ignore_columns``) that reads no other row, or of a ``defer_one``
    statement (``_exactly_one``: an UPDATE or INSERT of one table by key); None for anything else."""
    if sql.startswith(ONE_HEAD) and ONE_CHECK in sql:
        body = sql[len(ONE_HEAD) :].partition(ONE_CHECK)[0]
        words = body.split(" ", 3)  # UPDATE t … / INSERT INTO t …
        if "SELECT" in body or len(words) < 3:
            return None
        return words[1] if words[0] == "UPDATE" else words[2] if words[0] == "INSERT" else None
    if not sql.startswith("INSERT INTO ") or "RETURNING" in sql:
        return None
    if UNNEST in sql and sql.count("SELECT") == 1 and sql.count(" FROM ") == 1:  # rows from array parameters
        return sql.split(" ", 3)[2]
    if "SELECT" in sql or " VALUES (" not in sql:
        return None
    return sql.split(" ", 3)[2]


def foldable(entry: Queued, run: Sequence[Queued]) -> bool:
    """Whether a queued statement whose result no one reads may join ``run`` in one statement: each writes rows of
    its own table by their keys, reads no row another writes, and at most one checks its row count."""
    sql, args = entry
    if args is None or len(args) > FOLD_PARAMS or len(sql) > FOLD_CHARS:
        return False  # a bulk write's chunk goes alone (and its long text stays out of ``_row_write``'s cache)
    table = _row_write(sql)
    if table is None:
        return False
    if not run:
        return True
    one = sql.startswith(ONE_HEAD)
    size, chars = len(args), len(sql) + 16
    for other, other_args in run:
        if _row_write(other) == table or (one and other.startswith(ONE_HEAD)):
            return False
        size, chars = size + len(other_args or ()), chars + len(other) + 16
    return size <= FOLD_PARAMS and chars <= FOLD_CHARS


def folded(run: Sequence[Queued]) -> tuple[str, list[object]]:
    """Row writes of different tables (``foldable``) as one statement of data-modifying CTEs: one Parse/Bind/Execute
    for the client and the server instead of one each. They share one snapshot and none reads another's rows, so
    the result is theirs one by one; keys are checked as each row goes in and foreign keys at the statement's end
    (as for each statement before), and the ``defer_one`` check, when one is among them, stays its final SELECT."""
    args: list[object] = []
    for _, entry_args in run:
        args.extend(entry_args or ())
    return _fold_sql(tuple(sql for sql, _ in run)), args


@functools.lru_cache(maxsize=256)
def _fold_sql(statements: tuple[str, ...]) -> str:
    parts: list[str] = []
    check = ""
    for i, sql in enumerate(statements):
        if sql.startswith(ONE_HEAD):
            body, _, tail = sql[len(ONE_HEAD) :].partition(ONE_CHECK)
            parts.append(f"changed AS ({body} RETURNING 1)")
            check = "SELECT CASE WHEN count(*) = 1 THEN 1 " + tail
        else:
            parts.append(f"w{i} AS ({sql})")
    if not check:  # no row count is checked: the last write is the statement itself
        last = parts.pop()
        check = last[last.index("(") + 1 : -1]
    return "WITH " + ", ".join(parts) + " " + check


__all__ = ["FOLD_CHARS", "FOLD_PARAMS", "ONE_CHECK", "ONE_HEAD", "foldable", "folded"]
