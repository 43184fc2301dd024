"""Issue 16 (capcorr9): typed subjects a correction changes. A port is a kind of value in every language
(capture/measures.py), so a new port of the same service revises its entry and a port of another service does not;
a correction revises the entry naming the very command it names before one that merely shares more words with it
(admission.py, TYPED_BONUS); a correction that keeps only the name of what it changes revises the one entry holding
that name, in another language too (anchors.corrected_anchor). The statements are from fresh dev projects written
blind (bench/data/capture/kielwasser, comal, ormeggio)."""

from __future__ import annotations

import pytest
from capture_helpers import entry_then

from memstone import MemoryService
from memstone.capture.measures import measures, unmeasured
from memstone.capture.targets import Target

MEMORY = [
    "Translations live in the Crowdin project, synced nightly.",
    "Deploys go out with `fly deploy` from the main branch only.",
]


def test_ports_are_read_in_every_language_and_not_from_times_or_line_numbers() -> None:
    port = {"port": frozenset({"8040"})}
    assert measures("The API runs on port 8040 behind Caddy.") == port
    assert measures("Die API lauscht auf Port 8040.") == port
    assert measures("API は 8040 番ポートで動く。") == port
    assert measures("订单服务监听 8040 端口。") == port
    assert measures("서버는 포트 8040 에서 돈다.") == port
    assert measures("curl localhost:8040/health before a release") == port
    assert measures("El servidor escucha en el puerto 3100; Postgres en db.internal:5432.") == {
        "port": frozenset({"3100", "5432"})
    }
    assert measures("Backups run at 10:30.") == {"clock": frozenset({"10:30"})}
    assert measures("The bug is in worker.py:120.") == {}
    assert "8040" not in unmeasured("The API runs on port 8040.")


@pytest.mark.parametrize(
    ("entry", "change"),
    [
        (
            "The API runs on port 8040 behind Caddy; nothing else listens on the host.",
            "We switched the API to port 8090 because the new harbour firewall blocks 8040.",
        ),
        (
            "The search index is Meilisearch, reachable at search.ormeggio.internal:7700.",
            "Meilisearch moved to port 7800 after the upgrade.",
        ),
    ],
)
async def test_a_new_port_of_the_same_service_revises_its_entry(
    service: MemoryService, entry: str, change: str
) -> None:
    first, outcomes = await entry_then(service, MEMORY, entry, change)
    assert outcomes == [("revised", first)]


async def test_a_port_of_another_service_is_another_entry(service: MemoryService) -> None:
    first, outcomes = await entry_then(
        service,
        MEMORY,
        "El servidor de pedidos escucha en el puerto 3000 y Nginx hace de proxy.",
        "Les tickets de cuisine sont imprimés via le service print-gateway sur le port 9100.",
    )
    assert len(outcomes) == 1 and outcomes[0][0] == "added" and outcomes[0][1] != first


async def test_a_correction_revises_the_entry_naming_its_command(service: MemoryService) -> None:
    memory = [*MEMORY, "We use pnpm for packages; don't commit a package-lock.json."]
    first, outcomes = await entry_then(
        service,
        memory,
        "Lint with `pnpm lint` before each commit.",
        "The lint step is `pnpm check` now; `pnpm lint` was removed from package.json.",
    )
    assert outcomes == [("revised", first)]


async def test_a_correction_keeping_only_a_name_revises_the_one_entry_holding_it(service: MemoryService) -> None:
    first, outcomes = await entry_then(
        service,
        MEMORY,
        "파일 업로드는 S3 버킷 ormeggio-uploads 에 저장한다.",
        "Uploads go to the ormeggio-media bucket now; ormeggio-uploads is read-only.",
    )
    assert outcomes == [("revised", first)]


def test_a_name_two_entries_hold_points_at_neither() -> None:
    from memstone.capture.anchors import corrected_anchor, identifiers  # new in capcorr9: main fails here

    assert identifiers("Uploads go to the ormeggio-media bucket now.") == frozenset({"ormeggio-media"})
    one = Target.planned(
        kind="fact", text="Thumbnails are cached in the ormeggio-media bucket.", slug=None, plan_index=0
    )
    two = Target.planned(kind="fact", text="Avatars go to the ormeggio-media bucket too.", slug=None, plan_index=1)
    text = "The ormeggio-media bucket is in eu-west-3 now."
    assert corrected_anchor(text, [one]) is one
    assert corrected_anchor(text, [one, two]) is None


async def test_a_setting_given_another_value_revises_its_entry(service: MemoryService) -> None:
    assert measures("Set `CELERY_WORKER_CONCURRENCY=4` on the worker pods.") == {
        "setting:celery_worker_concurrency": frozenset({"4"})
    }
    assert measures("API: JSON only. TODO: fix the docs. See worker.py:12.") == {}
    first, outcomes = await entry_then(
        service,
        MEMORY,
        "Set `CELERY_WORKER_CONCURRENCY=4` on the worker pods; more than that starves the database.",
        "Die Worker laufen jetzt mit `CELERY_WORKER_CONCURRENCY=8`.",
    )
    assert outcomes == [("revised", first)]


async def test_a_port_of_another_device_sharing_one_word_is_another_entry(service: MemoryService) -> None:
    first, outcomes = await entry_then(
        service,
        MEMORY,
        "The alarm panel integration listens on port 5020 (Modbus TCP); the vendor moved it in firmware 3.4.1.",
        "Firmware zamków w wersji 2.8.0 wymaga portu 8883, a daty w API są w formacie 2024-06-30.",
    )
    assert all(o != ("revised", first) for o in outcomes)
