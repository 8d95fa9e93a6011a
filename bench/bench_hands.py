"""Hands evaluated per second over all 2,598,960 five-card hands: tables.evaluate, treys, pokerkit.

Run: .venv/bin/python bench/bench_hands.py [--limit N]
(treys and pokerkit are the project's `bench` extra; each is skipped with a note if absent.)
"""

from __future__ import annotations

import argparse
import time
from collections import deque
from collections.abc import Callable, Sequence
from itertools import combinations, islice
from typing import Any

ALL_HANDS = 2_598_960


def run(name: str, deck: Sequence[Any], evaluate: Callable[[Any], object], limit: int) -> None:
    """Evaluate every five-card combination of `deck` (in the library's own card type)."""
    hands = islice(combinations(deck, 5), limit)
    start = time.perf_counter()
    deque(map(evaluate, hands), maxlen=0)  # the same driver loop for every evaluator
    seconds = time.perf_counter() - start
    print(f"{name:<34} {limit:>9,} hands {seconds:7.2f} s {limit / seconds:>12,.0f} hands/s")


def ours(limit: int) -> None:
    from tables.cards import DECK
    from tables.evaluate import evaluate

    run("tables.evaluate.evaluate", DECK, evaluate, limit)


def treys(limit: int) -> None:
    try:
        from treys import Card, Evaluator
    except ImportError:
        print("treys: not installed (pip install treys), skipped")
        return
    evaluator = Evaluator()
    deck = [Card.new(rank + suit) for suit in "shdc" for rank in "23456789TJQKA"]
    # The public API takes two lists (hand, board); _five is its five-card core.
    run("treys Evaluator.evaluate", deck, lambda hand: evaluator.evaluate(list(hand), []), limit)
    run("treys Evaluator._five (core)", deck, evaluator._five, limit)


def pokerkit(limit: int) -> None:
    try:
        from pokerkit import Card, StandardHighHand, StandardLookup
    except ImportError:
        print("pokerkit: not installed (pip install pokerkit), skipped")
        return
    deck = list(Card.parse("".join(r + s for s in "shdc" for r in "23456789TJQKA")))
    lookup = StandardLookup()
    # pokerkit has no dedicated fast evaluator: its lookup table is the fastest path,
    # StandardHighHand (what its games use) builds a hand object around it.
    run("pokerkit StandardLookup.get_entry", deck, lookup.get_entry, limit)
    run("pokerkit StandardHighHand", deck, StandardHighHand, limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=ALL_HANDS, help="hands per evaluator")
    limit = min(parser.parse_args().limit, ALL_HANDS)
    ours(limit)
    treys(limit)
    pokerkit(limit)


if __name__ == "__main__":
    main()
