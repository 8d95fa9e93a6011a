"""The floor's whole state as plain JSON-able data, and back, exactly.

`dump(floor)` is canonical: the same state gives the same dict (and the same bytes with
jackpot/canonical.py), so "replaying the journal reproduces the state exactly" is a
direct comparison. The service stores these as snapshots so that start-up replays only the
journal after the latest one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import fields
from functools import cache
from typing import Any

from jackpot.commands import FixedAward
from jackpot.config import LinkConfig, Timing
from jackpot.floor import Floor
from jackpot.link import Link
from jackpot.meter import COUNTERS, LEDGER, Funding, Meter
from jackpot.money import Money
from jackpot.mystery import Trigger
from jackpot.mystery_levels import MysteryAward, Reveal
from jackpot.records import (
    AwardRecord,
    BoxRecord,
    CorrectionRecord,
    Expiry,
    FixedRecord,
    PastFixed,
    ResetRecord,
    RoundRecord,
    SeedChangeRecord,
)
from jackpot.timeline import REVERSAL, Event, Key

VERSION = 1


class SnapshotWithoutMeters(ValueError):
    """A snapshot stored before the regulator's meters were kept: its floor cannot say
    their lifetime values, so the state is rebuilt from the journal instead."""


def _event(e: Event) -> list[Any]:
    applied = None if e.applied is None else [list(p) for p in e.applied]
    data = [
        list(e.key),
        [list(p) for p in e.amounts],
        applied,
        e.award,
        e.meter,
        e.share,
        e.cancelled,
    ]
    if e.source is not None:  # REVERSAL, RETURN: the serial of the event it takes back
        data.append(e.source.key[5])
    return data


def _funding(f: Funding | None) -> list[int] | None:
    return None if f is None else [f.seed, f.from_reserve, f.from_house, f.to_reserve]


# Flows added after snapshots were first stored: written only when not zero, so that the
# state of a journal without them dumps to the same bytes as before (verify --since).
_NEWER_FLOWS = (
    "reversed_meter", "reversed_reserve", "awards_withheld", "awards_returned",
    "overflow_to_house", "overflow_to_meter", "overflow_from_meter",
    "transferred_out", "transferred_in", "transferred_out_reserve", "transferred_in_reserve",
)  # fmt: skip


def _meter(m: Meter) -> dict[str, Any]:
    # A must-hit-by level's armed trigger: only when there is one (older dumps keep their
    # bytes). The app keeps snapshots as secret as the trigger (docs/design.md).
    armed = {} if m.trigger is None else {"trigger": [m.trigger.value, m.trigger.nonce]}
    return {
        **armed,
        "seed": m.seed,
        "next_seed": m.next_seed,
        "value": m.value,
        "reserve": m.reserve,
        "reset_key": list(m.reset_key),
        **{
            name: getattr(m, name)
            for name in LEDGER
            if name not in _NEWER_FLOWS or getattr(m, name)
        },
        # Always written: a snapshot without them predates the meters (`load` refuses it).
        **{name: getattr(m, name) for name in COUNTERS},
    }


def _plain(record: Any, skip: tuple[str, ...]) -> dict[str, Any]:
    cls: type = type(record)
    return {name: getattr(record, name) for name in _names(cls, skip)}


@cache
def _names(cls: type, skip: tuple[str, ...]) -> tuple[str, ...]:
    # `fields` builds its answer anew at each call: a tenth of a large snapshot's dump.
    return tuple(f.name for f in fields(cls) if f.name not in skip)


def dump(floor: Floor) -> dict[str, Any]:
    events: dict[str, Event] = {}

    def ref(link_id: str | None, e: Event | None) -> int | None:
        if e is None or link_id is None:
            return None
        events[f"{link_id}:{e.key[5]}"] = e
        return e.key[5]

    links = {}
    for link_id, link in floor.links.items():
        tl = link.timeline
        for _, e in tl.heap:
            ref(link_id, e.source)  # a pending reversal's round may be pruned
        links[link_id] = {
            "meters": [_meter(m) for m in link.meters],
            "heap": [ref(link_id, e) for _, e in tl.heap],
            "watermark": tl.watermark,
            "serial": tl.serial,
            "pending_sums": tl.pending_sums,
            "pending_awards": tl.pending_awards,
            "open_rounds": sorted([t, r, at] for (t, r), at in link.open_rounds.items()),
            "sequence": link.sequence,
        }
    rounds = []
    for rnd in floor.rounds.values():
        data = _plain(rnd, ("boxes", "fixed", "event"))
        data["event"] = ref(rnd.link, rnd.event)
        data["boxes"] = [
            [b.box, b.wager, b.dealer_wager, [list(c) for c in b.contributions], b.voided]
            for b in rnd.boxes.values()
        ]
        data["fixed"] = [[*_fixed(f.award)[:6], f.voided, f.award.dealt_at] for f in rnd.fixed]
        rounds.append(data)

    def award_data(award: AwardRecord) -> dict[str, Any]:
        data = _plain(award, ("event", "funding", "reveal"))
        data["event"], data["funding"] = ref(award.link, award.event), _funding(award.funding)
        if isinstance(award, MysteryAward) and award.reveal is not None:
            data["reveal"] = _plain(award.reveal, ())  # only a must-hit-by award has one
        return data

    awards = [award_data(award) for award in floor.awards.values()]
    left_hits = {k: [award_data(a) for a in kept] for k, kept in floor.left_hits.items()}
    resets = []
    for reset in floor.resets.values():
        data = _plain(reset, ("event", "funding"))
        data["event"], data["funding"] = ref(reset.link, reset.event), _funding(reset.funding)
        resets.append(data)
    state: dict[str, Any] = {
        "version": VERSION,
        "now": floor.now,
        "links": links,
        "rounds": rounds,
        "awards": awards,
        "resets": resets,
        "seed_changes": [_plain(c, ()) for c in floor.seed_changes],
        "corrections": [_plain(c, ()) for c in floor.corrections],
        "past_fixed": [
            [p.table, p.round, p.link, p.voided, *_fixed(p.award)] for p in floor.past_fixed
        ],
        "done": [list(d) for d in floor.done],
        "expired": floor.expired,
        # Always written: a snapshot without it predates the per-table ledgers.
        "table_flows": floor.table_flows,
        # Events are shared by the heap and the records: listed once, as "link:serial".
        "events": {name: _event(e) for name, e in sorted(events.items())},
    }
    if floor.recent_expired:  # written only when there is one: older dumps keep their bytes
        state["recent_expired"] = [_plain(e, ()) for e in floor.recent_expired]
    state.update(_left(floor, left_hits))

    return state


def _left(floor: Floor, left_hits: dict[str, Any]) -> dict[str, Any]:
    """What the floor keeps of meter awards leaving memory (app/state/past_awards.py):
    written only once one has, so that older dumps keep their bytes."""
    left = {
        "past_meter": list(floor.past_meter),
        "left_hits": left_hits,
        "left_awards": dict(floor.left_awards),
    }
    return {name: value for name, value in left.items() if value}


def _fixed(f: FixedAward) -> list[Any]:
    return [f.box, f.kind, f.hand, f.amount, f.for_box, f.target, f.dealt_at]


def _unfixed(f: list[Any], dealt_at: int | None) -> FixedAward:
    return FixedAward(f[0], f[1], f[2], Money(f[3]), f[4], f[5], dealt_at)


def _key(data: list[Any]) -> Key:
    return (int(data[0]), int(data[1]), int(data[2]), str(data[3]), int(data[4]), int(data[5]))


def load(
    data: dict[str, Any], links: list[LinkConfig], timing: Timing, retain_ms: int = 900_000
) -> Floor:
    """Rebuild a Floor from `dump` output, for the same link configuration."""
    if data.get("version") != VERSION:
        raise ValueError(f"snapshot version {data.get('version')!r} is not {VERSION}")
    floor = Floor(links, timing, retain_ms)
    floor.now = data["now"]
    event = _Events(data["events"])
    if "table_flows" not in data:
        raise SnapshotWithoutMeters("snapshot: no per-table ledgers")
    floor.table_flows = {t: list(f) for t, f in data["table_flows"].items()}
    for link_id, ld in data["links"].items():
        _load_link(floor.links[link_id], ld, event)
    for rd in data["rounds"]:
        rnd = _load_round(rd, event)
        floor.rounds[(rnd.table, rnd.round)] = rnd
    for ad in data["awards"]:
        award = _load_award(ad, event)
        floor.awards[award.id] = award
    for rd in data["resets"]:
        plain = {k: v for k, v in rd.items() if k not in ("event", "funding")}
        reset = ResetRecord(
            event=event.of(rd["link"], rd["event"]), funding=_unfunding(rd["funding"]), **plain
        )
        floor.resets[reset.id] = reset
    floor.seed_changes = [SeedChangeRecord(**c) for c in data["seed_changes"]]
    floor.corrections = [CorrectionRecord(**c) for c in data["corrections"]]
    floor.past_fixed = [
        PastFixed(p[0], p[1], p[2], _unfixed(p[4:], p[10]), p[3])
        for p in data.get("past_fixed", [])
    ]
    floor.done = deque((int(t), str(a), str(b)) for t, a, b in data["done"])
    floor.expired = dict(data.get("expired", {}))  # absent from snapshots before expiry
    floor.recent_expired.extend(Expiry(**e) for e in data.get("recent_expired", []))
    floor.past_meter = list(data.get("past_meter", []))
    floor.left_hits = {
        k: [_load_award(ad, event) for ad in kept] for k, kept in data.get("left_hits", {}).items()
    }
    floor.left_awards = dict(data.get("left_awards", {}))
    return floor


class _Events:
    """The dump's events, each rebuilt once: the heap and the records share them.

    Serials are per link, so an event is named by its link and serial."""

    def __init__(self, raw: dict[str, list[Any]]) -> None:
        self.raw = raw
        self.built: dict[tuple[str, int], Event] = {}

    def __call__(self, link_id: str | None, serial: int | None) -> Event | None:
        if serial is None or link_id is None:
            return None
        cache_key = (link_id, serial)
        if cache_key not in self.built:
            raw = self.raw[f"{link_id}:{serial}"]
            self.built[cache_key] = Event(
                key=_key(raw[0]),
                amounts=tuple((int(m), int(r)) for m, r in raw[1]),
                applied=None if raw[2] is None else tuple((int(m), int(r)) for m, r in raw[2]),
                award=raw[3],
                meter=raw[4],
                share=raw[5],
                cancelled=raw[6],
                source=self(link_id, raw[7]) if len(raw) > 7 else None,
            )
        return self.built[cache_key]

    def of(self, link_id: str, serial: int) -> Event:
        """The event an award or a reset was dealt with: it has one."""
        event = self(link_id, serial)
        assert event is not None
        return event


def _load_link(link: Link, ld: dict[str, Any], event: _Events) -> None:
    """A link's meters, its timeline's pending events and its open rounds."""
    for meter, md in zip(link.meters, ld["meters"], strict=True):
        if any(name not in md for name in COUNTERS):
            raise SnapshotWithoutMeters(f"snapshot: link {link.id}'s meters have no counters")
        _load_meter(meter, md)
    tl = link.timeline
    tl.heap = [(ev.key, ev) for s in ld["heap"] if (ev := event(link.id, s)) is not None]
    tl.watermark, tl.serial = ld["watermark"], ld["serial"]
    tl.pending_sums, tl.pending_awards = (
        [list(p) for p in ld["pending_sums"]],
        ld["pending_awards"],
    )
    tl.pending_reversals = sum(1 for _, e in tl.heap if e.kind >= REVERSAL and not e.cancelled)
    link.open_rounds = {(t, r): at for t, r, at in ld["open_rounds"]}
    link.sequence = ld["sequence"]


def _load_meter(meter: Meter, md: dict[str, Any]) -> None:
    for name, value in md.items():
        if name == "trigger":
            meter.trigger = Trigger(Money(value[0]), value[1])
            continue
        setattr(meter, name, tuple(value) if name == "reset_key" else value)


def _load_round(rd: dict[str, Any], event: _Events) -> RoundRecord:
    boxes = {
        b[0]: BoxRecord(b[0], b[1], b[2], tuple((m, r) for m, r in b[3]), b[4]) for b in rd["boxes"]
    }
    # A snapshot taken before fixed awards kept their dealt_at: the round's closed_at.
    fixed = [
        FixedRecord(_unfixed(f, f[7] if len(f) > 7 else rd["closed_at"]), f[6]) for f in rd["fixed"]
    ]
    plain = {k: v for k, v in rd.items() if k not in ("boxes", "fixed", "event", "awards")}
    plain["awards"] = list(rd["awards"])  # a copy: the data may be kept and reloaded
    return RoundRecord(boxes=boxes, fixed=fixed, event=event(rd["link"], rd["event"]), **plain)


def _load_award(ad: dict[str, Any], event: _Events) -> AwardRecord:
    """An award; a must-hit-by level's carries its reveal."""
    plain = {k: v for k, v in ad.items() if k not in ("event", "funding", "reveal")}
    ev = event.of(ad["link"], ad["event"])
    funding = _unfunding(ad["funding"])
    if "reveal" in ad:
        reveal = Reveal(**ad["reveal"])
        return MysteryAward(event=ev, funding=funding, reveal=reveal, **plain)
    return AwardRecord(event=ev, funding=funding, **plain)


def _unfunding(data: list[int] | None) -> Funding | None:
    if data is None:
        return None
    return Funding(Money(data[0]), Money(data[1]), Money(data[2]), Money(data[3]))
