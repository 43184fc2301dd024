"""The capture review queue over HTTP: list, accept, reject; and only the items a caller may read and write."""

from __future__ import annotations

from api_support import Server

from memstone.capture import CaptureSettings, ReviewQueue, UserPrompt, capture

PROJECT = "memstone://orgs/acme/projects/web"


async def queue_texts(server: Server, *texts: str) -> list[str]:
    queue, settings = ReviewQueue.of(server.state.service), CaptureSettings().with_mode(PROJECT, "review")
    ids = []
    for text in texts:
        result = await capture(server.state.service, UserPrompt(text=text), scope=PROJECT, settings=settings,
                               queue=queue)  # fmt: skip
        assert result.status == "queued"
        ids.append(str(result.outcomes[0].queue_item))
    return ids


async def test_list_accept_and_reject_in_local_mode(local: Server) -> None:
    first, second = await queue_texts(local, "Never log card numbers.", "Prefer table-driven tests.")
    listed = (await local.client.get("/api/capture/queue")).json()["items"]
    assert [(i["item_id"], i["candidate"]["text"]) for i in listed] == [
        (first, "Never log card numbers."),
        (second, "Prefer table-driven tests."),
    ]
    accepted = await local.client.post(f"/api/capture/queue/{first}/accept")
    assert accepted.status_code == 200, accepted.text
    (entry,) = accepted.json()["entries"]
    assert accepted.json()["item"]["result_entry"] == entry
    assert (await local.state.service.get(entry)).text == "Never log card numbers."
    rejected = await local.client.post(f"/api/capture/queue/{second}/reject", json={"note": "too generic"})
    assert rejected.status_code == 200 and rejected.json()["item"]["note"] == "too generic"
    assert (await local.client.get("/api/capture/queue")).json()["items"] == []
    everything = (await local.client.get("/api/capture/queue", params={"status": "all"})).json()["items"]
    assert [i["status"] for i in everything] == ["accepted", "rejected"]
    again = await local.client.post(f"/api/capture/queue/{second}/accept")
    assert again.status_code == 422 and "already rejected" in again.json()["error"]["message"]
    assert (await local.client.post("/api/capture/queue/cap_nope/reject")).status_code == 404


async def test_in_token_mode_a_caller_sees_and_decides_only_what_its_grants_allow(remote: Server) -> None:
    (item,) = await queue_texts(remote, "Never log card numbers.")
    stranger, _ = await remote.token("mallory", "globex")
    reader, _ = await remote.token("rita", "acme", {PROJECT: "read"})
    writer, _ = await remote.token("will", "acme", {PROJECT: "write"})
    assert (await remote.client.get("/api/capture/queue", headers=remote.as_(stranger))).json()["items"] == []
    hidden = await remote.client.post(f"/api/capture/queue/{item}/accept", headers=remote.as_(stranger))
    assert hidden.status_code == 404
    seen = (await remote.client.get("/api/capture/queue", headers=remote.as_(reader))).json()["items"]
    assert [i["item_id"] for i in seen] == [item]
    assert (
        await remote.client.post(f"/api/capture/queue/{item}/reject", headers=remote.as_(reader))
    ).status_code == 403
    assert (await remote.client.get("/api/capture/queue")).status_code == 401
    done = await remote.client.post(f"/api/capture/queue/{item}/accept", headers=remote.as_(writer))
    assert done.status_code == 200, done.text
    (entry,) = done.json()["entries"]
    assert done.json()["item"]["decided_by"] == "will"
    version = await remote.state.service.get(entry)
    assert version.provenance.author == "will"
