"""Structured logging: JSON lines in production, readable lines in a terminal, with the
request id, table and round of the request being served on every line where known.

`RequestContextMiddleware` (pure ASGI) sets them per request or websocket as context
variables, which `ContextFilter` copies onto each record; the writer's task, created at
start, logs without them. `ScrubFilter` blanks every credential in every line, tracebacks
included: a `token=` query parameter, an `authorization` header, a `jackpot.token.*`
subprotocol (docs/architecture.md "Logs").
"""

from __future__ import annotations

import itertools
import json as jsonlib
import logging
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.ops.metrics import PrometheusMetrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
table: ContextVar[str | None] = ContextVar("table", default=None)
round_id: ContextVar[str | None] = ContextVar("round", default=None)

CONTEXT = ("request_id", "table", "round")
ACCESS = logging.getLogger("jackpot.access")
# A request id we did not make goes into every log line: keep it short and inert.
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")
_HEADER = b"x-request-id"
# A request id we make: unique, not secret. A random prefix for this process and a
# counter (16 hex digits): no system call per request (docs/performance.md).
_ID_PREFIX = os.urandom(4).hex()
_ids = itertools.count()
_PREFIX = "/v1/tables/"
# The attributes every LogRecord has: the JSON formatter adds only the others (extra=).
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", *CONTEXT}
# uvicorn's records carry the message again with ANSI colours: not for a log shipper.
_SKIP = _STANDARD | {"color_message"}
# Chatty at INFO (pgserver logs every initdb / pg_ctl command line with its output;
# alembic its plugins): WARNING and up, unless the level asked for is DEBUG.
_CHATTY = ("pgserver", "alembic.runtime.plugins")
# `token=` (also URL-encoded in a logged URL: `token%3D`) up to the next separator.
_TOKEN_RE = re.compile(r"((?:^|[?&\s;])(?:access_)?token(?:=|%3[dD]))[^&\s\"'#]+", re.IGNORECASE)
SCRUBBED = "[scrubbed]"
_VALUE = r"""(?!\[scrubbed\])[^\s'"]+"""  # up to a space or a quote; not twice
# An authorization header however it is printed: `< authorization: Bearer X` (a handshake
# line), `(b'authorization', b'Bearer X')` (an ASGI scope), `'authorization': 'X'` (a
# dict). The scheme stays, for whoever reads the line; the credential goes.
_AUTHORIZATION_RE = re.compile(
    r"""(authorization['"]?\s*[:,=]\s*b?['"]?(?:[A-Za-z][\w-]*\s+)?)""" + _VALUE, re.IGNORECASE
)
_BEARER_RE = re.compile(r"(\bbearer\s+)" + _VALUE, re.IGNORECASE)
_SUBPROTOCOL_RE = re.compile(r"(jackpot\.token\.)" + _VALUE, re.IGNORECASE)


def scrub(text: str) -> str:
    """The text with every credential it holds blanked."""
    lower = text.lower()
    if "token" in lower:
        text = _SUBPROTOCOL_RE.sub(r"\1" + SCRUBBED, _TOKEN_RE.sub(r"\1" + SCRUBBED, text))
    if "authorization" in lower:
        text = _AUTHORIZATION_RE.sub(r"\1" + SCRUBBED, text)
    if "bearer" in lower:
        text = _BEARER_RE.sub(r"\1" + SCRUBBED, text)
    return text


class ScrubFilter(logging.Filter):
    """Blanks credentials in a record's message (its format and arguments) and in its
    traceback."""

    _traceback = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format: the handler reports it
            return True
        scrubbed = scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
            if hasattr(record, "color_message"):
                record.color_message = scrubbed
        if record.exc_info and not record.exc_text:
            # Formatted once here, then reused by every formatter (an exception's text
            # may quote a header).
            record.exc_text = self._traceback.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


class ContextFilter(logging.Filter):
    """Copies the request context onto a record, unless the call gave its own (extra=)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in (("request_id", request_id), ("table", table), ("round", round_id)):
            if getattr(record, name, None) is None:
                setattr(record, name, var.get())
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ms), level, logger, message, context, extras."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _utc(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in CONTEXT:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        for key, value in record.__dict__.items():
            if key not in _SKIP and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = record.exc_text or self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return jsonlib.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """`18:00:00.123 INFO  jackpot.writer  message  [T01/R1001 req=9f2c...]`."""

    def __init__(self) -> None:
        super().__init__(
            "%(asctime)s.%(msecs)03d %(levelname)-5s %(name)s  %(message)s", "%H:%M:%S"
        )

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        where = "/".join(
            str(v) for v in (getattr(record, "table", None), getattr(record, "round", None)) if v
        )
        rid = getattr(record, "request_id", None)
        context = " ".join(part for part in (where, f"req={rid}" if rid else "") if part)
        if not context:
            return text
        head, newline, rest = text.partition("\n")  # keep a traceback below the line
        return f"{head}  [{context}]{newline}{rest}"


def _utc(created: float) -> str:
    seconds = int(created)
    millis = int((created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def configure(json: bool, level: str, *, stream: Any = None) -> logging.Handler:
    """One handler on the root logger; uvicorn's loggers go through it too.

    Call before uvicorn.Config, and give uvicorn `log_config=None` (else it installs
    its own handlers and formats). Returns the handler (tests read what it writes).
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if json else TextFormatter())
    handler.addFilter(ContextFilter())
    handler.addFilter(ScrubFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in _CHATTY:
        logging.getLogger(name).setLevel(
            logging.NOTSET if root.level <= logging.DEBUG else logging.WARNING
        )
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # uvicorn's own access log is off (cli passes access_log=False): the middleware's
    # JACKPOT_ACCESS_LOG line has the request id and the table in it.
    return handler


def access_log_from_env() -> bool:
    """JACKPOT_ACCESS_LOG=1 (or true/yes/on): one line per request."""
    return os.environ.get("JACKPOT_ACCESS_LOG", "").lower() in ("1", "true", "yes", "on")


class RequestContextMiddleware:
    """Request id, table and round into the logging context; `X-Request-Id` echoed.

    Pure ASGI: per request it reads the path and the headers already parsed into the
    scope, sets three context variables and wraps `send` to add one header.
    """

    def __init__(
        self, app: ASGIApp, *, access_log: bool = False, metrics: PrometheusMetrics | None = None
    ) -> None:
        self.app = app
        self.access_log = access_log
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http" and kind != "websocket":
            await self.app(scope, receive, send)
            return
        rid, tokens = enter_request(scope["headers"], scope["path"])
        header = (_HEADER, rid.encode("latin-1"))
        status = 0
        started = time.perf_counter() if self.access_log else 0.0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            elif message["type"] == "websocket.accept":
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # Starlette's ServerErrorMiddleware, outside this one, answers it with a 500,
            # and uvicorn logs the traceback in this same task (one task per request):
            # the context stays set so that line carries the request id and the table.
            self._done(scope, status or 500, started)
            raise
        self._done(scope, status, started)
        leave_request(tokens)

    def _done(self, scope: Scope, status: int, started: float) -> None:
        method = scope.get("method", "WS")
        request_done(self.metrics, self.access_log, method, scope["path"], status, started)


Tokens = tuple[Token[str | None], Token[str | None], Token[str | None]]


def enter_request(headers: Iterable[tuple[bytes, bytes]], path: str) -> tuple[str, Tokens]:
    """Sets a request's context (its id, and the table and round of a table's path);
    returns the id and what `leave_request` needs to unset it."""
    rid = _request_id(headers)
    table_id = round_value = None
    if path.startswith(_PREFIX):
        # /v1/tables/{table}/rounds/{round}/...: "" / v1 / tables / T / rounds / R
        parts = path.split("/", 6)
        table_id = parts[3] or None
        if len(parts) > 5 and parts[4] == "rounds":
            round_value = parts[5] or None
    return rid, (request_id.set(rid), table.set(table_id), round_id.set(round_value))


def request_done(
    metrics: PrometheusMetrics | None,
    access_log: bool,
    method: str,
    path: str,
    status: int,
    started: float,
) -> None:
    """A request answered: its status counted, and its access line if asked for."""
    if status and metrics is not None:
        metrics.response(status)
    if access_log:
        _access(method, path, status, started)


def leave_request(tokens: Tokens) -> None:
    request_id.reset(tokens[0])
    table.reset(tokens[1])
    round_id.reset(tokens[2])


def _request_id(headers: Iterable[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == _HEADER:
            given = value.decode("latin-1")
            if _REQUEST_ID_RE.match(given):
                return given
            break
    return f"{_ID_PREFIX}{next(_ids) & 0xFFFFFFFF:08x}"


def _access(method: str, path: str, status: int, started: float) -> None:
    elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
    ACCESS.info(
        "%s %s %s %.1f ms",
        method,
        path,
        status or "-",
        elapsed_ms,
        extra={"method": method, "path": path, "status": status, "ms": elapsed_ms},
    )
