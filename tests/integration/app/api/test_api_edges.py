"""Exact at every edge, through the whole app.

Each refusal is a 422 problem+json, after authentication, that changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.config.floor_file import parse_floor
from app.state.timefmt import parse_time
from tests.integration.app.support import build_server, running
from tests.support import DEMO, OPERATOR, SUPERVISOR, T01, Clock, bets_body

T02 = {"Authorization": "Bearer demo-table-T02"}
T04 = {"Authorization": "Bearer demo-table-T04"}


def problem(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = r.json()
    return body


async def journal_head(client: httpx.AsyncClient) -> int:
    seq: int = (await client.get("/v1/journal/head", headers=OPERATOR)).json()["seq"]
    return seq


# -- 5. a hand dealt in the future -------------------------------------------------------


async def test_a_box_dealt_after_max_clock_skew_is_422_naming_box_and_field(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """docs/design.md: a timestamp more than max_clock_skew (2 s) ahead of the server's clock
    is refused; box 2 has no winning hand, so no meter claim would have caught it."""
    bets = bets_body(clock, (1, "25.00", "1.00"), (2, "25.00", "1.00"))
    assert (await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)).is_success
    before = await journal_head(client)
    outcome = {
        "boxes": [
            {"box": 1, "dealt_at": clock.at(10), "cards": ["2S", "7H", "9D", "JC", "KS"]},
            {"box": 2, "dealt_at": clock.at(2_001), "cards": ["3S", "8H", "TD", "QC", "AD"]},
        ]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    body = problem(r)
    assert body["errors"][0]["loc"] == ["body", "boxes", 1, "dealt_at"]
    assert "box 2" in body["detail"] and "dealt_at" in body["detail"]
    assert "max_clock_skew" in body["errors"][0]["msg"]
    # Nothing recorded: the round is still open and takes the right outcome.
    assert await journal_head(client) == before
    rnd = (await client.get("/v1/tables/T01/rounds/R1", headers=T01)).json()
    assert rnd["state"] == "open"
    outcome["boxes"][1]["dealt_at"] = clock.at(2_000)  # exactly the skew: accepted
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    assert r.status_code == 200, r.text


async def test_a_dealer_dealt_after_max_clock_skew_is_422(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """Singapore Stud: the dealer's hand carries its own dealt_at (docs/design.md)."""
    bets = {
        "closed_at": clock.at(),
        "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00", "jackpot_dealer": "1.00"}],
    }
    r = await client.post("/v1/tables/T04/rounds/R1/bets", json=bets, headers=T04)
    assert r.status_code == 200, r.text
    before = await journal_head(client)
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["2S", "7H", "9D", "JC", "KS"]}],
        "dealer": {"dealt_at": clock.at(60_000), "cards": ["3S", "8H", "TD", "QC", "AD"]},
    }
    body = problem(await client.post("/v1/tables/T04/rounds/R1/outcome", json=outcome, headers=T04))
    assert body["errors"][0]["loc"] == ["body", "dealer", "dealt_at"]
    assert "dealer" in body["detail"] and "dealt_at" in body["detail"]
    assert await journal_head(client) == before


async def test_a_future_dealt_at_is_refused_after_authentication(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    bets = bets_body(clock, (1, "25.00", "1.00"))
    await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(9_000), "cards": ["2S", "7H", "9D", "JC", "KS"]}]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T02)
    assert r.status_code == 403


# -- 6. a card that is not a card ----------------------------------------------------------


@pytest.mark.parametrize("card", ["ZZ", "1S", "AX", "11H", "", "AS ", "10", "1OS"])
async def test_a_bad_card_is_named_with_its_box_and_place_rule_5_8_1(
    client: httpx.AsyncClient, clock: Clock, card: str
) -> None:
    bets = bets_body(clock, (3, "25.00", "1.00"))
    await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
    before = await journal_head(client)
    outcome = {
        "boxes": [
            {"box": 3, "dealt_at": clock.at(10), "cards": ["2S", "7H", "9D", "JC", card]},
        ]
    }
    body = problem(await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01))
    message = f'box 3, card 5: "{card}" is not a card (rule 5.8.1)'
    assert body["errors"] == [{"loc": ["body", "boxes", 0, "cards", 4], "msg": message}]
    assert message in body["detail"]
    assert "pattern" not in body["detail"]
    assert await journal_head(client) == before


async def test_a_bad_dealer_card_is_named(client: httpx.AsyncClient, clock: Clock) -> None:
    bets = {
        "closed_at": clock.at(),
        "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00", "jackpot_dealer": "1.00"}],
    }
    await client.post("/v1/tables/T04/rounds/R1/bets", json=bets, headers=T04)
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["2S", "7H", "9D", "JC", "KS"]}],
        "dealer": {"dealt_at": clock.at(10), "cards": ["3S", "XX", "TD", "QC", "AD"]},
    }
    body = problem(await client.post("/v1/tables/T04/rounds/R1/outcome", json=outcome, headers=T04))
    message = 'dealer, card 2: "XX" is not a card (rule 5.8.1)'
    assert body["errors"] == [{"loc": ["body", "dealer", "cards", 1], "msg": message}]
    assert message in body["detail"]


async def test_good_cards_in_any_case_and_ten_as_10_are_still_accepted(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    bets = bets_body(clock, (1, "25.00", "1.00"))
    await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["2s", "7H", "10d", "JC", "tS"]}]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    assert r.status_code == 200, r.text


async def test_the_schema_still_documents_the_card_pattern(client: httpx.AsyncClient) -> None:
    """Generated clients (and the fuzz test) keep checking cards before they send them."""
    schema = (await client.get("/openapi.json")).json()["components"]["schemas"]
    for model in ("BoxHandRequest", "DealerRequest"):
        cards = schema[model]["properties"]["cards"]["items"]
        assert cards["pattern"] == "^([2-9TJQKAtjqka]|10)[SHDCshdc]$"


# -- 8. the operator's meter read, at one instant ---------------------------------------


@pytest.fixture
async def low_ceiling(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    text = Path(DEMO).read_text().replace('ceiling = "2000000.00"', 'ceiling = "10000.50"')
    server = build_server(parse_floor(text), clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as c:
        yield c


async def test_meter_read_gives_value_and_reserve_at_one_instant(
    low_ceiling: httpx.AsyncClient, clock: Clock
) -> None:
    """Three 1.00 wagers: 0.25 each to the meter (rate), 0.05 each to the reserve. The
    ceiling (10000.50) keeps two of them; the third's 0.25 goes to the reserve (docs/api.md)."""
    client = low_ceiling
    for n in range(3):
        body = bets_body(clock, (1, "10.00", "1.00"))
        r = await client.post(f"/v1/tables/T01/rounds/R{n}/bets", json=body, headers=T01)
        assert r.status_code == 200, r.text
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    # The rounds are open: nothing of them is final yet.
    assert (meter["value"], meter["reserve"]) == ("10000.50", "0.40")
    assert (meter["final_value"], meter["final_reserve"]) == ("10000.00", "0.00")
    for n in range(3):
        outcome = {
            "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["2S", "7H", "9D", "JC", "KS"]}]
        }
        r = await client.post(f"/v1/tables/T01/rounds/R{n}/outcome", json=outcome, headers=T01)
        assert r.status_code == 200, r.text
    clock.now += 5_000
    # Bets at another table move the writer's watermark past the three rounds.
    body = bets_body(clock, (1, "10.00", "0"))
    assert (await client.post("/v1/tables/T02/rounds/X/bets", json=body, headers=T02)).is_success
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["value"], meter["reserve"]) == ("10000.50", "0.40")
    assert (meter["final_value"], meter["final_reserve"]) == ("10000.50", "0.40")


async def test_meter_read_counts_a_pending_royal_flush_in_both(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """A pending 100 % award: the value drops to the seed at once, and the reserve has
    funded it (0.05 of the round's wager) at the same instant."""
    body = bets_body(clock, (1, "10.00", "1.00"))
    await client.post("/v1/tables/T02/rounds/R1/bets", json=body, headers=T02)
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=T02)
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["pending_awards"] == ["T02/R1/1/player"]
    assert (meter["value"], meter["reserve"]) == ("10000.00", "0.00")
    assert (meter["final_value"], meter["final_reserve"]) == ("10000.00", "0.00")
    clock.now += 5_000
    await client.get("/v1/tables/T02/rounds/R1?wait=10", headers=T02)
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["value"], meter["reserve"]) == ("10000.00", "0.00")
    assert (meter["final_value"], meter["final_reserve"]) == ("10000.00", "0.00")


# -- 9. a reason of only spaces --------------------------------------------------------------


BLANK = ["", "   ", "\t\n", "\u00a0\u2003", "\u200b"]


@pytest.mark.parametrize("reason", BLANK)
async def test_a_reset_needs_a_reason_with_visible_text(
    client: httpx.AsyncClient, reason: str
) -> None:
    before = await journal_head(client)
    r = await client.post(
        "/v1/links/stud/meters/major/reset", json={"reason": reason}, headers=SUPERVISOR
    )
    body = problem(r)
    assert body["errors"][0]["loc"] == ["body", "reason"]
    assert await journal_head(client) == before
    assert (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"] == []


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/v1/links/stud/meters/major/seed", {"seed": "12000.00"}),
        ("POST", "/v1/links/stud/meters/major/corrections", {"kind": "adjust", "amount": "1.00"}),
        ("POST", "/v1/tables/T01/rounds/R1/void", {}),
    ],
)
async def test_every_reason_needs_visible_text(
    client: httpx.AsyncClient, clock: Clock, method: str, path: str, body: dict[str, Any]
) -> None:
    bets = bets_body(clock, (1, "25.00", "1.00"))
    await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
    before = await journal_head(client)
    headers = T01 if "tables" in path else SUPERVISOR
    r = await client.request(method, path, json={**body, "reason": "   "}, headers=headers)
    assert problem(r)["errors"][0]["loc"] == ["body", "reason"]
    assert await journal_head(client) == before
    r = await client.request(method, path, json={**body, "reason": " ok "}, headers=headers)
    assert r.status_code == 200, r.text


# -- 10. times at the ends of the calendar ----------------------------------------------------

EDGES = [
    "9999-12-31T23:59:59.999-23:59",
    "9999-12-31T23:59:59.999-00:01",
    "0001-01-01T00:00:00.000+00:01",
    "0001-01-01T00:00:00+23:59",
]


@pytest.mark.parametrize("when", EDGES)
@pytest.mark.parametrize("name", ["from", "to"])
@pytest.mark.parametrize("path", ["/v1/reports/reconciliation", "/v1/awards", "/v1/audit"])
async def test_times_past_the_ends_of_the_calendar_are_422_never_500(
    client: httpx.AsyncClient, when: str, name: str, path: str
) -> None:
    r = await client.get(path, params={name: when}, headers=OPERATOR)
    body = problem(r)
    assert body["errors"][0]["loc"] == ["query", name]


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z"])
async def test_the_first_and_last_instants_are_answered(
    client: httpx.AsyncClient, when: str
) -> None:
    for path in ("/v1/reports/reconciliation", "/v1/awards", "/v1/audit"):
        for name in ("from", "to"):
            r = await client.get(path, params={name: when}, headers=OPERATOR)
            assert r.status_code == 200, (path, name, r.text)


@pytest.mark.parametrize(
    "when",
    [
        "2026-11-22T18:00:00.\uff11\uff12\uff13Z",  # fullwidth digits in the fraction
        "2026-11-22T18:00:00.1\u0662\u0663Z",  # Arabic-Indic digits
        "\uff12026-11-22T18:00:00Z",
        "2026-11-22T18:00:00Z\n",
    ],
)
async def test_time_parsing_accepts_ascii_digits_only(
    client: httpx.AsyncClient, clock: Clock, when: str
) -> None:
    r = await client.get("/v1/audit", params={"from": when}, headers=OPERATOR)
    assert problem(r)["errors"][0]["loc"] == ["query", "from"]
    bets = {"closed_at": when, "boxes": [{"box": 1, "ante": "25.00", "jackpot": "1.00"}]}
    r = await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
    assert problem(r)["errors"][0]["loc"] == ["body", "closed_at"]


# -- every time in every answer is RFC 3339 text (docs/api.md "Conventions": Time) ----------------


def _times(data: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every value under a key `at` or `..._at`, with where it is."""
    found: list[tuple[str, Any]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "at" or key.endswith("_at"):
                found.append((f"{path}.{key}", value))
            found += _times(value, f"{path}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += _times(value, f"{path}[{i}]")
    return found


async def test_every_time_in_every_answer_is_rfc_3339_text(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """A round's `hands` (box and dealer `dealt_at`) too: they were epoch milliseconds."""
    answers: dict[str, Any] = {}

    async def keep(what: str, r: httpx.Response) -> None:
        assert r.is_success, (what, r.text)
        answers[what] = r.json()

    sing = {
        "closed_at": clock.at(),
        "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00", "jackpot_dealer": "1.00"}],
    }
    await keep(
        "T04 bets", await client.post("/v1/tables/T04/rounds/R1/bets", json=sing, headers=T04)
    )
    dealt, dealer_dealt = clock.at(10), clock.at(20)
    hands = {
        "boxes": [{"box": 1, "dealt_at": dealt, "cards": ["2S", "7H", "9D", "JC", "KS"]}],
        "dealer": {"dealt_at": dealer_dealt, "cards": ["3S", "4H", "TD", "QC", "AD"]},
    }
    r = await client.post("/v1/tables/T04/rounds/R1/outcome", json=hands, headers=T04)
    await keep("T04 outcome", r)
    await keep("T04 round", await client.get("/v1/tables/T04/rounds/R1", headers=T04))
    assert answers["T04 round"]["hands"]["boxes"][0]["dealt_at"] == dealt
    assert answers["T04 round"]["hands"]["dealer"]["dealt_at"] == dealer_dealt
    bets = bets_body(clock, (1, "10.00", "1.00"))
    await keep(
        "T01 bets", await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
    )
    royal = {
        "boxes": [{"box": 1, "dealt_at": clock.at(5), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=royal, headers=T01)
    await keep("T01 outcome", r)
    await keep(
        "T01 bets R2", await client.post("/v1/tables/T01/rounds/R2/bets", json=bets, headers=T01)
    )
    void = {"reason": "misdeal (5.8)"}
    await keep(
        "T01 void", await client.post("/v1/tables/T01/rounds/R2/void", json=void, headers=T01)
    )
    meter = "/v1/links/stud/meters/major"
    r = await client.put(
        f"{meter}/seed", json={"seed": "9000.00", "reason": "r"}, headers=SUPERVISOR
    )
    await keep("seed", r)
    reset = {"reason": "r", "reason_code": "limit_reached"}
    await keep("reset", await client.post(f"{meter}/reset", json=reset, headers=SUPERVISOR))
    adjust = {"kind": "adjust", "amount": "1.00", "reason": "r"}
    await keep("adjust", await client.post(f"{meter}/corrections", json=adjust, headers=SUPERVISOR))
    clock.now += 5_000
    await keep("T01 round", await client.get("/v1/tables/T01/rounds/R1?wait=10", headers=T01))
    clock.now += 16 * 60_000  # the settled rounds leave memory
    await client.post(
        "/v1/tables/T01/rounds/R3/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T01
    )
    await keep("archived", await client.get("/v1/tables/T04/rounds/R1", headers=T04))
    assert answers["archived"]["archived"] is True
    for path in ("/v1/awards", "/v1/audit", "/v1/changes", meter, "/v1/reports/reconciliation"):
        await keep(path, await client.get(path, headers=OPERATOR))
    times = [
        (f"{what}{where}", value) for what, data in answers.items() for where, value in _times(data)
    ]
    assert len(times) >= 18, " ".join(w for w, _ in times)
    for where, value in times:
        assert value is None or isinstance(value, str), (where, value)
        if value is not None:
            assert parse_time(value) >= 0 and value.endswith("Z"), (where, value)
