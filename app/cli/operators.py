"""Operator commands of `jackpot`: meters, seeds, resets, corrections, changes, audit, awards.

Each command is one or a few calls of the HTTP API (API.md, Operators) with the bearer
token of `--token` / `JACKPOT_TOKEN`, its answer printed as a table (app/cli/printing.py),
or as the server's JSON with `--json`. Money stays the server's decimal strings throughout:
answers are parsed with `parse_float=Decimal` and never turned into floats.
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Sequence
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
    Reason,
    Start,
    Token,
    Url,
)
from app.cli.printing import cell, fields, out, show_table
from app.cli.program import new_app, run
from app.cli.server_api import Failed, loads, session
from app.config.demo import DEMO_FLOOR

REPORT_PATH = "/v1/reports/reconciliation"

commands = new_app("jackpot operator commands")


# -- meters ----------------------------------------------------------------------------


@commands.command(help="meters of a link, or of every link of the floor file")
def meters(
    link: Annotated[str | None, typer.Argument(metavar="LINK")] = None,
    config: FloorFile = None,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    """Every meter of LINK (or of each link of the floor file): value, seed, reserve..."""
    raw: list[str] = []
    rows: list[list[Any]] = []
    notes: list[str] = []
    with session(url, token) as api:
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


@commands.command("set-seed", help="change a meter's seed, from its next reset (supervisor)")
def set_seed(
    link: Link,
    meter: Meter,
    amount: Annotated[str, typer.Argument(metavar="AMOUNT", help='decimal, e.g. "15000.00"')],
    reason: Reason,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    body = {"seed": amount, "reason": reason}
    return apply_change(url, token, as_json, "PUT", f"{meter_path(link, meter)}/seed", body)


@commands.command(help="return a meter to its seed now (supervisor)")
def reset(
    link: Link,
    meter: Meter,
    reason: Reason,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    path = f"{meter_path(link, meter)}/reset"
    return apply_change(url, token, as_json, "POST", path, {"reason": reason})


@commands.command(help="an audited correction of a meter (supervisor)")
def correct(
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
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    body: dict[str, Any] = {"kind": kind.value, "reason": reason}
    optional = (("amount", amount), ("table", table), ("round", round))
    body.update({k: v for k, v in optional if v is not None})
    if no_reset:
        body["reset"] = False
    path = f"{meter_path(link, meter)}/corrections"
    return apply_change(url, token, as_json, "POST", path, body)


def meter_path(link: str, meter: str) -> str:
    return f"/v1/links/{link}/meters/{meter}"


def apply_change(
    url: str | None, token: str | None, as_json: bool, method: str, path: str, body: Any
) -> int:
    """A supervisor's change: applied (200), or under dual control a proposal (202)."""
    with session(url, token) as api:
        answer = api.call(method, path, body=body)
    if as_json:
        out(answer.text)
        return 0
    data = loads(answer.text)
    if answer.status_code == 202:
        out(
            f"change {data['id']} awaits approval by a different supervisor "
            f"(jackpot approve {data['id']}, or jackpot reject {data['id']} --reason ...)"
        )
    fields(data)
    return 0


@commands.command(help="approve a proposed change (another supervisor)")
def approve(change: ChangeId, url: Url = None, token: Token = None, as_json: Json = False) -> int:
    with session(url, token) as api:
        answer = api.call("POST", f"/v1/changes/{change}/approve")
    return decision(answer, as_json)


@commands.command(help="reject a proposed change (another supervisor)")
def reject(
    change: ChangeId, reason: Reason, url: Url = None, token: Token = None, as_json: Json = False
) -> int:
    with session(url, token) as api:
        answer = api.call("POST", f"/v1/changes/{change}/reject", body={"reason": reason})
    return decision(answer, as_json)


def decision(answer: httpx.Response, as_json: bool) -> int:
    if as_json:
        out(answer.text)
    else:
        fields(loads(answer.text))
    return 0


@commands.command(help="changes proposed under dual control")
def changes(url: Url = None, token: Token = None, as_json: Json = False) -> int:
    with session(url, token) as api:
        answer = api.call("GET", "/v1/changes")
    if as_json:
        out(answer.text)
        return 0
    rows = []
    for c in loads(answer.text)["changes"]:
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
    return 0


@commands.command(help="the audit log of operator actions")
def audit(
    start: Start = None,
    end: End = None,
    limit: Limit = None,
    offset: Offset = None,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    params = {"from": start, "to": end, "limit": limit, "offset": offset}
    with session(url, token) as api:
        answer = api.call("GET", "/v1/audit", params=params)
    if as_json:
        out(answer.text)
        return 0
    data = loads(answer.text)
    rows = [
        [
            a["id"], a["at"], a["who"], a["action"], a.get("link"), a.get("meter"),
            a.get("before"), a.get("after"), a.get("amount"), a.get("round"), a.get("reason"),
            a.get("approved_by"),
        ]
        for a in data["audit"]
    ]  # fmt: skip
    headers = ["ID", "AT", "WHO", "ACTION", "LINK", "METER", "BEFORE", "AFTER", "AMOUNT",
               "ROUND", "REASON", "APPROVED BY"]  # fmt: skip
    show_table(headers, rows)
    out(f"({len(rows)} of {data.get('total', len(rows))} entries)")
    return 0


@commands.command(help="every award (meter, fixed, envy, ...), latest dealt first")
def awards(
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
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    params: dict[str, str | int | None] = {"link": link, "from": start, "to": end}
    params |= {"kind": kind, "meter": meter, "table": table, "limit": limit, "offset": offset}
    with session(url, token) as api:
        answer = api.call("GET", "/v1/awards", params=params)
    if as_json:
        out(answer.text)
        return 0
    data = loads(answer.text)
    rows = [
        [
            a["id"], a["link"], a["table"], a["round"], a["box"], a.get("kind"), a.get("hand"),
            a.get("meter"), a.get("share"), a["state"], a.get("amount"), a.get("dealt_at"),
            a.get("finalized_at"),
        ]
        for a in data["awards"]
    ]  # fmt: skip
    headers = ["ID", "LINK", "TABLE", "ROUND", "BOX", "KIND", "HAND", "METER", "SHARE", "STATE",
               "AMOUNT", "DEALT AT", "FINALIZED AT"]  # fmt: skip
    show_table(headers, rows)
    out(f"({len(rows)} of {data.get('total', len(rows))} awards)")
    return 0


# The reconciliation's flows, in the order they add up: opening + flows = closing.
REPORT_FIELDS = (
    "opening_value", "opening_reserve", "contributions_meter", "contributions_reserve",
    "reversed_meter", "reversed_reserve", "awards", "awards_withheld", "awards_returned",
    "seed_from_reserve", "seed_from_house", "house_cover", "reset_to_reserve", "corrections",
    "closing_value", "closing_reserve", "balanced",
)  # fmt: skip


@commands.command(help="the reconciliation: opening + flows = closing, per meter (exit 1 if not)")
def report(
    start: Start = None,
    end: End = None,
    csv: Annotated[bool, typer.Option("--csv", help="print the server's CSV as it is")] = False,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    """The reconciliation, one column per meter (a floor has a few meters, many flows)."""
    params = {"from": start, "to": end, "format": "csv" if csv else "json"}
    missing = (
        f"this server has no reconciliation report yet ({REPORT_PATH} answered 404 Not Found);"
        " it needs a newer jackpot server"
    )
    with session(url, token) as api:
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
