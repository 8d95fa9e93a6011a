"""A link's open rounds by effective_at, oldest first: what the watermark, the stale check,
an award's holding rounds and the next due time read (docs/design.md "The watermark")
without walking every open round.

A heap, cleaned lazily: an entry whose round left the link's `open_rounds` (outcome, void,
expiry) stays until it reaches the top or is met, so the handlers that take a round out
change nothing here. Rounds flagged stale are popped by the stale check (`pop_stale`);
every other open round is in the heap. Derived, never stored: built from `open_rounds`
when first asked, after a load as after a replay."""

from __future__ import annotations

import heapq

Key = tuple[str, str]
Entry = tuple[int, str, str]  # (effective_at, table, round)


class HoldingOrder:
    __slots__ = ("of", "heap", "flagged_at")

    def __init__(self, open_rounds: dict[Key, int]) -> None:
        self.of = open_rounds  # the dict it was built from: rebuilt if it is replaced
        self.heap: list[Entry] = [(at, t, r) for (t, r), at in open_rounds.items()]
        heapq.heapify(self.heap)
        # The server time of the latest stale check: every round it popped was stale at it.
        self.flagged_at = -(2**62)

    def add(self, key: Key, at: int) -> None:
        heapq.heappush(self.heap, (at, key[0], key[1]))

    def _open(self, entry: Entry) -> bool:
        return self.of.get((entry[1], entry[2])) == entry[0]

    def oldest(self) -> Entry | None:
        """The open round with the earliest effective_at still in the heap."""
        heap = self.heap
        while heap and not self._open(heap[0]):
            heapq.heappop(heap)
        return heap[0] if heap else None

    def pop_stale(self, now: int, timeout: int) -> list[Key]:
        """Take out the open rounds stale at `now` (open longer than `timeout`), oldest
        first; a round flagged at an earlier check is among them if still here."""
        stale = []
        while (top := self.oldest()) is not None and now - top[0] > timeout:
            heapq.heappop(self.heap)
            stale.append((top[1], top[2]))
        self.flagged_at = max(self.flagged_at, now)
        return stale

    def upto(self, bound: int) -> list[Entry]:
        """The open rounds in the heap with effective_at <= `bound`, in no order: the heap's
        nodes above them are all <= bound too, so only those and the entries left behind
        by rounds that closed are visited."""
        heap, found, stack = self.heap, [], [0]
        n = len(heap)
        while stack:
            i = stack.pop()
            if i < n and heap[i][0] <= bound:
                if self._open(heap[i]):
                    found.append(heap[i])
                stack += (2 * i + 1, 2 * i + 2)
        return found
