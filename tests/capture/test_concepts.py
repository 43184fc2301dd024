"""capdup4 (issue 16): a restatement in another language or in other words is one rule by its concepts (money, an
integer, no floats; UTC and local time), and a time of day is a value a schedule sets anew.

Made-up sentences of a ticketing project, in no data file.
"""

from __future__ import annotations

import pytest
from capture_helpers import entry_then

from memstone import MemoryService
from memstone.capture.subjects import concepts, conflicts, quantities, same_concepts

MEMORY = [
    "Seat maps are cached per venue and rebuilt when the venue changes.",
    "Refund requests are reviewed by the box office within two working days.",
    "Every ticket carries a QR code signed with the venue key.",
]


@pytest.mark.parametrize(
    ("first", "then"),
    [
        pytest.param("Ticket prices are stored as integer cents; never use floating point for money.",
                     "票价一律按分存成整数，金额不能用浮点数。", id="money-across-languages"),
        pytest.param("Los importes van en céntimos como número entero, nunca en coma flotante.",
                     "Amounts are whole cents in an integer column, no floats anywhere.", id="money-in-other-words"),
        pytest.param("Show times are stored in UTC; the venue's local time is only rendered in the app.",
                     "公演時間は UTC で保存し、ローカル時間は画面に出すときだけ使う。", id="utc-and-local-time"),
    ],
)  # fmt: skip
async def test_a_restatement_by_its_concepts_adds_no_second_entry(
    service: MemoryService, first: str, then: str
) -> None:
    entry, outcomes = await entry_then(service, MEMORY, first, then)
    assert len(outcomes) == 1
    action, entry_id = outcomes[0]
    assert entry_id == entry and action in ("unchanged", "revised")


async def test_another_rule_of_the_same_concepts_naming_another_tool_is_added(service: MemoryService) -> None:
    entry, outcomes = await entry_then(
        service,
        MEMORY,
        "Ticket prices are stored as integer cents; never use floating point for money.",
        "Payouts to venues are computed by Stripe Connect in integer cents, never as floats.",
    )
    assert len(outcomes) == 1 and outcomes[0][0] == "added" and outcomes[0][1] != entry


async def test_another_time_of_day_revises_the_schedule(service: MemoryService) -> None:
    entry, outcomes = await entry_then(
        service,
        MEMORY,
        "The sales report for the venues is mailed every night at 02:00.",
        "The sales report for the venues goes out at 05:30 now.",
    )
    assert outcomes == [("revised", entry)]


def test_concepts_are_read_in_every_language_and_a_rule_needs_two_of_them() -> None:
    en = concepts("Money is kept as integer cents, never as a float.")
    de = concepts("Beträge werden in Cent als Ganzzahl gespeichert, nie als Kommazahl.")
    assert en == de == {"money", "minor", "integer", "float"}
    assert same_concepts(en, de)
    assert not same_concepts(concepts("Logs are JSON."), concepts("日志用 JSON 格式。"))  # one concept is too little


def test_a_time_of_day_is_a_value_and_its_minutes_are_no_quantity() -> None:
    assert quantities("El informe sale a las 4:30 desde el lunes.") == {"qty:clock=04:30"}
    assert conflicts(quantities("runs at 4:30"), quantities("runs at 06:00"))
    assert not conflicts(quantities("runs at 06:00 UTC"), quantities("starts at 6:00"))
