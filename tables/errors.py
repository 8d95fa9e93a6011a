"""Errors of the tables package: each names where in the request it is (`loc`) and the rule."""

from __future__ import annotations

Loc = tuple[str | int, ...]


class TablesError(Exception):
    """Base error. `loc` points into the request as given (list positions, not box numbers).

    The service maps `loc` and `message` straight to a problem+json `errors` entry.
    """

    def __init__(self, message: str, loc: Loc = ()) -> None:
        super().__init__(message)
        self.message = message
        self.loc: Loc = loc

    def at(self, *prefix: str | int) -> TablesError:
        """The same error with `prefix` put in front of its `loc` (used by callers that nest)."""
        self.loc = (*prefix, *self.loc)
        return self


class InvalidCardError(TablesError):
    """A card that is not one of the 52 (rule 5.8.1: a card not part of the set)."""


class InvalidHandError(TablesError):
    """A hand or a round's cards that break the deck: duplicates, wrong size (5.8, 5.15)."""


class InvalidBetError(TablesError):
    """A bet the table cannot accept: unknown box, wrong jackpot amount (3.4, 3.5)."""
