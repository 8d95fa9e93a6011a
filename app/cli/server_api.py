"""The operator commands' client of the HTTP API: one call, its problem+json spelled out."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import httpx
import typer

from app.cli.options import DEFAULT_URL


class Failed(Exception):
    """The command cannot go on: `message` for stderr, `code` the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class Api:
    """One httpx client on `--url`; the token goes in a header and nowhere else."""

    def __init__(self, url: str, token: str | None, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url, self.has_token = url, bool(token)
        self.client = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def call(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str | int | None] | None = None,
        missing: str | None = None,
    ) -> httpx.Response:
        """The answer of a 2xx; otherwise `Failed` with the problem+json spelled out.

        `missing`, when given, is the message for a 404 that means the route itself is
        not on this server (an older server), rather than an unknown link or meter.
        """
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            answer = self.client.request(method, path, json=body, params=query)
        except httpx.ConnectError:
            raise Failed(
                f"cannot reach the jackpot server at {self.url} (is it running?)", 2
            ) from None
        except httpx.TransportError as error:
            raise Failed(f"no answer from the jackpot server at {self.url}: {error}", 2) from None
        if answer.is_success:
            return answer
        if answer.status_code == 404 and missing is not None:
            raise Failed(missing)
        raise Failed(self.problem(answer))

    def problem(self, answer: httpx.Response) -> str:
        """problem+json (RFC 9457) as lines: title, detail, then each `loc: msg`."""
        try:
            data = loads(answer.text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return f"HTTP {answer.status_code}: {answer.text.strip()[:500]}"
        title = data.get("title") or answer.reason_phrase
        lines = [f"HTTP {answer.status_code} {title}"]
        detail = str(data.get("detail") or "")
        problems = [
            (".".join(str(part) for part in e.get("loc", [])), str(e.get("msg", "")))
            for e in data.get("errors") or []
            if isinstance(e, dict)
        ]
        # A 422's detail often repeats its errors: say each thing once.
        repeated = bool(problems) and all(msg in detail for _, msg in problems)
        if detail and detail != title and not repeated:
            lines[0] += f": {detail}"
        lines += [f"  {loc}: {msg}" for loc, msg in problems]
        if answer.status_code == 401 and not self.has_token:
            lines.append("  (no token: pass --token or set JACKPOT_TOKEN)")
        return "\n".join(lines)

    def close(self) -> None:
        self.client.close()


@contextlib.contextmanager
def session(url: str | None, token: str | None) -> Iterator[Api]:
    """An `Api` on `url` (else the default); a `Failed` inside ends the command: its message
    on stderr, its code the exit status."""
    api = Api((url or DEFAULT_URL).rstrip("/"), token)
    try:
        yield api
    except Failed as error:
        print(error.message, file=sys.stderr, flush=True)
        raise typer.Exit(error.code) from None
    finally:
        api.close()


def loads(text: str) -> Any:
    """JSON with any number that has a fraction kept as Decimal (money is never a float)."""
    return json.loads(text, parse_float=Decimal)
