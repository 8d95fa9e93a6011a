"""The floor file: the demo loads; every problem is reported with where, what and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.api.auth import token_hash
from app.config.floor_file import (
    FloorError,
    FloorFile,
    OperatorRole,
    load_floor,
    parse_floor,
)
from jackpot.money import Money, Rate
from tables.games import GameId
from tests.support import DEMO, H1, H2, H3, HEADER, table


def problems(text: str) -> list[str]:
    with pytest.raises(FloorError) as caught:
        parse_floor(text)
    assert str(caught.value).splitlines()[1:] == list(caught.value.problems)
    return list(caught.value.problems)


def test_the_demo_floor_loads() -> None:
    floor = load_floor(DEMO)
    assert floor.currency == "SGD"
    assert (floor.hold_ms, floor.round_timeout_ms, floor.max_clock_skew_ms) == (2000, 180000, 2000)
    assert [t.id for t in floor.tables] == ["T01", "T02", "T03", "T04", "T05", "T06"]
    assert [t.game for t in floor.tables] == [
        GameId.casino_stud,
        GameId.multi_link_casino_stud,
        GameId.three_card_poker,
        GameId.singapore_stud,
        GameId.western_stud,
        GameId.multi_link_casino_stud,
    ]
    stud = floor.link_configs()[0]
    assert stud.meters[0].seed == Money(10_000_000_000)
    assert (stud.meters[0].rate, stud.meters[0].reserve_rate) == (Rate(2500), Rate(500))
    assert stud.meters[0].ceiling == Money(2_000_000_000_000)
    assert floor.link_configs()[1].meters[0].ceiling is None
    t05 = floor.table("T05")
    assert t05 is not None and t05.link is None and t05.jackpot_wager is None
    # The tiered link: two levels paid by hands, and a must-hit-by level in [20.00, 40.00).
    tiers = floor.link_configs()[2]
    assert [m.id for m in tiers.meters] == ["major", "minor", "mini"]
    assert [m.must_hit_by for m in tiers.meters] == [None, None, Money(40_000_000)]
    assert tiers.meters[2].seed == Money(20_000_000) and tiers.meters[2].must_hit_from is None
    t06 = floor.table("T06")
    assert t06 is not None and t06.link == "tiers"
    assert t06.pay_table == {"royal_flush": "major:1.00", "straight_flush": "minor:1.00"}
    assert floor.timing().hold_ms == 2000


def test_a_link_and_a_meter_without_a_name_are_named_by_their_ids() -> None:
    floor = parse_floor(HEADER + table("T01", token=H1))
    (stud,) = floor.link_configs()
    assert (stud.name, stud.meters[0].name) == ("stud", "major")


def test_the_demo_tokens_in_the_comment_match_the_hashes() -> None:
    floor = load_floor(DEMO)
    for n, t in enumerate(floor.tables, start=1):
        assert t.token_sha256 == token_hash(f"demo-table-T0{n}")
    assert [(o.name, o.role, o.token_sha256) for o in floor.operators] == [
        ("olivia", OperatorRole.operator, token_hash("demo-operator")),
        ("sam", OperatorRole.supervisor, token_hash("demo-supervisor")),
        ("sue", OperatorRole.supervisor, token_hash("demo-supervisor-2")),
    ]


def test_defaults_and_a_floor_without_tables_or_operators() -> None:
    floor = parse_floor('currency = "EUR"')
    assert floor == FloorFile(currency="EUR")
    assert (floor.hold_ms, floor.round_timeout_ms, floor.max_clock_skew_ms) == (2000, 180000, 2000)
    assert floor.dual_control is False


def test_money_as_a_toml_number_is_refused_naming_table_and_field() -> None:
    text = (
        HEADER
        + table("T01", token=H1)
        + table("T02", token=H2)
        + table("T03", token=H3, jackpot_wager="1.00")
    )
    assert problems(text) == [
        'tables[2] (T03).jackpot_wager: must be a decimal string such as "1.00"'
    ]


@pytest.mark.parametrize("value", ["10000", "10000.5", "true", "[1]"])
def test_a_meter_seed_that_is_not_a_string_is_refused(value: str) -> None:
    text = HEADER.replace('seed = "10000.00"', f"seed = {value}")
    assert problems(text) == [
        'links[0] (stud).meters[0] (major).seed: must be a decimal string such as "1.00"'
    ]


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("jackpot_wager", '"1.005"', "'1.005' is not an amount"),
        ("jackpot_wager", '"-1"', "'-1' is not an amount"),
        ("jackpot_wager", '"0"', "must be more than 0"),
        ("boxes", "13", "less than or equal to 12"),
        ("boxes", "0", "greater than or equal to 1"),
        ("boxes", '"7"', "valid integer"),
        ("game", '"blackjack"', "'casino_stud'"),
        ("link", '"tcp"', "no link 'tcp' is declared (links: stud)"),
        ("link", "-", "required for casino_stud tables"),
        ("jackpot_wager", "-", "required for casino_stud tables"),
        ("fold_keeps_jackpot", "true", "only for singapore_stud tables"),
        ("lucky_dealer_odds", "10", "only for singapore_stud tables"),
        ("colour", '"red"', "unknown field"),
        ("id", '"T 01"', "letters, digits"),
        ("pay_table", '{flush = "150.00", magic = "5"}', "has no pay-table row 'magic'"),
        ("pay_table", "{flush = 150}", "Input should be a valid string"),
    ],
)
def test_each_table_problem_names_table_field_and_reason(field: str, value: str, why: str) -> None:
    text = HEADER + table("T01", token=H1) + table("T02", token=H2, **{field: value})
    [problem] = problems(text)
    where, _, message = problem.partition(": ")
    assert where.startswith("tables[1] (")
    assert where.split(").", 1)[1].startswith(field)
    assert why in message


def test_token_hash_must_be_64_lower_case_hex() -> None:
    text = HEADER + table("T01", token=H1.upper())
    assert problems(text) == [
        "tables[0] (T01).token_sha256: must be the sha256 of the token: 64 lower-case hex digits"
    ]


def test_every_problem_is_listed_not_just_the_first() -> None:
    text = (
        'currency = "sgd"\nhold_ms = 1.5\n'
        + HEADER.replace('currency = "SGD"', "")
        .replace('rate = "0.25"', 'rate = "0.80"')
        .replace('reserve_rate = "0.05"', 'reserve_rate = "0.30"\n  ceiling = "500.00"')
        + table("T01", token=H1, boxes="20")
        + table("T01", token=H1, game='"western_stud"', jackpot_wager="-")
        + f'\n[[operators]]\nname = "sam"\nrole = "boss"\ntoken_sha256 = "{H2}"\n'
        + f'\n[[operators]]\nname = "sam"\nrole = "supervisor"\ntoken_sha256 = "{H3}"\n'
    )
    assert problems(text) == [
        'currency: must be an ISO 4217 code of three upper-case letters, such as "SGD"',
        "hold_ms: Input should be a valid integer",
        "links[0] (stud).meters[0] (major).ceiling: is below the seed",
        "links[0] (stud).meters[0] (major).reserve_rate: rate + reserve_rate is more than 1",
        "tables[0] (T01).boxes: Input should be less than or equal to 12",
        "tables[1] (T01).id: duplicate table id 'T01' (also at [0])",
        "tables[1] (T01).link: western_stud tables have no link (no meter)",
        "tables[1] (T01).token_sha256: same token as tables[0] (T01)",
        "operators[0] (sam).role: Input should be 'operator' or 'supervisor'",
        "operators[1] (sam).name: duplicate operator name 'sam' (also at [0])",
    ]


def test_duplicate_link_and_meter_ids_and_a_token_shared_with_an_operator() -> None:
    text = (
        HEADER
        + '  [[links.meters]]\n  id = "major"\n  seed = "1.00"\n  rate = "0"\n'
        + '  reserve_rate = "0"\n'
        + '[[links]]\nid = "stud"\n  [[links.meters]]\n  id = "minor"\n  seed = "1.00"\n'
        + '  rate = "0.01"\n  reserve_rate = "0"\n'
        + table("T01", token=H1)
        + f'\n[[operators]]\nname = "olivia"\nrole = "operator"\ntoken_sha256 = "{H1}"\n'
    )
    assert problems(text) == [
        "links[0] (stud).meters[1] (major).id: duplicate meter id 'major' (also at [0])",
        "links[1] (stud).id: duplicate link id 'stud' (also at [0])",
        "operators[0] (olivia).token_sha256: same token as tables[0] (T01)",
    ]


def test_a_link_needs_a_meter_and_singapore_options_are_checked() -> None:
    text = (
        'currency = "SGD"\n[[links]]\nid = "empty"\nmeters = []\n'
        + HEADER.replace('currency = "SGD"', "")
        + table(
            "T04",
            token=H1,
            game='"singapore_stud"',
            lucky_dealer_odds="0",
            fold_keeps_jackpot='"yes"',
        )
    )
    assert problems(text) == [
        "links[0] (empty).meters: Tuple should have at least 1 item after validation, not 0",
        "tables[0] (T04).fold_keeps_jackpot: Input should be a valid boolean",
        "tables[0] (T04).lucky_dealer_odds: Input should be greater than or equal to 1",
    ]


def test_dual_control_needs_two_supervisors() -> None:
    text = f'currency = "SGD"\ndual_control = true\n[[operators]]\nname = "sam"\n' \
        f'role = "supervisor"\ntoken_sha256 = "{H1}"\n'  # fmt: skip
    assert problems(text) == ["dual_control: needs at least two operators with role supervisor"]


def test_not_toml_and_missing_file(tmp_path: Path) -> None:
    assert problems('currency = "SGD"\n[[tables]\n')[0].startswith("not valid TOML:")
    with pytest.raises(FloorError) as caught:
        load_floor(tmp_path / "nope.toml")
    assert caught.value.problems[0].startswith("cannot read the file:")
    assert str(tmp_path / "nope.toml") in str(caught.value)


def test_the_models_hold_exact_ints() -> None:
    floor = load_floor(DEMO)
    t01 = floor.tables[0]
    assert t01.jackpot_wager == Money(1_000_000)
    assert isinstance(t01.jackpot_wager, int)
    with pytest.raises(ValueError):
        t01.boxes = 3  # type: ignore[misc]  # frozen
