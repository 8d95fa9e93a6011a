"""What a writer records first whenever it starts leading: the parameters read from the
floor file at start, when they are not those the journal holds (docs/operations.md)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.state.commands import ConfigCommand
from app.state.parameter_kinds import author_refusals, held_for_approval
from app.state.parameters import (
    ParametersRefused,
    ParametersUnchanged,
    config_of,
    parameters_sha256,
    refusals,
)
from app.state.shape import FloorData

log = logging.getLogger("jackpot.writer")


class StartRefused(Exception):
    """The server cannot start as configured: every problem, one a line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def opening_done(future: asyncio.Future[Any]) -> None:
    """Log how an opening request ended (a standby that takes over has no one to tell)."""
    if future.cancelled():
        return
    error = future.exception()
    if error is None:
        log.info("parameters recorded at start")
    elif isinstance(error, ParametersUnchanged):
        log.info("parameters: those recorded in the journal")
    elif isinstance(error, ParametersRefused):
        log.error(
            "the floor file's parameters are refused; running on those recorded:\n%s",
            "\n".join(error.problems),
        )
    else:
        log.error("an opening request failed: %s", error)


def refused_at_start(state: FloorData, opening: list[tuple[str, Any]]) -> None:
    """StartRefused with every problem when the state forbids the parameters read at start:
    checked on the recovered state before the writer runs, so nothing (not even a timed
    entry) is written by a start that is refused."""
    problems: list[str] = []
    for _, command in opening:
        if not isinstance(command, ConfigCommand):
            continue
        sha256 = parameters_sha256(command.params)
        proposal = state.parameters.proposal
        if sha256 == state.parameters.sha256 or (proposal and proposal["sha256"] == sha256):
            continue
        problems.extend(refusals(state, config_of(command.params, state.config.mystery_key)))
        if held_for_approval(state, command.params):
            problems.extend(author_refusals(state, command.by))
    if problems:
        raise StartRefused(problems)


async def opened(futures: list[asyncio.Future[Any]]) -> None:
    """Wait for the opening requests; StartRefused with every problem if the parameters
    read at start are refused by the state."""
    problems: list[str] = []
    for future in futures:
        try:
            await future
        except ParametersUnchanged:
            continue
        except ParametersRefused as error:
            problems.extend(error.problems)
    if problems:
        raise StartRefused(problems)
