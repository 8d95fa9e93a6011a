"""The jackpot domain's errors: no HTTP here, the service maps each class to a status."""

from __future__ import annotations


class JackpotError(Exception):
    """Base of every refusal by the jackpot core. `loc` names the offending field, if any."""

    def __init__(self, message: str, loc: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc


class UnknownError(JackpotError):
    """An unknown link, meter, table or round (404)."""


class InvalidCommandError(JackpotError):
    """A command whose content breaks a rule: a bad time, box or amount (422)."""


class ClockSkewError(InvalidCommandError):
    """A timestamp further ahead of the server's clock than max_clock_skew (422)."""


class StaleRoundError(InvalidCommandError):
    """Bets closed more than round_timeout ago: the table voids that round (5.17) (422)."""


class StateConflictError(JackpotError):
    """A command that the round's or meter's state forbids: void after final award (409)."""


class OpenRoundsLimitError(StateConflictError):
    """A table already holds the floor's max_open_rounds rounds with no outcome (409)."""
