"""The server's local control socket: `jackpot operators add` and `jackpot operators
password` on the server's machine, with no network path (docs/operations.md "The first
supervisor").

A unix socket in the data folder, readable and writable by the server's user only; a
connection from another user is refused by its peer credentials too. One JSON line in,
one JSON line out: `{"command": "add", "name", "display_name", "role", "password"}` or
`{"command": "password", "name", "password"}`; the answer is `{"status", "answer"}` or
`{"status", "detail", "errors"}` as the API's problem+json would say it. A change made
here is journaled with `by` "local"; a supervisor made here needs no second supervisor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from app.api.account_changes import LOCAL, AccountChanges
from app.api.account_schemas import AccountName, AccountRequest, Password
from app.api.problems import STATUS
from app.api.schemas import Strict
from app.writer.refusals import Unavailable

log = logging.getLogger("jackpot.local")

MAX_LINE = 16_384


class LocalPasswordRequest(Strict):
    name: AccountName
    password: Password


async def _answer(changes: AccountChanges, request: dict[str, Any]) -> dict[str, Any]:
    command = request.pop("command", None)
    model: type[BaseModel] = AccountRequest if command == "add" else LocalPasswordRequest
    if command not in ("add", "password"):
        return {"status": 422, "detail": "command must be add or password"}
    try:
        body = model.model_validate(request)
    except ValidationError as error:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in error.errors()]
        return {"status": 422, "detail": "invalid request", "errors": errors}
    try:
        if isinstance(body, AccountRequest):
            answer = await changes.create(
                LOCAL, body.name, body.display_name, body.role, body.password
            )
            return {"status": 201, "answer": answer}
        assert isinstance(body, LocalPasswordRequest)
        answer = await changes.set_password(LOCAL, body.name, body.password)
        return {"status": 200, "answer": answer}
    except Exception as error:
        for cls, status, title in STATUS:
            if isinstance(error, cls):
                return {"status": status, "detail": getattr(error, "message", None) or title}
        raise


def _same_user(writer: asyncio.StreamWriter) -> bool:
    """The peer runs as the server's user (or root): the socket's mode says so too."""
    sock = writer.get_extra_info("socket")
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return True
    _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    return uid in (0, os.getuid())


def _handler(changes: AccountChanges) -> Any:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not _same_user(writer):
                reply: dict[str, Any] = {"status": 403, "detail": "not the server's user"}
            else:
                line = await reader.readline()
                try:
                    request = orjson.loads(line)
                except orjson.JSONDecodeError:
                    request = None
                if not isinstance(request, dict):
                    reply = {"status": 422, "detail": "one JSON object on one line"}
                else:
                    try:
                        reply = await _answer(changes, request)
                    except Unavailable:
                        reply = {"status": 503, "detail": "this server does not lead"}
            writer.write(orjson.dumps(reply) + b"\n")
            await writer.drain()
        except Exception:  # one connection's failure never stops the socket
            log.exception("local control request failed")
        finally:
            writer.close()

    return handle


@contextlib.asynccontextmanager
async def local_control(path: Path, changes: AccountChanges) -> AsyncIterator[None]:
    """The socket at `path` while the server runs. Another live server's socket there is
    left alone (this one has none); a stale file from a stopped one is replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - at start-up, before serving
    if path.exists() and await _answers(path):  # noqa: ASYNC240 - at start-up, before serving
        log.warning("local control: %s is another server's; none here", path)
        yield
        return
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # noqa: ASYNC240 - at start-up, before serving
    old = os.umask(0o177)  # created 0600: only the server's user reaches it
    try:
        server = await asyncio.start_unix_server(_handler(changes), path, limit=MAX_LINE)
    finally:
        os.umask(old)
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # noqa: ASYNC240 - at shut-down, after serving


async def _answers(path: Path) -> bool:
    try:
        _, writer = await asyncio.open_unix_connection(path)
    except OSError:
        return False
    writer.close()
    return True


async def ask(path: Path, request: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:  # noqa: ASYNC109 - a one-shot client: its whole exchange is bounded here
    """The client's side (`jackpot operators add`): one request, its answer."""
    reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), timeout)
    try:
        writer.write(orjson.dumps(request) + b"\n")
        await writer.drain()
        answer: dict[str, Any] = orjson.loads(await asyncio.wait_for(reader.readline(), timeout))
        return answer
    finally:
        writer.close()
