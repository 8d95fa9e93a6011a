"""What a run of `jackpot verify` found: its report, each discrepancy, and their text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.audit.checkpoint import Checkpoint
from jackpot.canonical import canonical_json
from jackpot.floor import Floor
from jackpot.money import format_exact

ABSENT = "(absent)"
KEEP = 1_000  # discrepancies kept in a report (all are counted)


@dataclass(frozen=True, slots=True)
class Discrepancy:
    seq: int
    kind: str
    what: str
    recorded: Any
    expected: Any  # what the rules (or the chain) give


@dataclass(frozen=True, slots=True)
class MeterTotals:
    link: str
    meter: str
    value: int
    reserve: int
    contributions: int  # to the meter and its reserve, net of voided ones
    awards: int  # paid out of the meter: awards and hand-paid jackpots
    house_funding: int  # first seed, reset shortfalls, reversals no longer held
    corrections: int
    balanced: bool
    # The regulator's meters, recomputed by the replay (docs/api.md, the meter read).
    wagers: int = 0
    wagered: int = 0
    wagers_voided: int = 0
    wagered_voided: int = 0
    overflow: int = 0
    hits: int = 0

    @staticmethod
    def of_floor(floor: Floor) -> tuple[MeterTotals, ...]:
        """Every meter of the floor, link by link, in the floor's order."""
        return tuple(
            MeterTotals(
                link=link.id,
                meter=meter.config.id,
                value=meter.value,
                reserve=meter.reserve,
                contributions=meter.contributed,
                awards=meter.awarded,
                house_funding=meter.house_funded,
                corrections=meter.corrections,
                balanced=meter.balanced(),
                wagers=meter.wagers,
                wagered=meter.wagered,
                wagers_voided=meter.wagers_voided,
                wagered_voided=meter.wagered_voided,
                overflow=meter.overflow,
                hits=meter.hits,
            )
            for link in floor.links.values()
            for meter in link.meters
        )


@dataclass(frozen=True, slots=True)
class Report:
    entries: int
    last_seq: int
    head: str
    kinds: dict[str, int]
    rounds: int
    void_rounds: int
    meter_awards: int  # final
    pending_awards: int
    fixed_awards: int  # not voided
    fixed_total: int
    meters: tuple[MeterTotals, ...]
    discrepancies: tuple[Discrepancy, ...]  # the first `keep` of them
    discrepancy_count: int
    first_seq: int = 1  # the first entry this run replayed (after a checkpoint: seq + 1)
    checkpoint: Checkpoint | None = None  # where the next run may start (clean runs only)
    expired_rounds: int = 0  # open too long with no outcome (jackpot/expiry.py)
    # The parameters in force after the last entry ({"seq", "sha256", "params"}: None for
    # a journal that recorded none), and what the run has to say of them and the file.
    parameters: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    # Each `start` entry: seq, at, host, the parameters' sha256 and the software identity.
    starts: tuple[dict[str, Any], ...] = ()

    @property
    def ok(self) -> bool:
        return self.discrepancy_count == 0


def first_difference(recorded: Any, expected: Any, path: str = "") -> tuple[str, Any, Any]:
    """Where two JSON values first differ: (path such as '.awards[0].amount', a, b)."""
    if isinstance(recorded, dict) and isinstance(expected, dict):
        for key in sorted(set(recorded) | set(expected)):
            a, b = recorded.get(key, ABSENT), expected.get(key, ABSENT)
            if a != b or type(a) is not type(b):
                return first_difference(a, b, f"{path}.{key}")
    elif isinstance(recorded, list) and isinstance(expected, list):
        for i, (a, b) in enumerate(zip(recorded, expected, strict=False)):
            if a != b or type(a) is not type(b):
                return first_difference(a, b, f"{path}[{i}]")
    return path, recorded, expected


def format_report(report: Report, *, shown: int = 50) -> str:
    lines = []
    after = report.first_seq - 1  # the checkpoint this run started from, if any
    if not report.entries:
        lines.append(f"journal: no entries after seq {after:,}" if after else "journal: empty")
    else:
        lines.append(
            f"journal: {report.entries:,} entries, seq {report.first_seq:,}..{report.last_seq:,}"
        )
        lines.append(f"head hash: {report.head}")
        kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(report.kinds.items()))
        lines.append(f"entries by kind: {kinds}")
    if after:
        lines.append(
            f"from the checkpoint at seq {after:,} (entries up to it verified by an earlier "
            "run): entries, rounds and fixed awards are counted after it; meter awards "
            "and meter totals since the floor began"
        )
    lines.append(
        f"rounds: {report.rounds:,} ({report.void_rounds:,} void, "
        f"{report.expired_rounds:,} expired); meter awards: "
        f"{report.meter_awards:,} final, {report.pending_awards:,} pending; fixed awards: "
        f"{report.fixed_awards:,} totalling {format_exact(report.fixed_total)}"
    )
    for m in report.meters:
        lines.append(
            f"link {m.link} meter {m.meter}: contributions {format_exact(m.contributions)}"
            f"  awards {format_exact(m.awards)}  house funding {format_exact(m.house_funding)}"
            f"  corrections {format_exact(m.corrections)}  value {format_exact(m.value)}"
            f"  reserve {format_exact(m.reserve)}  {'balanced' if m.balanced else 'NOT BALANCED'}"
        )
        lines.append(
            f"  wagers {m.wagers:,} ({format_exact(m.wagered)}), voided {m.wagers_voided:,}"
            f" ({format_exact(m.wagered_voided)}); hits {m.hits:,}"
            f"  overflow {format_exact(m.overflow)}"
        )
    for start in report.starts:
        lines.append(
            f"start at seq {start['seq']:,} on {start['host']}: {start.get('name')} "
            f"{start.get('version')} ({start.get('install')}) software_sha256 "
            f"{start.get('software_sha256')} lock_sha256 {start.get('lock_sha256')} python "
            f"{start.get('python')}; parameters {start['params_sha256']}"
        )
    lines.extend(report.notes)
    if report.ok:
        lines.append("OK: the chain holds and every entry is as the rules give it")
        if report.checkpoint is not None:
            lines.append(
                f"checkpoint: {report.checkpoint}\n"
                f"  (the next run may start there: jackpot verify --since {report.checkpoint})"
            )
        return "\n".join(lines)
    lines.append(f"FAILED: {report.discrepancy_count:,} discrepancies")
    for d in report.discrepancies[:shown]:
        lines.append(f"  seq {d.seq} ({d.kind}): {d.what}")
        lines.append(f"      recorded: {_short(d.recorded)}")
        lines.append(f"      rules:    {_short(d.expected)}")
    if report.discrepancy_count > shown:
        lines.append(f"  ... and {report.discrepancy_count - shown:,} more")
    return "\n".join(lines)


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
