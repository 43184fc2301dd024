"""``SqlPrincipalStore``: the :class:`~memstone.auth.store.PrincipalStore` in the store's own engine.

Written once against the engine parts (``engine.py``), so access control works on every engine: the tables
``auth_principals``, ``auth_tokens`` (token hashes, never a secret) and ``auth_grants`` are created by each
engine's schema migrations, and every call here is one transaction on the store's connection(s). Nothing is
cached: a revoked token or a removed grant takes effect at the very next request, in this process or any other
sharing the store. Writes take the isolation contract's ``meta:principals`` lock, so two processes creating
the same user or token never interleave.

``read_only=True`` (the server: it only reads principals) refuses every write before it reaches the engine.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ...auth.model import (
    Access,
    Grant,
    Permission,
    Principal,
    PrincipalRecords,
    TokenInfo,
    check_grant_scope,
    check_name,
    check_permission,
    grants_of,
    new_token,
    token_hash,
)
from ...domain.errors import BackendUnavailable, Conflict, InvalidInput, NotFound
from ...domain.ids import new_ulid
from .copy_ledger import converge
from .engine import Engine, Row
from .jobs import EngineJobs

T = TypeVar("T")
LOCK = "meta:principals"

_PRINCIPAL = "principal_id, user_name, org, name, created_at"
_TOKEN = (
    "t.token_id, t.principal_id, p.user_name, p.org, t.label, t.prefix, t.created_at, t.revoked_at "
    "FROM auth_tokens t JOIN auth_principals p ON p.principal_id = t.principal_id"
)


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SqlPrincipalStore(EngineJobs):
    """Principals, token hashes and grants in the ``auth_*`` tables of one store (any engine)."""

    write_locks = (LOCK,)

    def __init__(
        self,
        engine: Engine,
        *,
        read_only: bool = False,
        clock: Callable[[], str] = utc_now,
        on_close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(engine)
        self.read_only = read_only
        self._clock = clock
        self._on_close = on_close

    def _writable(self) -> None:
        if self.read_only:
            raise BackendUnavailable(
                "the principal store is open read-only here: the write was refused",
                hint="manage principals and tokens with `memstone token …`",
            )

    async def _write(self, fn: Callable[[], T], *locks: str) -> T:
        self._writable()
        return await super()._write(fn, *locks)

    # ------------------------------------------------------------------ reads
    async def authenticate(self, token: str) -> Access | None:
        if not isinstance(token, str) or not token:
            return None
        digest = token_hash(token)

        def read() -> Access | None:
            rows = self._q(
                "SELECT t.token_id, p.principal_id, p.user_name, p.org, p.name, p.created_at "
                "FROM auth_tokens t JOIN auth_principals p ON p.principal_id = t.principal_id "
                "WHERE t.token_hash = ? AND t.revoked_at IS NULL",
                (digest,),
            )
            if not rows:
                return None
            row = rows[0]
            grants = self._q("SELECT scope, permission FROM auth_grants WHERE principal_id = ?", (row[1],))
            return Access(principal=_principal(row[1:]), grants=grants_of(grants), token_id=str(row[0]))

        return await self._read(read)

    async def principal(self, *, user: str) -> Principal | None:
        def read() -> Principal | None:
            rows = self._q(f"SELECT {_PRINCIPAL} FROM auth_principals WHERE user_name = ?", (user,))
            return _principal(rows[0]) if rows else None

        return await self._read(read)

    async def principals(self) -> list[Principal]:
        """Every principal, oldest first (``memstone copy`` and audits)."""

        def read() -> list[Principal]:
            rows = self._q(f"SELECT {_PRINCIPAL} FROM auth_principals ORDER BY created_at, principal_id")
            return [_principal(r) for r in rows]

        return await self._read(read)

    async def tokens(self, *, user: str | None = None, include_revoked: bool = False) -> list[TokenInfo]:
        def read() -> list[TokenInfo]:
            sql = f"SELECT {_TOKEN} WHERE 1 = 1"
            args: list[object] = []
            if user is not None:
                sql += " AND p.user_name = ?"
                args.append(user)
            if not include_revoked:
                sql += " AND t.revoked_at IS NULL"
            return [_token(r) for r in self._q(sql + " ORDER BY t.created_at, t.token_id", tuple(args))]

        return await self._read(read)

    async def grants(self, principal_id: str) -> tuple[Grant, ...]:
        def read() -> tuple[Grant, ...]:
            return grants_of(
                self._q("SELECT scope, permission FROM auth_grants WHERE principal_id = ?", (principal_id,))
            )

        return await self._read(read)

    async def has_active_tokens(self) -> bool:
        def read() -> bool:
            return bool(self._q("SELECT 1 FROM auth_tokens WHERE revoked_at IS NULL LIMIT 1"))

        return await self._read(read)

    # ------------------------------------------------------------------ writes
    async def ensure_principal(self, *, user: str, org: str, name: str | None = None) -> Principal:
        self._writable()
        user = check_name(user, "user")
        org = check_name(org, "org")

        def write() -> Principal:
            rows = self._q(f"SELECT {_PRINCIPAL} FROM auth_principals WHERE user_name = ?", (user,))
            if rows:
                found = _principal(rows[0])
                if found.org != org:
                    raise InvalidInput(
                        f"user {user!r} already belongs to organization {found.org!r}",
                        hint="a principal belongs to exactly one organization; choose another user id",
                    )
                return found
            principal = Principal(
                principal_id=new_ulid("prn_"), user=user, org=org, name=name, created_at=self._clock()
            )
            self.engine.conn.x(
                f"INSERT INTO auth_principals ({_PRINCIPAL}) VALUES (?, ?, ?, ?, ?)",
                (principal.principal_id, user, org, name, principal.created_at),
            )
            return principal

        return await self._write(write)

    async def issue_token(self, principal_id: str, *, label: str | None = None) -> tuple[TokenInfo, str]:
        secret = new_token()
        token_id = new_ulid("tok_")

        def write() -> TokenInfo:
            if not self._q("SELECT 1 FROM auth_principals WHERE principal_id = ?", (principal_id,)):
                raise NotFound(f"no principal {principal_id}")
            self.engine.conn.x(
                "INSERT INTO auth_tokens (token_id, principal_id, token_hash, prefix, label, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (token_id, principal_id, token_hash(secret), secret[:10], label, self._clock()),
            )
            return _token(self._q(f"SELECT {_TOKEN} WHERE t.token_id = ?", (token_id,))[0])

        return await self._write(write), secret

    async def revoke_token(self, token_id: str) -> TokenInfo:
        def write() -> TokenInfo:
            self.engine.conn.x(
                "UPDATE auth_tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL",
                (self._clock(), token_id),
            )
            rows = self._q(f"SELECT {_TOKEN} WHERE t.token_id = ?", (token_id,))
            if not rows:
                raise NotFound(f"no token {token_id!r}", hint="list tokens with `memstone token list --all`")
            return _token(rows[0])

        return await self._write(write)

    async def set_grant(self, principal_id: str, scope: str, permission: Permission | None) -> tuple[Grant, ...]:
        def write() -> tuple[Grant, ...]:
            rows = self._q("SELECT org FROM auth_principals WHERE principal_id = ?", (principal_id,))
            if not rows:
                raise NotFound(f"no principal {principal_id}")
            pattern = check_grant_scope(scope, org=str(rows[0][0]))
            if permission is None:
                self.engine.conn.x(
                    "DELETE FROM auth_grants WHERE principal_id = ? AND scope = ?", (principal_id, pattern)
                )
            else:
                columns = ("principal_id", "scope", "permission", "created_at")
                self.engine.conn.x(
                    self.engine.dialect.upsert("auth_grants", columns, ("principal_id", "scope"), ("permission",)),
                    (principal_id, pattern, permission, self._clock()),
                )
            return grants_of(
                self._q("SELECT scope, permission FROM auth_grants WHERE principal_id = ?", (principal_id,))
            )

        return await self._write(write)

    # ------------------------------------------------------------------ copy (memstone copy)
    async def records(self) -> PrincipalRecords:
        def read() -> PrincipalRecords:
            principals = self._q(f"SELECT {_PRINCIPAL} FROM auth_principals ORDER BY created_at, principal_id")
            tokens = self._q(f"SELECT {_TOKEN.replace('t.revoked_at ', 't.revoked_at, t.token_hash ', 1)} "
                             "ORDER BY t.created_at, t.token_id")  # fmt: skip
            grants = self._q(
                "SELECT principal_id, scope, permission, created_at FROM auth_grants ORDER BY principal_id, scope"
            )
            return PrincipalRecords(
                principals=tuple(_principal(r) for r in principals),
                tokens=tuple((_token(r), str(r[8])) for r in tokens),
                grants=tuple((str(r[0]), str(r[1]), check_permission(str(r[2])), str(r[3])) for r in grants),
            )

        return await self._read(read)

    async def insert_records(self, records: PrincipalRecords, *, origin: str | None = None) -> int:
        hint = "copy into a store whose principals came from this source, or into an empty one"

        def write() -> int:
            changed = 0
            for p in records.principals:
                rows = self._q(f"SELECT {_PRINCIPAL} FROM auth_principals WHERE principal_id = ? OR user_name = ?",
                               (p.principal_id, p.user))  # fmt: skip
                if any(_principal(r) != p for r in rows):
                    raise Conflict(f"user {p.user!r} is another principal here than {p.principal_id}", hint=hint)
                if not rows:
                    self.engine.conn.x(
                        f"INSERT INTO auth_principals ({_PRINCIPAL}) VALUES (?, ?, ?, ?, ?)",
                        (p.principal_id, p.user, p.org, p.name, p.created_at),
                    )
                    changed += 1
            for t, digest in records.tokens:
                rows = self._q("SELECT token_hash, principal_id, revoked_at FROM auth_tokens WHERE token_id = ?",
                               (t.token_id,))  # fmt: skip
                if rows and (str(rows[0][0]), str(rows[0][1])) != (digest, t.principal_id):
                    raise Conflict(f"token {t.token_id} is another token here", hint=hint)
                if not rows:
                    self.engine.conn.x(
                        "INSERT INTO auth_tokens (token_id, principal_id, token_hash, prefix, label, created_at, "
                        "revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (t.token_id, t.principal_id, digest, t.prefix, t.label, t.created_at, t.revoked_at),
                    )
                    changed += 1
                elif t.revoked_at is not None and rows[0][2] is None:  # revoked at the source since the last copy
                    self.engine.conn.x("UPDATE auth_tokens SET revoked_at = ? WHERE token_id = ?",
                                       (t.revoked_at, t.token_id))  # fmt: skip
                    changed += 1
            columns = ("principal_id", "scope", "permission", "created_at")
            upsert = self.engine.dialect.upsert("auth_grants", columns, ("principal_id", "scope"), ("permission",))
            if origin is not None:  # grants the source removed since an earlier copy from it
                keys = [(g[0], g[1]) for g in records.grants]
                changed += converge(self.engine, origin, "auth_grants", ("principal_id", "scope"), keys)
            for principal_id, scope, permission, created_at in records.grants:
                rows = self._q("SELECT permission FROM auth_grants WHERE principal_id = ? AND scope = ?",
                               (principal_id, scope))  # fmt: skip
                if not rows or str(rows[0][0]) != permission:
                    self.engine.conn.x(upsert, (principal_id, scope, permission, created_at))
                    changed += 1
            return changed

        return await self._write(write)

    async def aclose(self) -> None:
        """Close the backend when this store owns it; otherwise the backend owns the connection(s)."""
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            await on_close()


def _principal(row: Row) -> Principal:
    return Principal(
        principal_id=str(row[0]),
        user=str(row[1]),
        org=str(row[2]),
        name=None if row[3] is None else str(row[3]),
        created_at=str(row[4]),
    )


def _token(row: Row) -> TokenInfo:
    return TokenInfo(
        token_id=str(row[0]),
        principal_id=str(row[1]),
        user=str(row[2]),
        org=str(row[3]),
        label=None if row[4] is None else str(row[4]),
        prefix=str(row[5]),
        created_at=str(row[6]),
        revoked_at=None if row[7] is None else str(row[7]),
    )


__all__ = ["SqlPrincipalStore", "utc_now"]
