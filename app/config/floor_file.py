"""The floor configuration file (docs/api.md "FloorFile configuration"): TOML in, models out."""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic_core import ErrorDetails

from app.config.floor_levels import level_checks
from app.config.gaming_day_settings import LocalTime, Shifts, TimeZone
from app.config.overflow_checks import overflow_checks
from jackpot.config import LinkConfig, MeterConfig, Timing
from jackpot.money import RATE_SCALE, Money, MoneyError, Rate, parse_money, parse_rate
from tables.errors import TablesError
from tables.games import GameId, game

Loc = tuple[str | int, ...]

# Ids appear in URLs (/v1/tables/{table}/...) and in journal keys joined by "|"
# ("table|round|kind"), so they are restricted to characters that need no escaping.
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")  # a sha256 in lower-case hex


class FloorError(Exception):
    """The floor file cannot be used. `problems` holds one line per problem: where, what, why."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = tuple(problems)
        count = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        super().__init__(f"floor configuration {source}: {count}\n" + "\n".join(self.problems))


# What an empty bearer token hashes to: never a token (app/api/auth.py).
EMPTY_TOKEN_SHA256 = hashlib.sha256(b"").hexdigest()


# -- field types: TOML values -> exact ints; a TOML number for money is refused ----------


_T = TypeVar("_T")


def _decimal_text(parse: Callable[[str], _T], example: str) -> Callable[[object], _T]:
    """A validator of money or a rate: a decimal string only."""

    # A TOML float would already have lost exactness ("0.1"), and an integer looks like
    # a float's cousin: money is a string everywhere (docs/api.md conventions), here too.
    def validate(value: object) -> _T:
        if not isinstance(value, str):
            raise ValueError(f'must be a decimal string such as "{example}"')
        try:
            return parse(value)
        except MoneyError as error:
            raise ValueError(str(error)) from None

    return validate


def _ident(value: object) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise ValueError("must be 1-64 letters, digits, '_', '.' or '-', not starting with '_.-'")
    return value


def _sha256(value: object) -> str:
    if not isinstance(value, str) or not SHA256_RE.match(value):
        raise ValueError("must be the sha256 of the token: 64 lower-case hex digits")
    return value


def _currency(value: object) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Z]{3}", value):
        raise ValueError('must be an ISO 4217 code of three upper-case letters, such as "SGD"')
    return value


MoneyText = Annotated[Money, BeforeValidator(_decimal_text(parse_money, "1.00"))]
RateText = Annotated[Rate, BeforeValidator(_decimal_text(parse_rate, "0.25"))]
Ident = Annotated[str, BeforeValidator(_ident)]
TokenHash = Annotated[str, BeforeValidator(_sha256)]
Currency = Annotated[str, BeforeValidator(_currency)]


class OperatorRole(StrEnum):
    operator = "operator"  # reads everything, reports
    supervisor = "supervisor"  # changes seeds, resets meters, corrections


class _Section(BaseModel):
    # A misspelt key ("jackpot_wagr") must not silently fall back to a default.
    model_config = ConfigDict(extra="forbid", frozen=True)


class MeterSection(_Section):
    id: Ident
    name: StrictStr = ""
    seed: MoneyText
    rate: RateText  # share of each accepted jackpot wager added to the meter
    reserve_rate: RateText  # share put aside to fund the next reset
    ceiling: MoneyText | None = None  # beyond it, contributions go to the reserve
    # A must-hit-by level (app/config/floor_levels.py, docs/design.md): won when it reaches
    # a trigger drawn in [must_hit_from, must_hit_by); must_hit_from defaults to the seed.
    must_hit_by: MoneyText | None = None
    must_hit_from: MoneyText | None = None
    # ... or to the house, or to another meter of the link (jackpot/link.py)
    overflow_to: Ident = "reserve"


class LinkSection(_Section):
    id: Ident
    name: StrictStr = ""
    meters: tuple[MeterSection, ...] = Field(min_length=1)


class TableSection(_Section):
    id: Ident
    game: GameId
    link: Ident | None = None  # required unless game is western_stud (no meter)
    boxes: StrictInt = Field(ge=1, le=12)
    jackpot_wager: MoneyText | None = None  # prescribed wager; a credit at singapore_stud
    pay_table: dict[str, StrictStr] = Field(default_factory=dict)  # row -> decimal string
    fold_keeps_jackpot: StrictBool | None = None  # singapore_stud only: rules are silent
    lucky_dealer_odds: StrictInt | None = Field(default=None, ge=1)  # singapore_stud only
    token_sha256: TokenHash
    property: Ident | None = None  # the casino it stands in: reports roll up per property


class OperatorSection(_Section):
    name: Ident
    role: OperatorRole
    token_sha256: TokenHash


class FloorFile(_Section):
    """The whole floor file. Money and rates are exact ints (jackpot.money)."""

    currency: Currency
    hold_ms: StrictInt = Field(default=2_000, ge=0)
    round_timeout_ms: StrictInt = Field(default=180_000, ge=1)
    max_clock_skew_ms: StrictInt = Field(default=2_000, ge=0)
    # A round open this many round timeouts with no outcome or void is expired
    # (jackpot/expiry.py); a table holds at most max_open_rounds open rounds.
    expire_after: StrictInt = Field(default=10, ge=2)
    max_open_rounds: StrictInt = Field(default=1_000, ge=1)
    # Settled, void and expired rounds are kept in memory this long (then the journal).
    retain_ms: StrictInt = Field(default=900_000, ge=0)
    dual_control: StrictBool = False  # a supervisor's change needs a second supervisor
    # Operators' sign-in (docs/design.md "Sign-in and sessions"): a console session ends
    # after session_idle_ms without a request, and session_lifetime_ms after it began; a
    # name (an address) is locked out signin_lockout_ms after so many failed sign-ins
    # within signin_window_ms; a table's replaced token works table_token_grace_ms more.
    session_idle_ms: StrictInt = Field(default=1_800_000, ge=10_000)
    session_lifetime_ms: StrictInt = Field(default=43_200_000, ge=10_000)
    signin_failures_per_name: StrictInt = Field(default=5, ge=1)
    signin_failures_per_address: StrictInt = Field(default=20, ge=1)
    signin_window_ms: StrictInt = Field(default=900_000, ge=1_000)
    signin_lockout_ms: StrictInt = Field(default=900_000, ge=1_000)
    table_token_grace_ms: StrictInt = Field(default=3_600_000, ge=0)
    # A payment above it needs a witness (none: never); unpaid longer than pay_within_ms
    # an award is overdue (docs/api.md "Payments").
    witness_above: MoneyText | None = None
    pay_within_ms: StrictInt = Field(default=3_600_000, ge=1)
    # A screen showing a value off the committed one by more than sign_variance for 30 s,
    # or not showing a final win within win_shown_within_ms, is flagged (docs/api.md).
    sign_variance: MoneyText = Field(default=Money(50_000_000))
    win_shown_within_ms: StrictInt = Field(default=30_000, ge=1)
    # A table silent (no status poll) this long is flagged, and with the second taken out
    # of play by the writer's timer until a supervisor resumes it (rule 5.17).
    table_silence_ms: StrictInt = Field(default=10_000, ge=1)
    suspend_silent_tables: StrictBool = False
    hold_warning_ms: StrictInt = Field(default=30_000, ge=1)  # the console's early warning
    # The console's report presets (app/config/gaming_day_settings.py).
    time_zone: TimeZone = "UTC"
    gaming_day_start: LocalTime = "06:00"
    shifts: Shifts = ("06:00", "14:00", "22:00")
    links: tuple[LinkSection, ...] = ()
    tables: tuple[TableSection, ...] = ()
    operators: tuple[OperatorSection, ...] = ()

    def timing(self) -> Timing:
        return Timing(
            self.hold_ms,
            self.round_timeout_ms,
            self.max_clock_skew_ms,
            self.expire_after * self.round_timeout_ms,
        )

    def link_configs(self) -> tuple[LinkConfig, ...]:
        """The links as the domain (jackpot.config) takes them: a name left out is the id."""
        return tuple(
            LinkConfig(
                id=link.id,
                name=link.name or link.id,
                meters=tuple(
                    MeterConfig(
                        m.id,
                        m.seed,
                        m.rate,
                        m.reserve_rate,
                        m.ceiling,
                        m.name or m.id,
                        must_hit_by=m.must_hit_by,
                        must_hit_from=m.must_hit_from,
                        overflow_to=m.overflow_to,
                    )
                    for m in link.meters
                ),
            )
            for link in self.links
        )

    def table(self, table_id: str) -> TableSection | None:
        return next((t for t in self.tables if t.id == table_id), None)


# -- loading ----------------------------------------------------------------------------


def load_floor(path: Path | str) -> FloorFile:
    """Read and check a floor file; FloorError lists every problem found, not just the first."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise FloorError(str(path), [f"cannot read the file: {error.strerror or error}"]) from None
    return parse_floor(text, source=str(path))


def parse_floor(text: str, *, source: str = "<text>") -> FloorFile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise FloorError(source, [f"not valid TOML: {error}"]) from None
    problems: list[tuple[Loc, str]] = []
    floor: FloorFile | None = None
    try:
        floor = FloorFile.model_validate(raw)
    except ValidationError as error:
        problems.extend(
            (_loc(detail), _message(detail))
            for detail in error.errors()
            if not _consequential(raw, detail)
        )
    # The cross-checks read the raw data, so that they report too when a field is bad.
    problems.extend(_cross_checks(raw))
    if problems:
        problems.sort(key=lambda problem: _order(problem[0]))
        unique = dict.fromkeys(f"{_where(raw, loc)}: {msg}" for loc, msg in problems)
        raise FloorError(source, list(unique))
    assert floor is not None
    return floor


def _loc(detail: ErrorDetails) -> Loc:
    # pydantic appends "[key]" when a dict key (not its value) is invalid.
    return tuple(part for part in detail["loc"] if part != "[key]")


def _consequential(raw: Mapping[str, Any], detail: ErrorDetails) -> bool:
    """pydantic counts a list's valid items for min_length: a list whose only item is
    bad is also reported "too short". The item's own error says it all."""
    if detail["type"] != "too_short":
        return False
    node: Any = raw
    for key in detail["loc"]:
        if isinstance(node, dict) and isinstance(key, str):
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            return False
    return isinstance(node, list) and len(node) > 0


_SECTIONS = list(FloorFile.model_fields)


def _order(loc: Loc) -> tuple[tuple[int, int, str], ...]:
    """File order: sections as in FloorFile, entries by index, fields by name."""
    head = _SECTIONS.index(loc[0]) if loc and loc[0] in _SECTIONS else len(_SECTIONS)
    return ((head, 0, ""), *((0, k, "") if isinstance(k, int) else (1, 0, k) for k in loc[1:]))


def _message(detail: ErrorDetails) -> str:
    kind = detail["type"]
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "value_error":
        return str(detail.get("ctx", {}).get("error", detail["msg"]))
    return detail["msg"]


def _where(raw: Mapping[str, Any], loc: Loc) -> str:
    """('tables', 2, 'jackpot_wager') -> 'tables[2] (T03).jackpot_wager'."""
    parts: list[str] = []
    node: Any = raw
    for key in loc:
        if isinstance(key, int) and parts:
            node = node[key] if isinstance(node, list) and 0 <= key < len(node) else None
            label = node.get("id", node.get("name")) if isinstance(node, dict) else None
            parts[-1] += f"[{key}]" + (f" ({label})" if isinstance(label, str) else "")
        else:
            parts.append(str(key))
            node = node.get(key) if isinstance(node, dict) else None
    return ".".join(parts) or "(top level)"


# -- checks across entries, on the raw data ----------------------------------------------


def _entries(raw: Mapping[str, Any], key: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    items = raw.get(key)
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield index, item


def _parsed(parse: Any, value: object) -> int | None:
    try:
        return int(parse(value))
    except (MoneyError, TypeError):
        return None


def _duplicates(
    entries: Iterator[tuple[int, Mapping[str, Any]]], key: str, prefix: Loc, what: str
) -> Iterator[tuple[Loc, str]]:
    seen: dict[str, int] = {}
    for index, entry in entries:
        value = entry.get(key)
        if not isinstance(value, str):
            continue
        if value in seen:
            yield (*prefix, index, key), f"duplicate {what} {value!r} (also at [{seen[value]}])"
        else:
            seen[value] = index


def _cross_checks(raw: Mapping[str, Any]) -> Iterator[tuple[Loc, str]]:
    yield from _duplicates(_entries(raw, "links"), "id", ("links",), "link id")
    for li, link in _entries(raw, "links"):
        yield from _duplicates(_entries(link, "meters"), "id", ("links", li, "meters"), "meter id")
        for mi, meter in _entries(link, "meters"):
            yield from _meter_checks(meter, ("links", li, "meters", mi))
        yield from overflow_checks(link, ("links", li))
    yield from _duplicates(_entries(raw, "tables"), "id", ("tables",), "table id")
    links = [link.get("id") for _, link in _entries(raw, "links")]
    for ti, table in _entries(raw, "tables"):
        yield from _table_checks(table, ("tables", ti), [x for x in links if isinstance(x, str)])
    yield from level_checks(raw)
    yield from _duplicates(_entries(raw, "operators"), "name", ("operators",), "operator name")
    yield from _token_checks(raw)
    if raw.get("dual_control") is True:
        supervisors = [op for _, op in _entries(raw, "operators") if op.get("role") == "supervisor"]
        if len(supervisors) < 2:
            yield ("dual_control",), "needs at least two operators with role supervisor"


def _meter_checks(meter: Mapping[str, Any], loc: Loc) -> Iterator[tuple[Loc, str]]:
    seed = _parsed(parse_money, meter.get("seed"))
    ceiling = _parsed(parse_money, meter.get("ceiling"))
    if seed is not None and ceiling is not None and seed > ceiling:
        yield (*loc, "ceiling"), "is below the seed"
    rate = _parsed(parse_rate, meter.get("rate"))
    reserve = _parsed(parse_rate, meter.get("reserve_rate"))
    if rate is not None and reserve is not None and rate + reserve > RATE_SCALE:
        yield (*loc, "reserve_rate"), "rate + reserve_rate is more than 1"


def _table_checks(
    table: Mapping[str, Any], loc: Loc, links: Sequence[str]
) -> Iterator[tuple[Loc, str]]:
    game_id = table.get("game")
    if not isinstance(game_id, str) or game_id not in {g.value for g in GameId}:
        return  # the model already says the game is unknown
    if game_id == GameId.western_stud:
        # Western Stud pays its River bet from a pay table: no link, no meter.
        if "link" in table:
            yield (*loc, "link"), "western_stud tables have no link (no meter)"
    else:
        link = table.get("link")
        if link is None:
            yield (*loc, "link"), f"required for {game_id} tables"
        elif isinstance(link, str) and link not in links:
            declared = ", ".join(links) or "none"
            yield (*loc, "link"), f"no link {link!r} is declared (links: {declared})"
        if "jackpot_wager" not in table:
            yield (*loc, "jackpot_wager"), f"required for {game_id} tables"
    if _parsed(parse_money, table.get("jackpot_wager")) == 0:
        yield (*loc, "jackpot_wager"), "must be more than 0"
    for option in ("fold_keeps_jackpot", "lucky_dealer_odds"):
        if option in table and game_id != GameId.singapore_stud:
            yield (*loc, option), "only for singapore_stud tables"
    pay_table = table.get("pay_table")
    if isinstance(pay_table, dict) and all(isinstance(v, str) for v in pay_table.values()):
        try:
            game(game_id, pay_table)  # the tables package owns the rows and their pay kinds
        except TablesError as error:
            yield (*loc, *error.loc), error.message


def _token_checks(raw: Mapping[str, Any]) -> Iterator[tuple[Loc, str]]:
    # A token must say who is calling: two holders of one token would be indistinguishable.
    seen: dict[str, str] = {}
    for section in ("tables", "operators"):
        for index, entry in _entries(raw, section):
            digest = entry.get("token_sha256")
            if not isinstance(digest, str):
                continue
            where = _where(raw, (section, index))
            if digest == EMPTY_TOKEN_SHA256:
                yield (section, index, "token_sha256"), "the sha256 of the empty string: no token"
            elif digest in seen:
                yield (section, index, "token_sha256"), f"same token as {seen[digest]}"
            else:
                seen[digest] = where
