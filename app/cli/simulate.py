"""`jackpot simulate`: table controllers dealing rounds, through the public HTTP API only.

Each table of the floor file runs its own loop, like a real controller: bets closed,
a "play" pause, the deal, the players' decisions, the outcome (or, 1 round in 200, a
void). It knows nothing of the server but docs/api.md: its bearer token, JSON bodies with
money as strings and RFC 3339 times. `--boost N` makes the meter hands about N times
as likely as by real odds, so that wins show within minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import sys
import tomllib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from app.cli.simulated_in_play import HEARTBEAT_S, Told, honoured
from app.cli.simulated_rounds import (
    DEAL_GAP_MS,
    STRAIGHT_FLUSHES,
    VOID_ODDS,
    ZERO,
    RoundPlan,
    SimulateError,
    TableSpec,
    bets_body,
    boost_odds,
    money,
    outcome_body,
    plan_round,
    read_tables,
)
from app.state.timefmt import format_time, wall_clock_ms

__all__ = [
    "STRAIGHT_FLUSHES",
    "ZERO",
    "RoundPlan",
    "SimulateError",
    "Simulator",
    "TableSpec",
    "Options",
    "boost_odds",
    "money",
    "parse_tokens",
    "plan_round",
    "read_tables",
    "run",
]

PLAY_SHARE, DECIDE_SHARE = 0.4, 0.3  # of a round's period: bets -> deal -> outcome
SUMMARY_EVERY_S = 10.0
HTTP_TIMEOUT = httpx.Timeout(45.0, connect=5.0)  # GET ?wait=30 answers within 30 s


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


@dataclass(frozen=True, slots=True)
class Silence:
    """`--silent-table`: these tables deal for `dealing_s`, then post nothing for
    `quiet_s` (past the floor's round timeout, when the console flags a table silent),
    then deal again, and so on: the console's warnings can be watched come and go."""

    tables: frozenset[str]
    quiet_s: float
    dealing_s: float = 60.0

    @classmethod
    def of(cls, tables: Sequence[str], config: Path) -> Silence:
        try:
            raw = tomllib.loads(config.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise SimulateError(f"{config}: {error}") from None
        timeout_s = int(raw.get("round_timeout_ms", 180_000)) / 1000
        return cls(frozenset(tables), quiet_s=timeout_s + 30)

    def quiet_for(self, elapsed: float) -> float:
        """How long to stay quiet now, `elapsed` seconds after the table began (0: deal)."""
        phase = elapsed % (self.dealing_s + self.quiet_s)
        return 0.0 if phase < self.dealing_s else self.dealing_s + self.quiet_s - phase


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
        silent: Silence | None = None,
    ) -> None:
        self.client, self.tables, self.period = client, list(tables), 1.0 / rate
        self.silent = silent
        self.seed, self.boost, self.out, self.now_ms = seed, boost, out, now_ms
        self.grace_s, self.backoff_s, self.void_odds = grace_s, backoff_s, void_odds
        self.stats = Stats()
        self.stop = asyncio.Event()
        self.deadline: float | None = None  # after a stop, in-flight requests retry until then
        self.prefix = f"S{now_ms():x}"  # round ids unique across runs against one server
        self.tasks: list[asyncio.Task[None]] = []
        self.watchers: set[asyncio.Task[None]] = set()
        self.told: dict[str, Told] = {}  # what each table was last told is in play

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
        beats = [asyncio.create_task(self._heartbeat(spec)) for spec in self.tables]
        reporter = asyncio.create_task(self._report())
        timer = loop.call_later(duration, self.request_stop) if duration is not None else None
        try:
            await asyncio.gather(*self.tasks, return_exceptions=True)
            await self._finish_watchers()
        finally:
            for beat in beats:
                beat.cancel()
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
        await self._ask(spec)  # what is in play, before the first round
        began = loop.time()
        while not self.stop.is_set():
            if self.silent is not None and spec.id in self.silent.tables:
                quiet = self.silent.quiet_for(loop.time() - began)
                if quiet > 0:
                    self.say(f"{spec.id} goes silent for {quiet:.0f} s (--silent-table)")
                    await self._pause(quiet)
                    if self.stop.is_set():
                        break
                    self.say(f"{spec.id} is back")
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

    async def _heartbeat(self, spec: TableSpec) -> None:
        """Ask what is in play every HEARTBEAT_S (the table's heartbeat), until stopped."""
        while not self.stop.is_set():
            await self._ask(spec)
            await self._pause(HEARTBEAT_S)

    async def _ask(self, spec: TableSpec) -> None:
        headers = {"Authorization": f"Bearer {spec.token}"}
        try:
            answer = await self.client.get(f"/v1/tables/{spec.id}/status", headers=headers)
        except httpx.TransportError:
            return  # the round's own requests report the server away
        if answer.is_success:
            told = Told.of(answer.json())
            if told != self.told.get(spec.id, Told()):
                self.say(told.line(spec.id))
            self.told[spec.id] = told

    async def _round(self, spec: TableSpec, round_id: str, plan: RoundPlan) -> None:
        path = f"/v1/tables/{spec.id}/rounds/{round_id}"
        closed_at = self.now_ms()
        plan = honoured(plan, self.told.get(spec.id, Told()))
        if not plan.bets:
            return  # no box in play this round
        bets = await self._send(spec, "POST", f"{path}/bets", bets_body(plan, closed_at))
        if bets is not None and _not_in_play(bets):
            # Suspended since we last asked: ask, and deal the round without those wagers.
            await self._ask(spec)
            plan = honoured(plan, self.told.get(spec.id, Told()))
            bets = await self._send(spec, "POST", f"{path}/bets", bets_body(plan, closed_at))
        if bets is None or not bets.is_success or not plan.bets:
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
        """The final amounts of pending meter awards (the watermark, docs/design.md), while the
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
        round, kind), so a request that did arrive is not applied twice (docs/api.md).
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


def _not_in_play(response: httpx.Response) -> bool:
    if response.status_code != 409:
        return False
    try:
        return bool(response.json().get("type") == "progressive-not-in-play")
    except ValueError:
        return False


def _problem(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return f"{response.status_code} {response.text[:200]}"
    return f"{response.status_code} {data.get('title')}: {data.get('detail')}"


# -- the command ---------------------------------------------------------------------------


def parse_tokens(text: str | None) -> dict[str, str]:
    tokens = {}
    for part in filter(None, (text or "").split(",")):
        table, sep, token = part.partition("=")
        if not sep or not table.strip() or not token.strip():
            raise SimulateError(f"--tokens: {part!r} is not TABLE=TOKEN")
        tokens[table.strip()] = token.strip()
    return tokens


@dataclass(frozen=True, slots=True)
class Options:
    """`jackpot simulate`'s options (app/cli/commands.py)."""

    url: str
    config: Path
    tables: str | None
    rate: float
    seed: int | None
    boost: float
    duration: float | None
    tokens: str | None
    silent: str | None = None  # T03,T04: tables that go silent and come back


def run(options: Options) -> int:
    try:
        if options.rate <= 0 or options.boost < 1:
            raise SimulateError("--rate must be above 0 and --boost at least 1")
        tables = options.tables
        only = [t.strip() for t in tables.split(",") if t.strip()] if tables else None
        specs = read_tables(options.config, only, parse_tokens(options.tokens))
        silent = [t.strip() for t in (options.silent or "").split(",") if t.strip()]
        unknown = sorted(set(silent) - {spec.id for spec in specs})
        if unknown:
            raise SimulateError(f"--silent-table: no simulated table {', '.join(unknown)}")
        silence = Silence.of(silent, options.config) if silent else None
    except SimulateError as error:
        print(f"jackpot simulate: {error}", file=sys.stderr)
        return 2
    asyncio.run(_simulate(options, specs, silence))
    return 0


async def _simulate(args: Options, specs: list[TableSpec], silence: Silence | None) -> None:
    async with httpx.AsyncClient(base_url=args.url, timeout=HTTP_TIMEOUT) as client:
        sim = Simulator(
            client, specs, rate=args.rate, seed=args.seed, boost=args.boost, silent=silence
        )

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
