"""The table controllers' API through the whole app, in-process (journal in memory)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest

from app.compose import WriterProcess
from app.config.floor_file import load_floor
from app.config.settings import Settings
from jackpot.money import format_money
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, OPERATOR, SUPERVISOR, T01, T02, Clock, bets_body


@pytest.fixture
def server(clock: Clock) -> WriterProcess:
    return build_server(journal=KeptJournal(), clock=clock, outcome_wait_s=0.2)


@pytest.fixture
async def client(server: WriterProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with running(server.app, "http://test") as c:
        yield c


async def test_bets_answer_per_api_md(client: httpx.AsyncClient, clock: Clock) -> None:
    body = bets_body(clock, (1, "25.00", "1.00"), (2, "0", "1.00"))
    r = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["boxes"][0] == {"box": 1, "jackpot": "accepted", "contribution": "0.25"}
    assert answer["boxes"][1]["jackpot"] == "returned"
    assert answer["meters"] == [{"link": "stud", "meter": "major", "value": "10000.25"}]


async def test_retry_same_body_gets_first_answer_different_body_409(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    body = bets_body(clock, (1, "25.00", "1.00"))
    first = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    again = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    assert again.status_code == 200 and again.json() == first.json()
    body["boxes"][0]["ante"] = "30.00"
    other = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    assert other.status_code == 409
    assert other.headers["content-type"] == "application/problem+json"
    meter = await client.get("/v1/links/stud/meters/major", headers=OPERATOR)
    assert meter.json()["value"] == "10000.25"  # counted once


@pytest.mark.parametrize("forget", [False, True])
async def test_a_first_answer_is_the_journaled_text_and_every_retry_its_very_bytes(
    server: WriterProcess, client: httpx.AsyncClient, clock: Clock, forget: bool
) -> None:
    """Issue 21: the answer is encoded once, journaled, and sent as it is, to the first
    post and to its retries (remembered, or read from the journal: `forget`, where the
    retries go to a server started since on the same journal)."""
    writer = server.writer
    body = bets_body(clock, (1, "25.00", "1.00"), (2, "0", "1.00"))
    first = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    void = {"reason": "foreign card found (5.8.1)", "boxes": [2]}
    voided = await client.post("/v1/tables/T01/rounds/R1/void", json=void, headers=T01)
    assert first.status_code == voided.status_code == 200
    bets_row, void_row = [await writer.lookup(f"T01|R1|{kind}") for kind in ("bets", "void")]
    assert bets_row is not None and void_row is not None
    assert (first.text, voided.text) == (bets_row.answer, void_row.answer)
    assert first.headers["content-type"] == voided.headers["content-type"] == "application/json"
    async with contextlib.AsyncExitStack() as stack:
        if forget:
            restarted = build_server(journal=server.journal, clock=clock, outcome_wait_s=0.2)
            client = await stack.enter_async_context(running(restarted.app, "http://test"))
        again = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
        void_again = await client.post("/v1/tables/T01/rounds/R1/void", json=void, headers=T01)
    assert (again.status_code, again.content) == (200, first.content)
    assert (void_again.status_code, void_again.content) == (200, voided.content)
    assert first.json()["meters"] == [{"link": "stud", "meter": "major", "value": "10000.25"}]


async def test_money_as_json_number_is_422_naming_the_field(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    body = {"closed_at": clock.at(), "boxes": [{"box": 1, "ante": 25, "jackpot": "1.00"}]}
    r = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    assert r.status_code == 422
    problem = r.json()
    assert problem["status"] == 422
    assert problem["errors"][0]["loc"] == ["body", "boxes", 0, "ante"]
    assert "decimal string" in problem["errors"][0]["msg"]


@pytest.mark.parametrize(
    ("table", "round_id", "field"),
    [("T01%0A", "R1", "table"), ("T01", "R%201", "round"), ("T01", "x" * 65, "round")],
)
async def test_a_bad_table_or_round_id_is_422_naming_it(
    client: httpx.AsyncClient, clock: Clock, table: str, round_id: str, field: str
) -> None:
    body = {"closed_at": clock.at(), "boxes": [{"box": 1, "ante": "25.00", "jackpot": "1.00"}]}
    r = await client.post(f"/v1/tables/{table}/rounds/{round_id}/bets", json=body, headers=T01)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"][0]["loc"] == ["path", field]
    # and nothing was recorded: the round does not exist
    r = await client.get("/v1/tables/T01/rounds/R1", headers=T01)
    assert r.status_code == 404


async def test_wrong_prescribed_wager_is_422_and_records_nothing(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, (1, "25.00", "2.00")), headers=T01
    )
    assert r.status_code == 422
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=T01)).status_code == 404


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_body_over_the_limit_is_413_and_records_nothing(
    client: httpx.AsyncClient, clock: Clock, chunked: bool
) -> None:
    limit = Settings().max_body_bytes
    text = orjson.dumps(bets_body(clock, (1, "25.00", "1.00")))
    padded = text[:-1] + b" " * (limit - len(text)) + b"}"  # valid JSON of exactly the limit
    assert len(padded) == limit
    r = await client.post("/v1/tables/T01/rounds/R1/bets", content=padded, headers=T01)
    assert r.status_code == 200, r.text

    # without a Content-Length (chunked) the body is counted as it comes
    content = chunks_of(padded + b" ") if chunked else padded + b" "
    r = await client.post("/v1/tables/T01/rounds/R2/bets", content=content, headers=T01)
    assert r.status_code == 413, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["status"] == 413
    assert (await client.get("/v1/tables/T01/rounds/R2", headers=T01)).status_code == 404
    # an operator's change too (FastAPI's router reads that body)
    seed = b'{"seed": "15000.00", "reason": "new seed"' + b" " * limit + b"}"
    content = chunks_of(seed) if chunked else seed
    path = "/v1/links/stud/meters/major/seed"
    r = await client.put(path, content=content, headers=SUPERVISOR)
    assert r.status_code == 413 and r.json()["status"] == 413, r.text
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["seed"] == "10000.00"


async def chunks_of(data: bytes) -> AsyncIterator[bytes]:
    for i in range(0, len(data), 4_096):
        yield data[i : i + 4_096]


async def test_auth_401_without_token_403_for_another_table(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    body = bets_body(clock, (1, "25.00", "1.00"))
    assert (await client.post("/v1/tables/T01/rounds/R1/bets", json=body)).status_code == 401
    bad = {"Authorization": "Bearer nope"}
    assert (
        await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=bad)
    ).status_code == 401
    assert (
        await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T02)
    ).status_code == 403
    assert (
        await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=OPERATOR)
    ).status_code == 403


async def test_clock_skew_refused(client: httpx.AsyncClient, clock: Clock) -> None:
    body = {"closed_at": clock.at(5_000), "boxes": [{"box": 1, "ante": "25.00", "jackpot": "1.00"}]}
    r = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "closed_at"]


async def test_royal_flush_pending_then_final_with_amount(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T02
    )
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(100), "cards": ["AS", "KS", "QS", "JS", "10S"]}]
    }
    clock.now += 200
    # The writer's clock never passes dealt_at + hold here: the answer comes back pending
    # after its wait (kept short for the test by the writer's own finalize timer).
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=T02, timeout=30)
    assert r.status_code == 200, r.text
    award = r.json()["awards"][0]
    assert award["state"] == "pending" and "amount" not in award
    clock.now += 5_000
    final = await client.get("/v1/tables/T02/rounds/R1?wait=10", headers=T02, timeout=30)
    award = final.json()["awards"][0]
    assert (award["state"], award["amount"], award["hand"], award["share"]) == (
        "final",
        "10000.25",
        "royal_flush",
        "1.00",
    )


async def test_duplicate_card_422_names_card(client: httpx.AsyncClient, clock: Clock) -> None:
    await client.post(
        "/v1/tables/T01/rounds/R1/bets",
        json=bets_body(clock, (1, "25.00", "1.00"), (2, "25.00", "1.00")),
        headers=T01,
    )
    outcome = {
        "boxes": [
            {"box": 1, "dealt_at": clock.at(), "cards": ["AS", "KS", "QS", "JS", "TS"]},
            {"box": 2, "dealt_at": clock.at(), "cards": ["AS", "2D", "3C", "4H", "9S"]},
        ]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    assert r.status_code == 422 and "AS" in r.json()["detail"]


async def test_outcome_without_bets_404_void_round_409(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(), "cards": ["AS", "KS", "QS", "JS", "TS"]}]
    }
    assert (
        await client.post("/v1/tables/T01/rounds/R9/outcome", json=outcome, headers=T01)
    ).status_code == 404
    await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T01
    )
    v = await client.post(
        "/v1/tables/T01/rounds/R1/void", json={"reason": "foreign card (5.8.1)"}, headers=T01
    )
    assert v.status_code == 200 and v.json()["reversed"] == [{"box": 1, "contribution": "0.30"}]
    assert (
        await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    ).status_code == 409
    assert (
        await client.post("/v1/tables/T01/rounds/R2/void", json={}, headers=T01)
    ).status_code == 422


async def test_seed_and_reset_need_supervisor(client: httpx.AsyncClient) -> None:
    body = {"seed": "15000.00", "reason": "promotion"}
    assert (
        await client.put("/v1/links/stud/meters/major/seed", json=body, headers=OPERATOR)
    ).status_code == 403
    r = await client.put("/v1/links/stud/meters/major/seed", json=body, headers=SUPERVISOR)
    assert r.status_code == 200 and r.json()["seed"] == "15000.00"
    assert (
        await client.put(
            "/v1/links/stud/meters/major/seed", json={"seed": "1.00"}, headers=SUPERVISOR
        )
    ).status_code == 422
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["seed"], meter["next_seed"]) == ("10000.00", "15000.00")


async def test_health(client: httpx.AsyncClient) -> None:
    r = await client.get("/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"


async def test_health_tells_a_balancer_status_and_role_and_not_the_journal_head(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """The head is the operators' (`/v1/journal/head`, with a token)."""
    await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T01
    )
    r = await client.get("/health")
    assert (r.status_code, r.json()) == (200, {"status": "ok", "role": "leader"})
    head = (await client.get("/v1/journal/head", headers=OPERATOR)).json()
    assert head["seq"] >= 1 and len(head["head"]) == 64


async def test_a_pruned_round_is_answered_from_the_journal(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    body = bets_body(clock, (1, "25.00", "1.00"))
    first = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(5), "cards": ["2S", "7H", "9D", "JC", "KS"]}]
    }
    await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    clock.now += 16 * 60_000  # past the 15 minutes settled rounds are kept in memory
    await client.post(
        "/v1/tables/T01/rounds/R2/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T01
    )
    r = await client.get("/v1/tables/T01/rounds/R1", headers=T01)
    assert r.status_code == 200 and r.json()["archived"] is True
    assert r.json()["bets"] == first.json() and r.json()["state"] == "settled"
    # A late retry is still answered once, from the journal's unique key ...
    again = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    assert again.status_code == 200 and again.json() == first.json()
    body["boxes"][0]["ante"] = "50.00"
    assert (
        await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
    ).status_code == 409
    # ... and counted once.
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["value"] == "10000.50"


async def test_displays_see_the_seed_values_as_soon_as_the_server_is_ready(
    client: httpx.AsyncClient,
) -> None:
    """No event yet, and before the meters' coalescing window (100 ms) has passed: the
    state a display gets (its snapshot) holds every meter's value, not null."""
    r = await client.get("/v1/links/stud")
    assert r.status_code == 200
    values = {m["meter"]: m["value"] for m in r.json()["meters"]}
    floor = load_floor(DEMO)
    stud = next(link for link in floor.links if link.id == "stud")
    assert values == {m.id: format_money(m.seed) for m in stud.meters}


@pytest.mark.parametrize("kind", ["bets", "outcome", "void"])
@pytest.mark.parametrize("body", [b"{}", b"not json", b'{"boxes": 3}'])
async def test_a_table_event_asks_for_the_token_before_the_body(
    client: httpx.AsyncClient, kind: str, body: bytes
) -> None:
    """docs/api.md "Conventions", Auth: 401 without a valid token, 403 for another table's,
    before anything is said about the body (a bad body must not tell a stranger what the
    fields are)."""
    path = f"/v1/tables/T01/rounds/R1/{kind}"
    json_type = {"Content-Type": "application/json"}
    for headers, status in (
        ({}, 401),
        ({"Authorization": "Bearer nobody"}, 401),
        (T02, 403),
        (OPERATOR, 403),
        (T01, 422),
    ):
        r = await client.post(path, content=body, headers={**json_type, **headers})
        assert r.status_code == status, (headers, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        assert ("errors" in r.json()) == (status == 422)


async def test_a_void_of_a_round_that_left_memory_is_409_naming_the_remedy(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """Its bets were recorded: not a 404 "no bets were recorded", but a 409 saying that it
    settled and left memory, and that a supervisor's correction is the remedy (docs/api.md,
    void; docs/design.md: "that is an audited operator correction")."""
    await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T01
    )
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(5), "cards": ["2S", "7H", "9D", "JC", "KS"]}]
    }
    settled_at = clock.at()
    await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    await client.post(
        "/v1/tables/T01/rounds/R3/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T01
    )
    await client.post("/v1/tables/T01/rounds/R3/void", json={"reason": "5.8"}, headers=T01)
    clock.now += 16 * 60_000  # past the 15 minutes settled rounds are kept in memory
    await client.post(
        "/v1/tables/T01/rounds/R2/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T01
    )
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=T01)).json()["archived"]
    head = (await client.get("/v1/journal/head", headers=OPERATOR)).json()["seq"]
    r = await client.post("/v1/tables/T01/rounds/R1/void", json={"reason": "5.8"}, headers=T01)
    assert r.status_code == 409, r.text
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert "left memory" in detail and f"settled at {settled_at}" in detail, detail
    assert "correction" in detail and "supervisor" in detail, detail
    r = await client.post("/v1/tables/T01/rounds/R3/outcome", json=outcome, headers=T01)
    assert r.status_code == 409 and f"was void at {settled_at}" in r.json()["detail"], r.text
    assert (await client.get("/v1/journal/head", headers=OPERATOR)).json()["seq"] == head
    # A round never recorded is still a 404.
    r = await client.post("/v1/tables/T01/rounds/R9/void", json={"reason": "5.8"}, headers=T01)
    assert r.status_code == 404 and "no bets were recorded" in r.json()["detail"], r.text
