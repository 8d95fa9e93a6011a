"""Typed journal entries (app/state/entries) give back exactly the dict and the canonical
bytes they were decoded from (docs/journal.md: the hash chain covers those bytes), and
refuse an entry docs/journal.md does not specify, naming its seq, kind and field."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.state.entries import (
    UNSET,
    BetsEntry,
    EntryError,
    FinalizeEntry,
    OutcomeEntry,
    ProposeEntry,
    ResetChange,
    VoidEntry,
    entry_dict,
    entry_from_dict,
    entry_text,
)
from jackpot.canonical import canonical_json

ROOT = Path(__file__).resolve().parents[4]
# The journals kept as test data (written by older servers), wherever the suite keeps them.
JOURNALS = sorted(ROOT.glob("tests/**/data/*.jsonl"))

# -- journal-shaped entries, as any server version could have written them --------------

ints = st.integers()  # any size: readers keep every integer exact (docs/journal.md)
texts = st.text(max_size=12)  # every code point but lone surrogates; control characters too
maybe_text = st.none() | texts
cards = st.lists(texts, max_size=7)
versions = st.sampled_from([None, 1, 2, 3])  # None: absent (the first version)


def versioned(fields: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    def add(version: int | None) -> dict[str, Any]:
        return fields if version is None else {**fields, "version": version}

    return versions.map(add)


def entry(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"kind": st.just(kind), "now": ints, **fields})


posted_box = st.fixed_dictionaries(
    {"box": ints, "ante": ints, "jackpot": ints, "jackpot_dealer": ints, "player": maybe_text}
)
decision = st.fixed_dictionaries(
    {"box": ints, "status": texts, "wager": ints, "dealer_wager": ints, "reason": maybe_text,
     "ante": ints, "player": maybe_text}
)  # fmt: skip
drawn = st.fixed_dictionaries(
    {"magic_card": texts, "lucky_box": ints, "lucky_dealer": st.booleans()}
)
hand = st.fixed_dictionaries(
    {"box": ints, "dealt_at": ints, "cards": cards, "folded": st.booleans()}
)
dealer = st.fixed_dictionaries({"cards": cards, "dealt_at": st.none() | ints})
claim = st.fixed_dictionaries(
    {"box": ints, "target": texts, "hand": texts, "share": ints, "dealt_at": ints}
)
fixed = st.fixed_dictionaries(
    {"box": ints, "kind": texts, "hand": maybe_text, "amount": ints,
     "for_box": st.none() | ints, "target": texts}
)  # fmt: skip
meter = {"link": texts, "meter": texts, "reason": texts}
seed = {**meter, "seed": ints}
correct = {**meter, "correction": texts, "amount": ints, "reset": st.booleans(),
           "table": maybe_text, "round": maybe_text}  # fmt: skip
operator = {"by": texts}


def change(kind: str, fields: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"kind": st.just(kind), **fields})


ENTRIES = st.one_of(
    entry("bets", table=texts, round=texts, closed_at=ints, boxes=st.lists(posted_box),
          decisions=st.lists(decision), draws=st.none() | drawn),
    entry("outcome", table=texts, round=texts, boxes=st.lists(hand), dealer=st.none() | dealer,
          claims=st.lists(claim), fixed=st.lists(fixed)).flatmap(versioned),
    entry("void", table=texts, round=texts, reason=texts,
          boxes=st.none() | st.lists(ints)).flatmap(versioned),
    entry("finalize"),
    entry("expire", rounds=st.lists(st.lists(texts, min_size=2, max_size=2))),
    entry("seed", **operator, **seed).flatmap(versioned),
    entry("reset", **operator, **meter),
    entry("correct", **operator, **correct).flatmap(versioned),
    entry("propose", **operator, change=st.one_of(
        change("seed", seed).flatmap(versioned), change("reset", meter),
        change("correct", correct).flatmap(versioned))),
    entry("approve", **operator, id=texts),
    entry("reject", **operator, id=texts, reason=texts),
)  # fmt: skip


@settings(max_examples=500)
@given(ENTRIES)
def test_an_entry_decodes_and_encodes_back_to_the_same_dict_and_bytes(data: dict[str, Any]) -> None:
    typed = entry_from_dict(data)
    assert type(typed).kind == data["kind"]
    assert entry_dict(typed) == data
    assert entry_text(typed) == canonical_json(data)
    assert entry_text(typed) == json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )  # docs/journal.md, canonical encoding, in Python
    assert entry_from_dict(entry_dict(typed)) == typed


def test_a_string_the_fast_encoder_refuses_is_encoded_as_canonical_json_does() -> None:
    data = {"kind": "void", "now": 1, "table": "T01", "round": "R\ud800", "reason": "x",
            "boxes": None}  # fmt: skip
    assert entry_text(entry_from_dict(data)) == canonical_json(data)


def test_an_absent_version_stays_absent_and_a_version_stays() -> None:
    old = {"kind": "void", "now": 1, "table": "T", "round": "R", "reason": "x", "boxes": None}
    typed = entry_from_dict(old)
    assert isinstance(typed, VoidEntry)
    assert typed.version is UNSET and "version" not in entry_dict(typed)
    assert entry_dict(entry_from_dict({**old, "version": 1}))["version"] == 1


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.name)
def test_every_entry_of_a_kept_journal_round_trips_and_its_chain_recomputes(path: Path) -> None:
    head = "0" * 64
    for line in path.read_text().splitlines():
        row = json.loads(line)
        typed = entry_from_dict(json.loads(row["entry"]), f"seq {row['seq']}")
        text = entry_text(typed)
        assert text == row["entry"]
        head = hashlib.sha256((head + text).encode()).hexdigest()
        assert head == row["hash"]


def test_the_kept_journals_are_found() -> None:
    assert JOURNALS, "no tests/**/data/*.jsonl: the round trip above checked nothing"


BETS = {"kind": "bets", "now": 1, "table": "T01", "round": "R1", "closed_at": 0,
        "boxes": [{"box": 1, "ante": 10, "jackpot": 1, "jackpot_dealer": 0, "player": None}],
        "decisions": [{"box": 1, "status": "accepted", "wager": 1, "dealer_wager": 0,
                       "reason": None, "ante": 10, "player": None}], "draws": None}  # fmt: skip


def _with(path: tuple[str | int, ...], value: Any, data: Any = None) -> Any:
    data = json.loads(json.dumps(BETS if data is None else data))
    target = data
    for step in path[:-1]:
        target = target[step]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_with(("decisions", 0, "wager"), "1.00"),
         r"seq 7 \(bets\): Expected `int`, got `str` - at `\$.decisions\[0\].wager`"),
        (_with(("decisions", 0, "wager"), 1.5), r"seq 7 \(bets\): Expected `int`, got `float`"),
        (_with(("boxes", 0, "ante"), True),
         r"seq 7 \(bets\): Expected `int`, got `bool` - at `\$.boxes\[0\].ante`"),
        (_with(("table",), KeyError), r"seq 7 \(bets\): Object missing required field `table`"),
        (_with(("tips",), 5), r"seq 7 \(bets\): Object contains unknown field `tips`"),
        (_with(("kind",), "tip"), r"seq 7 \(tip\): Invalid value 'tip' - at `\$.kind`"),
        ({"kind": "void", "now": 1, "table": "T", "round": "R", "reason": "x", "boxes": None,
          "version": 4}, r"seq 7 \(void\): Expected `int` <= 3 - at `\$.version`"),
        ({"kind": "propose", "now": 1, "by": "sam", "change": {"kind": "seed", "link": "l",
          "meter": "m", "reason": "r"}},
         r"seq 7 \(propose\): change \(seed\): Object missing required field `seed`"),
        ({"kind": "propose", "now": 1, "by": "sam", "change": {"kind": "tip"}},
         r"seq 7 \(propose\): change: kind 'tip' is not seed, reset, correct, suspend, "
         r"resume, transfer or retire"),
        (["bets"], r"seq 7: Expected `object`, got `array`"),
    ],
)  # fmt: skip
def test_an_entry_docs_journal_does_not_specify_is_refused_naming_seq_kind_and_field(
    data: Any, message: str
) -> None:
    with pytest.raises(EntryError, match=message):
        entry_from_dict(data, "seq 7")


def test_a_typed_entry_gives_the_core_its_command() -> None:
    bets = entry_from_dict(BETS)
    assert isinstance(bets, BetsEntry)
    command = bets.command("stud")
    assert (command.table, command.link, command.closed_at, command.now) == ("T01", "stud", 0, 1)
    assert [(w.box, w.wager, w.dealer_wager) for w in command.wagers] == [(1, 1, 0)]
    assert FinalizeEntry(now=5).command().now == 5


def test_a_fixed_award_is_dated_by_the_hand_that_won_it() -> None:
    """4.7: an envy bonus by the hitting hand's dealt_at; a dealer-hand award by the
    dealer's; else the box's own; the entry's time when the hand has none."""
    outcome = entry_from_dict({
        "kind": "outcome", "now": 99, "table": "T", "round": "R", "version": 3,
        "boxes": [{"box": 1, "dealt_at": 10, "cards": [], "folded": False},
                  {"box": 2, "dealt_at": 20, "cards": [], "folded": False}],
        "dealer": {"cards": [], "dealt_at": None}, "claims": [],
        "fixed": [{"box": b, "kind": k, "hand": None, "amount": 1, "for_box": f, "target": t}
                  for b, k, f, t in ((1, "fixed", None, "player"), (1, "envy", 2, "player"),
                                     (2, "lucky_dealer", None, "dealer"),
                                     (3, "fixed", None, "player"))],
    })  # fmt: skip
    assert isinstance(outcome, OutcomeEntry)
    assert [f.dealt_at for f in outcome.command().fixed] == [10, 20, 99, 99]


def test_a_proposed_change_keeps_the_fields_its_kind_has_not() -> None:
    # A proposal journaled with a field its kind has not: replayed as its kind, kept whole.
    change = {"kind": "reset", "link": "l", "meter": "m", "reason": "r", "seed": 5}
    data = {"kind": "propose", "now": 1, "by": "sam", "change": change}
    entry = entry_from_dict(data)
    assert entry_dict(entry) == data
    assert isinstance(entry, ProposeEntry)
    assert entry.proposed() == ResetChange(link="l", meter="m", reason="r")
