"""`jackpot simulate`: its deals, its bodies (docs/api.md shapes), and a run against the app."""

from __future__ import annotations

import io
import random
import re
from collections import Counter
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.cli import simulate
from app.cli.commands import main
from app.cli.simulate import RoundPlan, Simulator, TableSpec, plan_round, read_tables
from app.state.timefmt import parse_time
from jackpot.money import Money, parse_money
from tables.bets import BoxBet, TableSettings, check_bets
from tables.cards import Card
from tables.evaluate import Category, evaluate, three_card_progressive_hand
from tables.games import GameId, game
from tables.hands import BoxHand, DealerHand, check_hands
from tests.support import DEMO

SPECS = {spec.game: spec for spec in read_tables(DEMO)}
MONEY = re.compile(r"^(0|[1-9][0-9]*)\.[0-9]{2}$")
TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
CARD = re.compile(r"^[2-9TJQKA][SHDC]$")


def settings(spec: TableSpec) -> TableSettings:
    wager = parse_money(simulate.money(spec.jackpot_wager or simulate.ZERO))
    return TableSettings(game(spec.game), wager, spec.boxes)


def check_with_the_rules(spec: TableSpec, plan: RoundPlan) -> None:
    """The server's own checks (tables/): bets the table takes, cards of one deck."""
    table = settings(spec)
    bets = [
        BoxBet(b.box, m(b.ante), m(b.jackpot), m(b.jackpot_dealer), b.player) for b in plan.bets
    ]
    check_bets(table, bets)
    hands = [BoxHand(h.box, h.cards, h.folded, 1 + i) for i, h in enumerate(plan.hands)]
    dealer = None if plan.dealer is None else DealerHand(plan.dealer, 99)
    check_hands(table, hands, dealer)


def m(amount: Decimal) -> Money:
    return parse_money(simulate.money(amount))


def is_meter_hand(game_id: GameId, cards: tuple[Card, ...]) -> bool:
    if game_id is GameId.three_card_poker:
        return three_card_progressive_hand(cards) == "akq_spades"
    return evaluate(cards).category in (Category.royal_flush, Category.straight_flush)


# -- the floor file ---------------------------------------------------------------------


def test_reads_the_demo_floor_with_demo_tokens() -> None:
    specs = read_tables(DEMO)
    assert [s.id for s in specs] == ["T01", "T02", "T03", "T04", "T05", "T06"]
    assert specs[0].token == "demo-table-T01" and str(specs[0].jackpot_wager) == "1.00"
    assert specs[4].game is GameId.western_stud and specs[4].jackpot_wager is None
    # The tiered link's table is simulated too (`jackpot demo` plays every table).
    assert (specs[5].game, specs[5].token) == (GameId.multi_link_casino_stud, "demo-table-T06")


def test_selects_tables_and_tokens_and_names_unknown_ones() -> None:
    specs = read_tables(DEMO, ["T04", "T01"], simulate.parse_tokens("T01=secret"))
    assert [(s.id, s.token) for s in specs] == [("T04", "demo-table-T04"), ("T01", "secret")]
    with pytest.raises(simulate.SimulateError, match="no table T99"):
        read_tables(DEMO, ["T99"])
    with pytest.raises(simulate.SimulateError, match="TABLE=TOKEN"):
        simulate.parse_tokens("T01")


# -- dealing -----------------------------------------------------------------------------


@pytest.mark.parametrize("game_id", list(GameId))
@pytest.mark.parametrize("boost", [1.0, 1e9])
def test_every_round_is_one_deck_with_the_right_hand_sizes(game_id: GameId, boost: float) -> None:
    spec, rng = SPECS[game_id], random.Random(f"deck:{game_id}:{boost}")
    rules = game(game_id)
    for _ in range(400):
        plan = plan_round(spec, rng, boost)
        cards = [c for h in plan.hands for c in h.cards] + list(plan.dealer or ())
        assert len(cards) == len(set(cards))
        assert [h.box for h in plan.hands] == [b.box for b in plan.bets if b.ante > 0]
        for h in plan.hands:
            short = rules.river and h.folded  # western stud: a folded hand has four cards
            assert len(h.cards) == rules.hand_size - short
        assert plan.dealer is None if rules.river else len(plan.dealer or ()) == rules.hand_size
        check_with_the_rules(spec, plan)


@pytest.mark.parametrize("game_id", list(GameId))
def test_bets_follow_each_tables_rules(game_id: GameId) -> None:
    spec, rng = SPECS[game_id], random.Random(7)
    boxes = [b for _ in range(500) for b in plan_round(spec, rng).bets]
    assert all(b.jackpot or b.jackpot_dealer for b in boxes if b.ante == 0)
    assert any(b.ante == 0 for b in boxes)  # some wagers for the server to return (5.4)
    if game_id is GameId.western_stud:
        assert all(b.jackpot <= b.ante for b in boxes if b.ante)
    elif game_id is GameId.singapore_stud:
        assert any(b.jackpot_dealer for b in boxes) and any(b.jackpot > 1 for b in boxes)
    else:
        assert {b.jackpot for b in boxes} == {0, spec.jackpot_wager}


@pytest.mark.parametrize("game_id", list(GameId))
def test_boost_makes_meter_hands_likely(game_id: GameId) -> None:
    spec = SPECS[game_id]

    def meter_hands(boost: float) -> int:
        rng = random.Random(3)
        plans = [plan_round(spec, rng, boost) for _ in range(300)]
        return sum(is_meter_hand(game_id, h.cards) for p in plans for h in p.hands if not h.folded)

    assert meter_hands(1.0) <= 1
    # Nearly every hand (about 3 a round); at 3 card poker one a round: one A K Q of spades.
    assert meter_hands(1e9) > (250 if game_id is GameId.three_card_poker else 600)
    # ~0.5 % of five-card hands (royal flushes; other straight flushes boosted at most 6
    # times, so that they do not sink the meters), ~14 % at 3 card poker.
    boosted = meter_hands(3000)
    assert 2 < boosted < 300


def test_boost_odds() -> None:
    assert simulate.boost_odds(GameId.casino_stud, 1) == 0
    assert simulate.boost_odds(GameId.casino_stud, 10**12) == 1
    assert simulate.boost_odds(GameId.three_card_poker, 2) == pytest.approx(1 / 22100)
    assert len(set(simulate.STRAIGHT_FLUSHES)) == 40


def test_a_seed_decides_the_deals() -> None:
    spec = SPECS[GameId.singapore_stud]

    def plans(seed: str) -> list[RoundPlan]:
        rng = random.Random(seed)
        return [plan_round(spec, rng, 50.0) for _ in range(50)]

    assert plans("42:T04") == plans("42:T04")
    assert plans("42:T04") != plans("43:T04")


# -- against a fake server: the bodies docs/api.md shows --------------------------------------


class Fake:
    """A tiny server answering like docs/api.md, recording every request it is sent.

    It refuses once with 503 (Retry-After 0), once with 422 at an outcome, and gives the
    first outcome a pending meter award, final on the next GET of the round.
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str, dict[str, Any] | None]] = []
        self.bets: dict[tuple[str, str], dict[str, Any]] = {}
        self.refused_503: tuple[str, str, dict[str, Any]] | None = None
        self.refused_422 = False
        self.pending: tuple[str, str, int] | None = None
        self.app = FastAPI()
        self.app.add_api_route(
            "/v1/tables/{table}/rounds/{round}/{kind}", self.post, methods=["POST"]
        )
        self.app.add_api_route("/v1/tables/{table}/rounds/{round}", self.get, methods=["GET"])
        self.app.add_api_route("/v1/tables/{table}/status", self.status, methods=["GET"])

    async def status(self, table: str) -> JSONResponse:
        return JSONResponse({"table": table, "in_play": True, "suspended_boxes": []})

    async def post(self, table: str, round: str, kind: str, request: Request) -> JSONResponse:
        body = await request.json()
        assert request.headers["authorization"] == f"Bearer demo-table-{table}"
        self.requests.append((kind, table, round, body))
        if kind == "bets":
            if self.refused_503 is None:
                self.refused_503 = (table, round, body)
                return JSONResponse({"title": "busy"}, 503, headers={"Retry-After": "0"})
            self.bets[(table, round)] = body
            return JSONResponse({"table": table, "round": round, "boxes": [
                {"box": b["box"], "jackpot": "returned" if b["ante"] == "0.00" else "accepted"}
                for b in body["boxes"]
            ]})  # fmt: skip
        if kind == "outcome" and self.pending is not None and not self.refused_422:
            self.refused_422 = True
            return JSONResponse({"title": "Invalid", "detail": "refused on purpose"}, 422)
        awards = []
        if kind == "outcome" and self.pending is None and body["boxes"]:
            box = body["boxes"][0]["box"]
            self.pending = (table, round, box)
            awards = [self.award(box, "pending")]
        return JSONResponse({"table": table, "round": round, "awards": awards})

    async def get(self, table: str, round: str, wait: int = 0) -> JSONResponse:
        self.requests.append(("get", table, round, None))
        assert self.pending is not None and self.pending[:2] == (table, round) and wait == 30
        return JSONResponse({"state": "settled", "awards": [self.award(self.pending[2], "final")]})

    @staticmethod
    def award(box: int, state: str) -> dict[str, Any]:
        award = {"box": box, "kind": "meter", "hand": "royal_flush", "meter": "major",
                 "share": "1.00", "state": state, "late": False}  # fmt: skip
        return award | ({"amount": "10234.50", "order": 1} if state == "final" else {})


class Flaky(httpx.AsyncBaseTransport):
    """The network fails the first round requests: the simulator retries, never crashes."""

    def __init__(self, inner: httpx.AsyncBaseTransport, failures: int) -> None:
        self.inner, self.failures = inner, failures

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.failures and "/rounds/" in request.url.path:
            self.failures -= 1
            raise httpx.ConnectError("connection refused", request=request)
        return await self.inner.handle_async_request(request)


def check_bets_body(body: dict[str, Any], spec: TableSpec) -> None:
    assert set(body) == {"closed_at", "boxes"} and TIME.match(body["closed_at"])
    for box in body["boxes"]:
        assert set(box) <= {"box", "ante", "jackpot", "jackpot_dealer", "player"}
        assert 1 <= box["box"] <= spec.boxes
        assert all(MONEY.match(box[k]) for k in ("ante", "jackpot", "jackpot_dealer") if k in box)


def check_outcome_body(body: dict[str, Any], bets: dict[str, Any], spec: TableSpec) -> None:
    closed_at = parse_time(bets["closed_at"])
    assert [b["box"] for b in body["boxes"]] == [
        b["box"] for b in bets["boxes"] if b["ante"] != "0.00"
    ]
    times = [parse_time(b["dealt_at"]) for b in body["boxes"]]
    assert times == sorted(times) and all(t >= closed_at for t in times)
    for box in body["boxes"]:
        assert set(box) == {"box", "dealt_at", "cards", "folded"} and TIME.match(box["dealt_at"])
        assert all(CARD.match(c) for c in box["cards"]) and isinstance(box["folded"], bool)
    if spec.game is GameId.western_stud:
        assert "dealer" not in body
    else:
        assert TIME.match(body["dealer"]["dealt_at"]) and all(
            CARD.match(c) for c in body["dealer"]["cards"]
        )


async def test_bodies_against_a_fake_server_per_api_md() -> None:
    fake, out = Fake(), io.StringIO()
    transport = Flaky(httpx.ASGITransport(app=fake.app), failures=2)
    specs = read_tables(DEMO)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        sim = Simulator(client, specs, rate=20, seed=1, boost=100, out=out, grace_s=2,
                        backoff_s=0.01, void_odds=4)  # fmt: skip
        stats = await sim.run(duration=1.0)
    by_table = {s.id: s for s in specs}
    kinds = Counter(kind for kind, *_ in fake.requests)
    assert kinds["bets"] > 10 and kinds["outcome"] > 5 and kinds["void"] > 0 and kinds["get"] == 1
    for kind, table, round_id, body in fake.requests:
        assert re.match(r"^[A-Za-z0-9_.:-]{1,64}$", round_id)
        if kind == "bets":
            assert body is not None
            check_bets_body(body, by_table[table])
        elif kind == "outcome":
            assert body is not None
            check_outcome_body(body, fake.bets[(table, round_id)], by_table[table])
        elif kind == "void":
            assert body is not None and set(body) == {"reason"} and body["reason"]
    # 503: the same body again; 422 at an outcome: said, and the round voided (5.17).
    assert fake.refused_503 is not None
    table, round_id, body = fake.refused_503
    assert fake.bets[(table, round_id)] == body
    text = out.getvalue()
    assert "422 Invalid: refused on purpose" in text
    assert "royal_flush meter major share 1.00 PENDING" in text
    assert "royal_flush meter major share 1.00 FINAL 10234.50 (order 1)" in text
    assert stats.errors == 1 and stats.retries >= 3 and stats.voids > 0
    assert stats.rounds == kinds["outcome"] - 1 and "stopped:" in text.splitlines()[-1]


# -- against the real app, in-process ----------------------------------------------------


@pytest.fixture
async def app_client() -> AsyncIterator[tuple[httpx.AsyncClient, list[int]]]:
    from tests.integration.app.support import build_server

    app = build_server(outcome_wait_s=0.2).app
    statuses: list[int] = []

    async def record(response: httpx.Response) -> None:
        statuses.append(response.status_code)

    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        hooks = {"response": [record]}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", event_hooks=hooks
        ) as client:
            yield client, statuses


async def test_runs_against_the_real_app(
    app_client: tuple[httpx.AsyncClient, list[int]],
) -> None:
    client, statuses = app_client
    out = io.StringIO()
    sim = Simulator(client, read_tables(DEMO), rate=10, seed=5, boost=3000, out=out,
                    grace_s=8, void_odds=20)  # fmt: skip
    stats = await sim.run(duration=2.0)
    text = out.getvalue()
    # Every answer a 200: returned wagers (no ante, 5.4) are in a 200 answer.
    assert set(statuses) == {200}, text
    assert stats.errors == 0 and stats.rounds > 25 and stats.voids > 0 and stats.returned > 0
    assert stats.meter_awards > 0 and "not awaited" not in text
    assert text.count(" FINAL ") == stats.meter_awards, text


def test_cli_parser_and_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[simulate.Options] = []

    def run(options: simulate.Options) -> int:  # the options as `jackpot simulate` parses them
        seen.append(options)
        return 0

    with monkeypatch.context() as patch:
        patch.setattr(simulate, "run", run)
        assert main(["simulate", "--tables", "T01,T03", "--seed", "42", "--boost", "100"]) == 0
    [args] = seen
    assert (args.tables, args.seed, args.boost, args.rate, args.duration) == (
        "T01,T03", 42, 100.0, 1.0, None
    )  # fmt: skip
    assert main(["simulate", "--tables", "T99"]) == 2
    assert main(["simulate", "--rate", "0"]) == 2
    assert main(["simulate", "--rate", "fast"]) == 2  # bad usage, as argparse's


async def test_a_table_told_not_in_play_deals_without_jackpot_wagers_until_resumed_rule_5_18_2(
    app_client: tuple[httpx.AsyncClient, list[int]],
) -> None:
    client, statuses = app_client
    sam = {"Authorization": "Bearer demo-supervisor"}
    r = await client.post("/v1/links/stud/suspend", json={"reason": "controller"}, headers=sam)
    assert r.status_code == 200
    r = await client.post("/v1/tables/T03/suspend", json={"reason": "x", "boxes": [1]}, headers=sam)
    assert r.status_code == 200
    out = io.StringIO()
    tables = [s for s in read_tables(DEMO) if s.id in ("T01", "T03")]
    sim = Simulator(client, tables, rate=10, seed=5, out=out, grace_s=8, void_odds=1000)
    stats = await sim.run(duration=1.5)
    text = out.getvalue()
    assert "T01 progressive not in play (controller): no jackpot wagers there" in text
    assert "T03 progressive not in play on box 1 (x): no jackpot wagers there" in text
    assert stats.errors == 0 and stats.rounds > 5, text
    assert 409 not in statuses
    floor = (await client.get("/v1/floor", headers=sam)).json()
    assert floor["suspensions"]  # still suspended: nothing the simulator did resumed it
    rounds = []
    for table, prefix in (("T01", sim.prefix), ("T03", sim.prefix)):
        for n in range(1, stats.rounds + 1):
            got = await client.get(f"/v1/tables/{table}/rounds/{prefix}-{n:06d}", headers=sam)
            if got.status_code == 200:
                rounds.append((table, got.json()))
    wagers = [(t, b["box"]) for t, view in rounds for b in view["boxes"] if b["wager"] != "0.00"]
    assert rounds and ("T01", 1) not in {(t, 1) for t, _ in wagers if t == "T01"}
    assert all(t == "T03" and box != 1 for t, box in wagers), wagers
    # Resumed: the tables take jackpot wagers again (the heartbeat tells them).
    await client.post("/v1/links/stud/resume", json={"reason": "ok"}, headers=sam)
    out = io.StringIO()
    sim = Simulator(client, tables[:1], rate=10, seed=6, out=out, grace_s=8, void_odds=1000)
    await sim.run(duration=1.0)
    assert "T01" not in {
        line.split()[1] for line in out.getvalue().splitlines() if "not in play" in line
    }
