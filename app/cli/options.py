"""Options that several `jackpot` commands share, each spelled once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jackpot.reduction_reasons import REASON_CODES

DEFAULT_URL = "http://127.0.0.1:8000"

FloorFile = Annotated[
    Path | None,
    typer.Option("--config", help="floor file (default: JACKPOT_CONFIG, else the demo floor)"),
]
DataDir = Annotated[
    Path | None,
    typer.Option(help="embedded PostgreSQL data (default ./.jackpot)", show_default=False),
]
DatabaseUrl = Annotated[str | None, typer.Option(help="default: DATABASE_URL")]

# The operators' commands: the server, the bearer token, the answer as it came.
Url = Annotated[
    str | None,
    typer.Option(envvar="JACKPOT_URL", help=f"server (default: JACKPOT_URL, else {DEFAULT_URL})"),
]
Token = Annotated[
    str | None, typer.Option(envvar="JACKPOT_TOKEN", help="bearer token (default: JACKPOT_TOKEN)")
]
Json = Annotated[bool, typer.Option("--json", help="print the server's JSON")]
Start = Annotated[str | None, typer.Option("--from", metavar="TIME", help="RFC 3339, inclusive")]
End = Annotated[str | None, typer.Option("--to", metavar="TIME", help="RFC 3339, exclusive")]
Limit = Annotated[int | None, typer.Option(help="at most this many rows (server default 100)")]
Offset = Annotated[int | None, typer.Option(help="skip this many rows first")]
Reason = Annotated[str, typer.Option()]
_CODES = ", ".join(REASON_CODES)
ReasonCode = Annotated[str, typer.Option(help=f"the listed reason: one of {_CODES}")]
OptionalReasonCode = Annotated[
    str | None,
    typer.Option(help=f"required when it lowers the meter: one of {_CODES}"),
]
Link = Annotated[str, typer.Argument(metavar="LINK")]
Meter = Annotated[str, typer.Argument(metavar="METER")]
ChangeId = Annotated[str, typer.Argument(metavar="CHANGE_ID")]
