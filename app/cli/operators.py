"""Operator commands of `jackpot`: meters, seeds, resets, corrections, changes, audit, awards.

Each command is one or a few calls of the HTTP API (docs/api.md "Operators") with the bearer
token of `--token` / `JACKPOT_TOKEN`, its answer printed as a table (app/cli/printing.py),
or as the server's JSON with `--json`. Money stays the server's decimal strings throughout:
answers are parsed with `parse_float=Decimal` and never turned into floats.
"""

from __future__ import annotations

import inspect
import os
import sys
import tomllib
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from app.cli.options import (
    ChangeId,
    End,
    FloorFile,
    Json,
    Limit,
    Link,
    Meter,
    Offset,
    OptionalReasonCode,
    Reason,
    ReasonCode,
    Start,
    Token,
    Url,
)
from app.cli.printing import cell, fields, out, show_table
from app.cli.program import new_app, run
from app.cli.server_api import Api, Failed, loads, session
from app.config.demo import DEMO_FLOOR

REPORT_PATH = "/v1/reports/reconciliation"

commands = new_app("jackpot operator commands")
Body = Callable[..., int]


def command(name: str, help: str) -> Callable[[Body], Body]:
    """An operator command on `commands`, with the options every one has (argparse's
    `parents`): `--url`, `--token`, `--json`. Its body takes an `Api` on the server (a
    `Failed` ends the command, app/cli/server_api.py), whether to print the server's JSON,
    then its own options."""

    def register(body: Body) -> Body:
        own = [*inspect.signature(body, eval_str=True).parameters.values()][2:]
        common = [
            inspect.Parameter(
                option, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind
            )
            for option, kind, default in (
                ("url", Url, None),
                ("token", Token, None),
                ("as_json", Json, False),
            )
        ]

        def in_session(url: str | None, token: str | None, as_json: bool, **options: Any) -> int:
            with session(url, token) as api:
                return body(api, as_json, **options)

        # Typer reads the options from the signature: the body's own, then the common ones.
        in_session.__signature__ = inspect.Signature([*own, *common])  # type: ignore[attr-defined]
        commands.command(name, help=help)(in_session)
        return body

    return register


# -- meters ----------------------------------------------------------------------------


@command("meters", help="meters of a link, or of every link of the floor file")
def meters(
    api: Api,
    as_json: bool,
    link: Annotated[str | None, typer.Argument(metavar="LINK")] = None,
    config: FloorFile = None,
) -> int:
    """Every meter of LINK (or of each link of the floor file): value, seed, reserve..."""
    raw: list[str] = []
    rows: list[list[Any]] = []
    notes: list[str] = []
    for link_id in [link] if link else floor_links(config):
        link_answer = loads(api.call("GET", f"/v1/links/{link_id}").text)
        for m in link_answer["meters"]:
            answer = api.call("GET", f"/v1/links/{link_id}/meters/{m['meter']}")
            raw.append(answer.text)
            v = loads(answer.text)
            pending, stale = v.get("pending_awards") or [], v.get("stale_rounds") or []
            rows.append(
                [
                    v["link"], v["meter"], link_answer.get("status"), v["value"], v["seed"],
                    v.get("next_seed"), v["reserve"], v["rate"], v["reserve_rate"],
                    v.get("ceiling"), len(pending), len(stale),
                ]
            )  # fmt: skip
            where = f"{v['link']}/{v['meter']}"
            notes += [f"{where} pending award: {a}" for a in pending]
            notes += [f"{where} stale round: {r}" for r in stale]
    if as_json:
        out("[" + ",".join(raw) + "]")  # the server's own text, one answer per meter
        return 0
    headers = ["LINK", "METER", "STATUS", "VALUE", "SEED", "NEXT SEED", "RESERVE", "RATE",
               "RESERVE RATE", "CEILING", "PENDING", "STALE"]  # fmt: skip
    show_table(headers, rows)
    if notes:
        out("\n" + "\n".join(notes))
    return 0


def floor_links(config: Path | None) -> list[str]:
    """The links of the floor file: `--config`, else JACKPOT_CONFIG, else the demo floor."""
    path = config or Path(os.environ.get("JACKPOT_CONFIG") or DEMO_FLOOR)
    try:
        floor = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise Failed(f"{path}: cannot read the floor file: {error}") from None
    links = [link["id"] for link in floor.get("links", []) if isinstance(link, dict)]
    if not links:
        raise Failed(f"{path}: the floor file lists no links")
    return links


# -- changes (supervisors) -------------------------------------------------------------


class CorrectionKind(StrEnum):
    adjust = "adjust"
    hand_paid = "hand_paid"
    void_round = "void_round"


@command("set-seed", help="change a meter's seed, from its next reset (supervisor)")
def set_seed(
    api: Api,
    as_json: bool,
    link: Link,
    meter: Meter,
    amount: Annotated[str, typer.Argument(metavar="AMOUNT", help='decimal, e.g. "15000.00"')],
    reason: Reason,
) -> int:
    body = {"seed": amount, "reason": reason}
    return change_answer(api.call("PUT", f"{meter_path(link, meter)}/seed", body=body), as_json)


@command("reset", help="return a meter to its seed now (supervisor)")
def reset(
    api: Api, as_json: bool, link: Link, meter: Meter, reason: Reason, reason_code: ReasonCode
) -> int:
    path = f"{meter_path(link, meter)}/reset"
    body = {"reason": reason, "reason_code": reason_code}
    return change_answer(api.call("POST", path, body=body), as_json)


@command("correct", help="an audited correction of a meter (supervisor)")
def correct(
    api: Api,
    as_json: bool,
    link: Link,
    meter: Meter,
    kind: Annotated[CorrectionKind, typer.Argument(metavar="KIND")],
    reason: Reason,
    amount: Annotated[
        str | None, typer.Option(help="adjust: signed amount; hand_paid: the amount paid")
    ] = None,
    table: Annotated[str | None, typer.Option(help="void_round: the table")] = None,
    round: Annotated[str | None, typer.Option(help="void_round: the round")] = None,
    no_reset: Annotated[
        bool, typer.Option("--no-reset", help="hand_paid: leave the meter as is")
    ] = False,
    reason_code: OptionalReasonCode = None,
) -> int:
    body: dict[str, Any] = {"kind": kind.value, "reason": reason}
    optional = (
        ("amount", amount),
        ("table", table),
        ("round", round),
        ("reason_code", reason_code),
    )
    body.update({k: v for k, v in optional if v is not None})
    if no_reset:
        body["reset"] = False
    path = f"{meter_path(link, meter)}/corrections"
    return change_answer(api.call("POST", path, body=body), as_json)


def meter_path(link: str, meter: str) -> str:
    return f"/v1/links/{link}/meters/{meter}"


def change_answer(answer: httpx.Response, as_json: bool) -> int:
    """A supervisor's change: applied (200), or under dual control a proposal (202)."""
    if answer.status_code == 202 and not as_json:
        change = loads(answer.text)["id"]
        out(
            f"change {change} awaits approval by a different supervisor "
            f"(jackpot approve {change}, or jackpot reject {change} --reason ...)"
        )
    return printed(answer, as_json, fields)


@command("approve", help="approve a proposed change (another supervisor)")
def approve(api: Api, as_json: bool, change: ChangeId) -> int:
    return printed(api.call("POST", f"/v1/changes/{change}/approve"), as_json, fields)


@command("reject", help="reject a proposed change (another supervisor)")
def reject(api: Api, as_json: bool, change: ChangeId, reason: Reason) -> int:
    answer = api.call("POST", f"/v1/changes/{change}/reject", body={"reason": reason})
    return printed(answer, as_json, fields)


@command("changes", help="changes proposed under dual control")
def changes(api: Api, as_json: bool) -> int:
    return printed(api.call("GET", "/v1/changes"), as_json, changes_table)


def changes_table(data: Any) -> None:
    rows = []
    for c in data["changes"]:
        change = dict(c["change"])
        what = {k: change.pop(k, None) for k in ("kind", "link", "meter", "reason")}
        rows.append(
            [
                c["id"], c["state"], what["kind"], what["link"], what["meter"], change,
                c.get("proposed_by"), c.get("proposed_at"), c.get("decided_by"), what["reason"],
            ]
        )  # fmt: skip
    headers = ["ID", "STATE", "KIND", "LINK", "METER", "CHANGE", "PROPOSED BY", "PROPOSED AT",
               "DECIDED BY", "REASON"]  # fmt: skip
    show_table(headers, rows)


def printed(answer: httpx.Response, as_json: bool, show: Callable[[Any], None]) -> int:
    """The server's own text with `--json`, else `show` of the parsed answer."""
    if as_json:
        out(answer.text)
    else:
        show(loads(answer.text))
    return 0


# -- pages of the audit log and the awards ----------------------------------------------


@command("audit", help="the audit log of operator actions")
def audit(
    api: Api,
    as_json: bool,
    start: Start = None,
    end: End = None,
    limit: Limit = None,
    offset: Offset = None,
) -> int:
    params = {"from": start, "to": end, "limit": limit, "offset": offset}
    headers = ["ID", "AT", "WHO", "ACTION", "LINK", "METER", "BEFORE", "AFTER", "AMOUNT",
               "ROUND", "REASON", "APPROVED BY"]  # fmt: skip

    def row(a: Any) -> list[Any]:
        return [
            a["id"], a["at"], a["who"], a["action"], a.get("link"), a.get("meter"),
            a.get("before"), a.get("after"), a.get("amount"), a.get("round"), a.get("reason"),
            a.get("approved_by"),
        ]  # fmt: skip

    answer = api.call("GET", "/v1/audit", params=params)
    return printed(answer, as_json, lambda data: page(data, "audit", "entries", headers, row))


@command("awards", help="every award (meter, fixed, envy, ...), latest dealt first")
def awards(
    api: Api,
    as_json: bool,
    link: Annotated[str | None, typer.Option()] = None,
    meter: Annotated[str | None, typer.Option(help="that meter's awards only (its hits)")] = None,
    table: Annotated[str | None, typer.Option()] = None,
    kind: Annotated[
        str | None,
        typer.Option(help="meter, fixed, envy, magic_card, lucky_player, lucky_dealer, river"),
    ] = None,
    start: Start = None,
    end: End = None,
    limit: Limit = None,
    offset: Offset = None,
) -> int:
    params: dict[str, str | int | None] = {"link": link, "from": start, "to": end}
    params |= {"kind": kind, "meter": meter, "table": table, "limit": limit, "offset": offset}
    headers = ["ID", "LINK", "TABLE", "ROUND", "BOX", "KIND", "HAND", "METER", "SHARE", "STATE",
               "AMOUNT", "DEALT AT", "FINALIZED AT"]  # fmt: skip

    def row(a: Any) -> list[Any]:
        return [
            a["id"], a["link"], a["table"], a["round"], a["box"], a.get("kind"), a.get("hand"),
            a.get("meter"), a.get("share"), a["state"], a.get("amount"), a.get("dealt_at"),
            a.get("finalized_at"),
        ]  # fmt: skip

    answer = api.call("GET", "/v1/awards", params=params)
    return printed(answer, as_json, lambda data: page(data, "awards", "awards", headers, row))


def page(
    data: Any, key: str, noun: str, headers: list[str], row: Callable[[Any], list[Any]]
) -> None:
    """A page of a long list: its table, then how many of how many."""
    rows = [row(item) for item in data[key]]
    show_table(headers, rows)
    out(f"({len(rows)} of {data.get('total', len(rows))} {noun})")


# The reconciliation's flows, in the order they add up: opening + flows = closing.
REPORT_FIELDS = (
    "opening_value", "opening_reserve", "contributions_meter", "contributions_reserve",
    "reversed_meter", "reversed_reserve", "awards", "awards_withheld", "awards_returned",
    "seed_from_reserve", "seed_from_house", "house_cover", "reset_to_reserve", "corrections",
    "closing_value", "closing_reserve", "balanced",
)  # fmt: skip


@command("report", help="the reconciliation: opening + flows = closing, per meter (exit 1 if not)")
def report(
    api: Api,
    as_json: bool,
    start: Start = None,
    end: End = None,
    csv: Annotated[bool, typer.Option("--csv", help="print the server's CSV as it is")] = False,
) -> int:
    """The reconciliation, one column per meter (a floor has a few meters, many flows)."""
    params = {"from": start, "to": end, "format": "csv" if csv else "json"}
    missing = (
        f"this server has no reconciliation report yet ({REPORT_PATH} answered 404 Not Found);"
        " it needs a newer jackpot server"
    )
    answer = api.call("GET", REPORT_PATH, params=params, missing=missing)
    if csv or as_json:
        sys.stdout.write(answer.text if answer.text.endswith("\n") else answer.text + "\n")
        return 0
    data = loads(answer.text)
    journal = data.get("journal") or {}
    out(
        f"reconciliation from {cell(data.get('from'))} to {cell(data.get('to'))}"
        f"  (journal seq {cell(journal.get('seq'))}, head {cell(journal.get('head'))})"
    )
    found = data.get("meters") or []
    keys = [*REPORT_FIELDS]
    keys += [k for m in found for k in m if k not in keys and k not in ("link", "meter")]
    headers = ["", *(f"{m.get('link')}/{m.get('meter')}" for m in found)]
    show_table(headers, [[k, *(m.get(k) for m in found)] for k in keys])
    unbalanced = [f"{m.get('link')}/{m.get('meter')}" for m in found if m.get("balanced") is False]
    if unbalanced:
        out(f"NOT BALANCED: {', '.join(unbalanced)}")
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The operator commands alone: `python -m app.cli.operators meters`."""
    return run(commands, argv)


if __name__ == "__main__":
    raise SystemExit(main())
