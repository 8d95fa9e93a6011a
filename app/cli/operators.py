"""Operator commands of `jackpot`: meters, seeds, resets, corrections, changes, audit, awards.

Each command is one or a few calls of the HTTP API (API.md, Operators) with the bearer
token of `--token` / `JACKPOT_TOKEN`, its answer printed as aligned text columns, or as
the server's JSON with `--json`. Money stays the server's decimal strings throughout:
answers are parsed with `parse_float=Decimal` and never turned into floats.
"""

from __future__ import annotations

import argparse
import os
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from app.cli.printing import cell, fields, out, table
from app.cli.server_api import Api, Failed, loads
from app.config.demo import DEMO_FLOOR

DEFAULT_URL = "http://127.0.0.1:8000"
REPORT_PATH = "/v1/reports/reconciliation"


# -- commands --------------------------------------------------------------------------


def meters(api: Api, args: argparse.Namespace) -> int:
    """Every meter of LINK (or of each link of the floor file): value, seed, reserve..."""
    links = [args.link] if args.link else floor_links(args.config)
    raw: list[str] = []
    rows: list[list[Any]] = []
    notes: list[str] = []
    for link_id in links:
        link = loads(api.call("GET", f"/v1/links/{link_id}").text)
        for m in link["meters"]:
            answer = api.call("GET", f"/v1/links/{link_id}/meters/{m['meter']}")
            raw.append(answer.text)
            v = loads(answer.text)
            pending, stale = v.get("pending_awards") or [], v.get("stale_rounds") or []
            rows.append(
                [
                    v["link"], v["meter"], link.get("status"), v["value"], v["seed"],
                    v.get("next_seed"), v["reserve"], v["rate"], v["reserve_rate"],
                    v.get("ceiling"), len(pending), len(stale),
                ]
            )  # fmt: skip
            where = f"{v['link']}/{v['meter']}"
            notes += [f"{where} pending award: {a}" for a in pending]
            notes += [f"{where} stale round: {r}" for r in stale]
    if args.json:
        out("[" + ",".join(raw) + "]")  # the server's own text, one answer per meter
        return 0
    headers = ["LINK", "METER", "STATUS", "VALUE", "SEED", "NEXT SEED", "RESERVE", "RATE",
               "RESERVE RATE", "CEILING", "PENDING", "STALE"]  # fmt: skip
    out(table(headers, rows))
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


def change_answer(args: argparse.Namespace, answer: httpx.Response) -> int:
    """A supervisor's change: applied (200), or under dual control a proposal (202)."""
    if args.json:
        out(answer.text)
        return 0
    data = loads(answer.text)
    if answer.status_code == 202:
        out(
            f"change {data['id']} awaits approval by a different supervisor "
            f"(jackpot approve {data['id']}, or jackpot reject {data['id']} --reason ...)"
        )
    out(fields(data))
    return 0


def set_seed(api: Api, args: argparse.Namespace) -> int:
    body = {"seed": args.amount, "reason": args.reason}
    answer = api.call("PUT", f"{meter_path(args)}/seed", body=body)
    return change_answer(args, answer)


def reset(api: Api, args: argparse.Namespace) -> int:
    answer = api.call("POST", f"{meter_path(args)}/reset", body={"reason": args.reason})
    return change_answer(args, answer)


def correct(api: Api, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"kind": args.kind, "reason": args.reason}
    optional = (("amount", args.amount), ("table", args.table), ("round", args.round))
    body.update({k: v for k, v in optional if v is not None})
    if args.no_reset:
        body["reset"] = False
    answer = api.call("POST", f"{meter_path(args)}/corrections", body=body)
    return change_answer(args, answer)


def meter_path(args: argparse.Namespace) -> str:
    return f"/v1/links/{args.link}/meters/{args.meter}"


def approve(api: Api, args: argparse.Namespace) -> int:
    answer = api.call("POST", f"/v1/changes/{args.change}/approve")
    out(answer.text if args.json else fields(loads(answer.text)))
    return 0


def reject(api: Api, args: argparse.Namespace) -> int:
    answer = api.call("POST", f"/v1/changes/{args.change}/reject", body={"reason": args.reason})
    out(answer.text if args.json else fields(loads(answer.text)))
    return 0


def changes(api: Api, args: argparse.Namespace) -> int:
    answer = api.call("GET", "/v1/changes")
    if args.json:
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
    out(table(headers, rows))
    return 0


def audit(api: Api, args: argparse.Namespace) -> int:
    params = {"from": args.start, "to": args.end, "limit": args.limit, "offset": args.offset}
    answer = api.call("GET", "/v1/audit", params=params)
    if args.json:
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
    out(table(headers, rows))
    out(f"({len(rows)} of {data.get('total', len(rows))} entries)")
    return 0


def awards(api: Api, args: argparse.Namespace) -> int:
    params = {"link": args.link, "from": args.start, "to": args.end}
    params |= {"kind": args.kind, "meter": args.meter, "table": args.table}
    params |= {"limit": args.limit, "offset": args.offset}
    answer = api.call("GET", "/v1/awards", params=params)
    if args.json:
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
    out(table(headers, rows))
    out(f"({len(rows)} of {data.get('total', len(rows))} awards)")
    return 0


# The reconciliation's flows, in the order they add up: opening + flows = closing.
REPORT_FIELDS = (
    "opening_value", "opening_reserve", "contributions_meter", "contributions_reserve",
    "reversed_meter", "reversed_reserve", "awards", "awards_withheld", "awards_returned",
    "seed_from_reserve", "seed_from_house", "house_cover", "reset_to_reserve", "corrections",
    "closing_value", "closing_reserve", "balanced",
)  # fmt: skip


def report(api: Api, args: argparse.Namespace) -> int:
    """The reconciliation, one column per meter (a floor has a few meters, many flows)."""
    params = {"from": args.start, "to": args.end, "format": "csv" if args.csv else "json"}
    missing = (
        f"this server has no reconciliation report yet ({REPORT_PATH} answered 404 Not Found);"
        " it needs a newer jackpot server"
    )
    answer = api.call("GET", REPORT_PATH, params=params, missing=missing)
    if args.csv or args.json:
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
    out(table(headers, [[k, *(m.get(k) for m in found)] for k in keys]))
    unbalanced = [f"{m.get('link')}/{m.get('meter')}" for m in found if m.get("balanced") is False]
    if unbalanced:
        out(f"NOT BALANCED: {', '.join(unbalanced)}")
        return 1
    return 0


# -- the command line ------------------------------------------------------------------

Command = Callable[[Api, argparse.Namespace], int]
COMMANDS: dict[str, Command] = {
    "meters": meters,
    "set-seed": set_seed,
    "reset": reset,
    "correct": correct,
    "approve": approve,
    "reject": reject,
    "changes": changes,
    "audit": audit,
    "awards": awards,
    "report": report,
}


def add_parsers(subparsers: Any) -> None:
    """The operator subcommands, on the `jackpot` command's subparsers."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help=f"server (default: JACKPOT_URL, else {DEFAULT_URL})")
    common.add_argument("--token", help="bearer token (default: JACKPOT_TOKEN)")
    common.add_argument("--json", action="store_true", help="print the server's JSON")

    def add(name: str, help: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(name, help=help, parents=[common])
        return parser

    def window(p: argparse.ArgumentParser) -> None:
        p.add_argument("--from", dest="start", metavar="TIME", help="RFC 3339, inclusive")
        p.add_argument("--to", dest="end", metavar="TIME", help="RFC 3339, exclusive")

    def page(p: argparse.ArgumentParser) -> None:
        p.add_argument("--limit", type=int, help="at most this many rows (server default 100)")
        p.add_argument("--offset", type=int, help="skip this many rows first")

    p = add("meters", "meters of a link, or of every link of the floor file")
    p.add_argument("link", nargs="?", metavar="LINK")
    p.add_argument(
        "--config", type=Path, help="floor file (default: JACKPOT_CONFIG, else the demo floor)"
    )
    p = add("set-seed", "change a meter's seed, from its next reset (supervisor)")
    p.add_argument("link", metavar="LINK")
    p.add_argument("meter", metavar="METER")
    p.add_argument("amount", metavar="AMOUNT", help='decimal, e.g. "15000.00"')
    p.add_argument("--reason", required=True)
    p = add("reset", "return a meter to its seed now (supervisor)")
    p.add_argument("link", metavar="LINK")
    p.add_argument("meter", metavar="METER")
    p.add_argument("--reason", required=True)
    p = add("correct", "an audited correction of a meter (supervisor)")
    p.add_argument("link", metavar="LINK")
    p.add_argument("meter", metavar="METER")
    p.add_argument("kind", choices=("adjust", "hand_paid", "void_round"))
    p.add_argument("--amount", help="adjust: signed amount; hand_paid: the amount paid")
    p.add_argument("--table", help="void_round: the table")
    p.add_argument("--round", help="void_round: the round")
    p.add_argument("--no-reset", action="store_true", help="hand_paid: leave the meter as is")
    p.add_argument("--reason", required=True)
    p = add("approve", "approve a proposed change (another supervisor)")
    p.add_argument("change", metavar="CHANGE_ID")
    p = add("reject", "reject a proposed change (another supervisor)")
    p.add_argument("change", metavar="CHANGE_ID")
    p.add_argument("--reason", required=True)
    add("changes", "changes proposed under dual control")
    p = add("audit", "the audit log of operator actions")
    window(p)
    page(p)
    p = add("awards", "every award (meter, fixed, envy, ...), latest dealt first")
    p.add_argument("--link")
    p.add_argument("--meter", help="that meter's awards only (its hits)")
    p.add_argument("--table")
    p.add_argument(
        "--kind", help="meter, fixed, envy, magic_card, lucky_player, lucky_dealer, river"
    )
    window(p)
    page(p)
    p = add("report", "the reconciliation: opening + flows = closing, per meter (exit 1 if not)")
    window(p)
    p.add_argument("--csv", action="store_true", help="print the server's CSV as it is")


def run(args: argparse.Namespace) -> int | None:
    """Run an operator command; None when `args.command` is not one of them."""
    command = COMMANDS.get(getattr(args, "command", None) or "")
    if command is None:
        return None
    url = args.url or os.environ.get("JACKPOT_URL") or DEFAULT_URL
    api = Api(url.rstrip("/"), args.token or os.environ.get("JACKPOT_TOKEN"))
    try:
        return command(api, args)
    except Failed as error:
        print(error.message, file=sys.stderr, flush=True)
        return error.code
    finally:
        api.close()


def main(argv: list[str] | None = None) -> int:
    """The operator commands alone: `python -m app.cli.operators meters`."""
    parser = argparse.ArgumentParser(prog="jackpot", description="jackpot operator commands")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    code = run(parser.parse_args(argv))
    return 2 if code is None else code


if __name__ == "__main__":
    sys.exit(main())
