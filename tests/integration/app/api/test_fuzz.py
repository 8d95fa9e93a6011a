"""Schemathesis against the app's own OpenAPI schema: no 5xx, answers match the schema."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Ok

from tests.integration.app.support import build_server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The real app (memory journal) under uvicorn in a thread, for the whole module."""
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(build_server().app, port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    yield url
    server.should_exit = True
    thread.join(timeout=30)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_no_server_error_and_answers_match_the_schema(base_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result.err()
        operations.append(result.ok())
    assert len(operations) >= 8

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None
        )
        def fuzz(case: schemathesis.Case[Any]) -> None:
            # As a table controller and as a supervisor, so requests pass authentication.
            for token in ("demo-table-T01", "demo-supervisor"):
                case.headers["Authorization"] = f"Bearer {token}"
                case.call_and_validate(base_url=base_url, checks=CHECKS, timeout=30)

        fuzz()
