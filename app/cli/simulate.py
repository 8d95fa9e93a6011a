"""`jackpot simulate`: table controllers dealing rounds, through the public HTTP API only.

Each table of the floor file runs its own loop, like a real controller: bets closed,
a "play" pause, the deal, the players' decisions, the outcome (or, 1 round in 200, a
void). It knows nothing of the server but API.md: its bearer token, JSON bodies with
money as strings and RFC 3339 times. `--boost N` makes the meter hands about N times
as likely as by real odds, so that wins show within minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import sys
import time
import tomllib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from math import comb
from pathlib import Path
from typing import Any, TextIO

import httpx

from app.config.demo import DEMO_FLOOR
from app.state.timefmt import format_time
from tables.cards import DECK, Card, Suit
from tables.games import GameId, game

ANTES = (Decimal("10"), Decimal("25"), Decimal("50"), Decimal("100"))
ZERO = Decimal(0)
JACKPOT_ODDS = 0.75  # share of boxes with an ante that also bet the jackpot
NO_ANTE_ODDS = 0.04  # a jackpot wager without an ante: the server returns it (5.4)
FOLD_ODDS = 0.3
VOID_ODDS = 200  # 1 round in 200 is voided instead of settled
DEAL_GAP_MS = 3  # box dealt_at a few ms apart, in box order (box order is deal order)
PLAY_SHARE, DECIDE_SHARE = 0.4, 0.3  # of a round's period: bets -> deal -> outcome
SUMMARY_EVERY_S = 10.0
HTTP_TIMEOUT = httpx.Timeout(45.0, connect=5.0)  # GET ?wait=30 answers within 30 s
DEALER = 0  # the dealer's "box" while dealing

# Every straight flush of the deck (10 per suit; high card 5 is the wheel A-2-3-4-5) and,
# at 3 Card Poker, the one meter hand: A K Q of spades (3.17).
STRAIGHT_FLUSHES: tuple[tuple[Card, ...], ...] = tuple(
    tuple(Card(14 if rank == 1 else rank, suit) for rank in range(high - 4, high + 1))
    for suit in Suit
    for high in range(5, 15)
)
AKQ_SPADES: tuple[Card, ...] = (Card(14, Suit.S), Card(13, Suit.S), Card(12, Suit.S))
# Real odds of those hands in one dealt hand: 40 / C(52, 5) and 1 / C(52, 3).
NATURAL_ODDS = {5: 40 / comb(52, 5), 3: 1 / comb(52, 3)}


class SimulateError(ValueError):
    """The command line or the floor file cannot be used: the message says why."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One simulated table. `jackpot_wager` is the prescribed wager (the credit at
    singapore_stud); None at western_stud, whose River bet is any amount up to the ante."""

    id: str
    game: GameId
    boxes: int
    jackpot_wager: Decimal | None
    token: str


@dataclass(frozen=True, slots=True)
class BoxBets:
    box: int
    ante: Decimal
    jackpot: Decimal = ZERO
    jackpot_dealer: Decimal = ZERO
    player: str | None = None


@dataclass(frozen=True, slots=True)
class DealtHand:
    box: int
    cards: tuple[Card, ...]
    folded: bool


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """A whole round drawn up front, so that a seed decides it whatever the server says."""

    bets: tuple[BoxBets, ...]
    hands: tuple[DealtHand, ...]
    dealer: tuple[Card, ...] | None
    void: bool


# -- the floor file ---------------------------------------------------------------------


def read_tables(
    path: Path, only: Sequence[str] | None = None, tokens: Mapping[str, str] | None = None
) -> list[TableSpec]:
    """The floor file's tables (all, or `only` in that order), each with its token
    (from `tokens`, else the demo convention `demo-table-<TABLE>`)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise SimulateError(f"{path}: {error}") from None
    specs: dict[str, TableSpec] = {}
    for entry in raw.get("tables", []):
        try:
            table_id, game_id = str(entry["id"]), GameId(entry["game"])
            boxes = int(entry["boxes"])
            wager = entry.get("jackpot_wager")
            prescribed = None if wager is None else Decimal(str(wager))
        except (KeyError, ValueError, TypeError, InvalidOperation) as error:
            raise SimulateError(f"{path}: table {entry.get('id')!r}: {error!r}") from None
        if prescribed is None and not game(game_id).river:
            raise SimulateError(f"{path}: table {table_id} has no jackpot_wager")
        token = (tokens or {}).get(table_id, f"demo-table-{table_id}")
        specs[table_id] = TableSpec(table_id, game_id, boxes, prescribed, token)
    unknown = [t for t in only or () if t not in specs]
    if unknown:
        raise SimulateError(f"{path} has no table {', '.join(unknown)}: it has {', '.join(specs)}")
    if not specs:
        raise SimulateError(f"{path} has no [[tables]]")
    return [specs[t] for t in only] if only else list(specs.values())


# -- drawing up a round (pure: everything random comes from `rng`) ----------------------


def plan_round(
    spec: TableSpec, rng: random.Random, boost: float = 1.0, void_odds: int = VOID_ODDS
) -> RoundPlan:
    bets = plan_bets(spec, rng)
    playing = [b.box for b in bets if b.ante > 0]  # a box without an ante gets no hand
    folds = [rng.random() < FOLD_ODDS for _ in playing]
    hands, dealer = deal(spec.game, playing, folds, rng, boost)
    return RoundPlan(tuple(bets), hands, dealer, rng.randrange(void_odds) == 0)


def plan_bets(spec: TableSpec, rng: random.Random) -> list[BoxBets]:
    rules = game(spec.game)
    dealer_cards = 0 if rules.river else rules.hand_size
    seats = min(spec.boxes, (len(DECK) - dealer_cards) // rules.hand_size)
    boxes = sorted(rng.sample(range(1, spec.boxes + 1), rng.randint(1, seats)))
    bets = []
    for box in boxes:
        ante = ZERO if rng.random() < NO_ANTE_ODDS else rng.choice(ANTES)
        bets.append(_jackpot_bets(spec, rng, BoxBets(box, ante)))
    if rules.envy:  # 3 Card Poker 3.7: now and then one player plays two adjacent boxes
        for i in range(len(bets) - 1):
            a, b = bets[i], bets[i + 1]
            if rng.random() < 0.1 and b.box == a.box + 1 and a.player is None and a.ante > 0:
                bets[i], bets[i + 1] = (
                    replace(a, player=f"P{a.box}"),
                    replace(b, player=f"P{a.box}"),
                )
    return bets


def _jackpot_bets(spec: TableSpec, rng: random.Random, bets: BoxBets) -> BoxBets:
    credit = spec.jackpot_wager
    jackpot, dealer = ZERO, ZERO
    if credit is None:  # western_stud: the River bet, whole units up to the ante
        if rng.random() < JACKPOT_ODDS:
            jackpot = Decimal(rng.randint(1, int(bets.ante) or 5))
    elif game(spec.game).dealer_wager:  # singapore 3.5: credits on the player's, the dealer's
        jackpot = credit * rng.choice((0, 1, 1, 1, 2, 3))
        if rng.random() < 0.25:
            dealer = credit * rng.choice((1, 1, 2))
    elif rng.random() < JACKPOT_ODDS:
        jackpot = credit
    if bets.ante == 0 and not (jackpot or dealer):
        jackpot = credit or Decimal(5)  # a no-ante box is there to have its wager returned
    return replace(bets, jackpot=jackpot, jackpot_dealer=dealer)


def boost_odds(game_id: GameId, boost: float) -> float:
    """The chance a hand is replaced by a drawn meter hand: with the natural chance,
    a meter hand is then about `boost` times as likely as by real odds."""
    return min(1.0, max(0.0, boost - 1) * NATURAL_ODDS[game(game_id).hand_size])


def deal(
    game_id: GameId,
    boxes: Sequence[int],
    folds: Sequence[bool],
    rng: random.Random,
    boost: float = 1.0,
) -> tuple[tuple[DealtHand, ...], tuple[Card, ...] | None]:
    """Hands for `boxes` (box order) and the dealer's, from one shuffled deck.

    Boosted hands are drawn first and their cards taken out of the deck, then the others
    are dealt from what remains: a round never holds a card twice (5.8.3).
    """
    rules = game(game_id)
    size = rules.hand_size
    deck = list(DECK)
    rng.shuffle(deck)
    holders = [*boxes, *([] if rules.river else [DEALER])]
    odds = boost_odds(game_id, boost)
    boosted: dict[int, tuple[Card, ...]] = {}
    for holder in holders:
        # Only the singapore dealer's hand carries jackpot wagers (3.5); draw anyway, so
        # that the random stream does not depend on which holders may be boosted.
        lucky = rng.random() < odds
        if lucky and (holder != DEALER or rules.dealer_wager):
            cards = _meter_hand(game_id, set(deck), rng)
            if cards is not None:
                boosted[holder] = cards
                deck = [c for c in deck if c not in cards]
    hands = []
    for box, fold in zip(boxes, folds, strict=True):
        cards = boosted.get(box) or _take(deck, size)
        folded = fold and box not in boosted  # nobody folds a royal
        # Western stud: the fifth card goes only to players still in.
        hands.append(DealtHand(box, cards[: size - 1] if rules.river and folded else cards, folded))
    dealer = None if rules.river else boosted.get(DEALER) or _take(deck, size)
    return tuple(hands), dealer


def _take(deck: list[Card], n: int) -> tuple[Card, ...]:
    cards = tuple(deck[:n])
    del deck[:n]
    return cards


def _meter_hand(
    game_id: GameId, available: set[Card], rng: random.Random
) -> tuple[Card, ...] | None:
    candidates = (AKQ_SPADES,) if game_id is GameId.three_card_poker else STRAIGHT_FLUSHES
    free = [hand for hand in candidates if available.issuperset(hand)]
    return rng.choice(free) if free else None


# -- bodies as API.md shows them ---------------------------------------------------------


def money(amount: Decimal) -> str:
    return f"{amount:.2f}"


def bets_body(plan: RoundPlan, closed_at: int) -> dict[str, Any]:
    boxes = []
    for b in plan.bets:
        item: dict[str, Any] = {"box": b.box, "ante": money(b.ante)}
        if b.jackpot:
            item["jackpot"] = money(b.jackpot)
        if b.jackpot_dealer:
            item["jackpot_dealer"] = money(b.jackpot_dealer)
        if b.player is not None:
            item["player"] = b.player
        boxes.append(item)
    return {"closed_at": format_time(closed_at), "boxes": boxes}


def outcome_body(plan: RoundPlan, dealt_at: int) -> dict[str, Any]:
    """Box i had its full hand at dealt_at + i gaps, the dealer after the last box."""
    body: dict[str, Any] = {
        "boxes": [
            {
                "box": h.box,
                "dealt_at": format_time(dealt_at + DEAL_GAP_MS * i),
                "cards": [str(c) for c in h.cards],
                "folded": h.folded,
            }
            for i, h in enumerate(plan.hands)
        ]
    }
    if plan.dealer is not None:
        body["dealer"] = {
            "cards": [str(c) for c in plan.dealer],
            "dealt_at": format_time(dealt_at + DEAL_GAP_MS * len(plan.hands)),
        }
    return body


def award_text(award: Mapping[str, Any]) -> str:
    who = f"box {award.get('box')}"
    if award.get("target"):
        who += f" ({award['target']})"
    hand = f" {award['hand']}" if award.get("hand") else ""
    if award.get("kind") != "meter":
        extra = f" for box {award['for_box']}" if "for_box" in award else ""
        return f"{who} {award.get('kind')}{hand} {award.get('amount')}{extra}"
    text = f"{who}{hand} meter {award.get('meter')} share {award.get('share')}"
    if award.get("state") == "pending" or "amount" not in award:
        return text + " PENDING"
    late = " late" if award.get("late") else ""
    return f"{text} FINAL {award['amount']} (order {award.get('order')}){late}"


def _award_key(award: Mapping[str, Any]) -> tuple[Any, ...]:
    return award.get("box"), award.get("hand"), award.get("meter"), award.get("target")


def _retry_after(response: httpx.Response) -> float:
    try:
        return min(30.0, max(0.0, float(response.headers.get("Retry-After", "1"))))
    except ValueError:  # an HTTP date: not worth parsing for a simulator
        return 1.0


# -- the table loops ---------------------------------------------------------------------


@dataclass
class Stats:
    rounds: int = 0
    voids: int = 0
    errors: int = 0
    awards: int = 0
    meter_awards: int = 0
    returned: int = 0
    retries: int = 0

    def line(self) -> str:
        return (
            f"{self.rounds} rounds posted, {self.voids} void, {self.errors} errors,"
            f" {self.awards} awards ({self.meter_awards} meter), {self.returned} wagers"
            f" returned, {self.retries} retries"
        )


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class Simulator:
    """The tables' loops on one httpx client (whose base_url is the server)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        tables: Sequence[TableSpec],
        *,
        rate: float = 1.0,
        seed: int | None = None,
        boost: float = 1.0,
        out: TextIO = sys.stdout,
        now_ms: Callable[[], int] = wall_clock_ms,
        grace_s: float = 10.0,
        backoff_s: float = 0.5,
        void_odds: int = VOID_ODDS,
    ) -> None:
        self.client, self.tables, self.period = client, list(tables), 1.0 / rate
        self.seed, self.boost, self.out, self.now_ms = seed, boost, out, now_ms
        self.grace_s, self.backoff_s, self.void_odds = grace_s, backoff_s, void_odds
        self.stats = Stats()
        self.stop = asyncio.Event()
        self.deadline: float | None = None  # after a stop, in-flight requests retry until then
        self.prefix = f"S{now_ms():x}"  # round ids unique across runs against one server
        self.tasks: list[asyncio.Task[None]] = []
        self.watchers: set[asyncio.Task[None]] = set()

    def say(self, text: str) -> None:
        print(f"{format_time(self.now_ms())} {text}", file=self.out, flush=True)

    def request_stop(self) -> None:
        if not self.stop.is_set():
            self.deadline = asyncio.get_running_loop().time() + self.grace_s
            self.stop.set()

    def force_stop(self) -> None:
        """A second Ctrl-C: give up in-flight requests now."""
        self.request_stop()
        for task in [*self.tasks, *self.watchers]:
            task.cancel()

    async def run(self, duration: float | None = None) -> Stats:
        loop = asyncio.get_running_loop()
        self.tasks = [asyncio.create_task(self._table(spec)) for spec in self.tables]
        reporter = asyncio.create_task(self._report())
        timer = loop.call_later(duration, self.request_stop) if duration is not None else None
        try:
            await asyncio.gather(*self.tasks, return_exceptions=True)
            await self._finish_watchers()
        finally:
            reporter.cancel()
            if timer is not None:
                timer.cancel()
            self.say(f"stopped: {self.stats.line()}")
        return self.stats

    def _rng(self, spec: TableSpec) -> random.Random:
        # One stream per table, so a table's deals do not depend on the others' pace.
        if self.seed is None:
            return random.SystemRandom()
        return random.Random(f"{self.seed}:{spec.id}")

    async def _table(self, spec: TableSpec) -> None:
        rng, loop, n = self._rng(spec), asyncio.get_running_loop(), 0
        while not self.stop.is_set():
            start = loop.time()
            n += 1
            plan = plan_round(spec, rng, self.boost, self.void_odds)
            try:
                await self._round(spec, f"{self.prefix}-{n:06d}", plan)
            except Exception as error:  # a bug or a strange answer: report, deal on
                self.stats.errors += 1
                self.say(f"{spec.id} round {n}: {error!r}")
            await self._pause(start + self.period - loop.time())

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake at once on a stop: the round in hand is finished promptly."""
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), seconds)

    async def _round(self, spec: TableSpec, round_id: str, plan: RoundPlan) -> None:
        path = f"/v1/tables/{spec.id}/rounds/{round_id}"
        closed_at = self.now_ms()
        bets = await self._send(spec, "POST", f"{path}/bets", bets_body(plan, closed_at))
        if bets is None or not bets.is_success:
            return
        self.stats.returned += sum(b.get("jackpot") == "returned" for b in bets.json()["boxes"])
        await self._pause(self.period * PLAY_SHARE)
        if plan.void:
            body = {"reason": "simulated: misdeal, round void (5.8)"}
            answer = await self._send(spec, "POST", f"{path}/void", body)
            if answer is not None and answer.is_success:
                self.stats.voids += 1
                self.say(f"{spec.id} {round_id} void")
            return
        dealt_at = max(self.now_ms(), closed_at)
        body = outcome_body(plan, dealt_at)
        # Never post a dealt_at ahead of our clock: wait out the deal's gaps at least.
        await asyncio.sleep(DEAL_GAP_MS * (len(plan.hands) + 1) / 1000)
        await self._pause(self.period * DECIDE_SHARE)
        outcome = await self._send(spec, "POST", f"{path}/outcome", body)
        if outcome is not None and outcome.status_code == 422:
            # Our own hands refused: void the round (5.17) so that it holds back no award.
            await self._send(spec, "POST", f"{path}/void", {"reason": "outcome refused"})
        if outcome is None or not outcome.is_success:
            return
        self.stats.rounds += 1
        pending = []
        for award in outcome.json().get("awards", []):
            self.stats.awards += 1
            self.say(f"AWARD {spec.id} {round_id} {award_text(award)}")
            if award.get("kind") == "meter":
                self.stats.meter_awards += 1
                if award.get("state") == "pending":
                    pending.append(award)
        if pending:
            self._spawn(self._watch(spec, round_id, pending))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self.watchers.add(task)
        task.add_done_callback(self.watchers.discard)

    async def _watch(self, spec: TableSpec, round_id: str, pending: list[dict[str, Any]]) -> None:
        """The final amounts of pending meter awards (the watermark, DESIGN.md), while the
        table deals on."""
        keys = {_award_key(a) for a in pending}
        path = f"/v1/tables/{spec.id}/rounds/{round_id}"
        while keys:
            answer = await self._send(spec, "GET", path, params={"wait": 30})
            if answer is None or not answer.is_success:
                return
            view = answer.json()
            for award in view.get("awards", []):
                key = _award_key(award)
                if key in keys and award.get("kind") == "meter" and award.get("state") == "final":
                    keys.discard(key)
                    self.say(f"AWARD {spec.id} {round_id} {award_text(award)}")
            if view.get("state") == "void":
                self.say(f"{spec.id} {round_id} void while its award was pending")
                return

    async def _finish_watchers(self) -> None:
        if not self.watchers:
            return
        loop = asyncio.get_running_loop()
        left = max(0.0, (self.deadline or loop.time()) - loop.time())
        _, unfinished = await asyncio.wait(set(self.watchers), timeout=left)
        for task in unfinished:
            task.cancel()
        if unfinished:
            self.say(f"{len(unfinished)} pending award(s) not awaited: see GET /v1/awards")

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(SUMMARY_EVERY_S)
            self.say(f"summary: {self.stats.line()}")

    async def _sleep(self, seconds: float) -> None:
        """A wait before a retry, cut short at the end of the grace period after a stop."""
        if self.deadline is not None:
            seconds = min(seconds, self.deadline - asyncio.get_running_loop().time())
        await asyncio.sleep(max(0.0, seconds))

    def _given_up(self) -> bool:
        return self.deadline is not None and asyncio.get_running_loop().time() > self.deadline

    async def _send(
        self,
        spec: TableSpec,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> httpx.Response | None:
        """The server's answer, after retrying what may be retried; None if given up.

        A retry sends the same body: the server keeps the first answer per (table,
        round, kind), so a request that did arrive is not applied twice (API.md).
        """
        headers = {"Authorization": f"Bearer {spec.token}"}
        backoff, failures = self.backoff_s, 0
        while not self._given_up():
            try:
                response = await self.client.request(
                    method, path, json=body, params=params, headers=headers
                )
            except httpx.TransportError as error:
                problem = f"{type(error).__name__}: {error}"
            else:
                if response.status_code == 503:  # not recorded now: the same body again
                    self.stats.retries += 1
                    await self._sleep(_retry_after(response))
                    continue
                if response.status_code < 500:
                    if not response.is_success:
                        self.stats.errors += 1
                        self.say(f"{spec.id} {method} {path}: {_problem(response)}")
                    return response
                problem = _problem(response)
            failures += 1
            self.stats.retries += 1
            if failures in (1, 10) or failures % 100 == 0:
                self.say(f"{spec.id} {method} {path}: {problem}; retrying (attempt {failures})")
            await self._sleep(backoff)
            backoff = min(backoff * 2, 10.0)
        self.stats.errors += 1
        self.say(f"{spec.id} {method} {path}: given up at the stop")
        return None


def _problem(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return f"{response.status_code} {response.text[:200]}"
    return f"{response.status_code} {data.get('title')}: {data.get('detail')}"


# -- the command ---------------------------------------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="deal rounds at simulated tables against a server",
        description="Simulated table controllers posting rounds through the HTTP API.",
    )
    p.add_argument("--url", default="http://127.0.0.1:8000", help="the jackpot server")
    p.add_argument("--config", type=Path, default=DEMO_FLOOR, help="floor file (its tables)")
    p.add_argument("--tables", default=None, help="T01,T02,... (default: every table)")
    p.add_argument("--rate", type=float, default=1.0, help="rounds per second per table")
    p.add_argument("--seed", type=int, default=None, help="reproducible deals")
    p.add_argument(
        "--boost", type=float, default=1.0,
        help="meter hands about N times as likely as by real odds (1: real odds)",
    )  # fmt: skip
    p.add_argument("--duration", type=float, default=None, help="seconds (default: until Ctrl-C)")
    p.add_argument("--tokens", default=None, help="T01=token,... (default: demo-table-<TABLE>)")


def parse_tokens(text: str | None) -> dict[str, str]:
    tokens = {}
    for part in filter(None, (text or "").split(",")):
        table, sep, token = part.partition("=")
        if not sep or not table.strip() or not token.strip():
            raise SimulateError(f"--tokens: {part!r} is not TABLE=TOKEN")
        tokens[table.strip()] = token.strip()
    return tokens


def run(args: argparse.Namespace) -> int:
    try:
        if args.rate <= 0 or args.boost < 1:
            raise SimulateError("--rate must be above 0 and --boost at least 1")
        only = [t.strip() for t in args.tables.split(",") if t.strip()] if args.tables else None
        specs = read_tables(args.config, only, parse_tokens(args.tokens))
    except SimulateError as error:
        print(f"jackpot simulate: {error}", file=sys.stderr)
        return 2
    asyncio.run(_simulate(args, specs))
    return 0


async def _simulate(args: argparse.Namespace, specs: list[TableSpec]) -> None:
    async with httpx.AsyncClient(base_url=args.url, timeout=HTTP_TIMEOUT) as client:
        sim = Simulator(client, specs, rate=args.rate, seed=args.seed, boost=args.boost)

        def on_signal() -> None:
            if sim.stop.is_set():
                sim.force_stop()
                return
            sim.say("stopping: finishing the rounds in hand (Ctrl-C again to quit now)")
            sim.request_stop()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        names = ", ".join(f"{s.id} {s.game}" for s in specs)
        sim.say(f"simulating {names} at {args.rate:g} rounds/s against {args.url}")
        await sim.run(args.duration)
