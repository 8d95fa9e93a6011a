"""The leader's term on what a writer puts in Redis (docs/design.md, "Broadcast").

Redis is not fenced by the database: a deposed leader that has not yet learnt it could
still SET a link's state or PUBLISH a message. Every value the writer stores or publishes
carries its lease epoch (`<term> <text>`, inside the HMAC with JACKPOT_REDIS_SECRET); a
display process takes nothing of a term older than the newest it has seen, and a state
is stored only if the one in Redis is of the same term or an older one (`STORE_IF_NOT_OLDER`,
one Lua script, so the check and the SET are one step in Redis).
"""

from __future__ import annotations

_MAX_DIGITS = 19  # a lease epoch is a PostgreSQL bigint

# KEYS[1] the state key, ARGV[1] the writer's term, ARGV[2] the value (`[<mac> ]<term> {`).
STORE_IF_NOT_OLDER = """
local stored = redis.call('GET', KEYS[1])
if stored then
  local term = string.match(stored, '^%x+ (%d+) {') or string.match(stored, '^(%d+) {')
  if term and tonumber(term) > tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""


def stamped(term: int, text: str) -> str:
    return f"{term} {text}"


def unstamped(body: str) -> tuple[int, str] | None:
    """The term and the text of a stamped value; None if it has no term."""
    term, space, text = body.partition(" ")
    if not space or not term.isascii() or not term.isdigit() or len(term) > _MAX_DIGITS:
        return None
    return int(term), text


class NewestTerm:
    """The newest term a reader has seen; an older one is refused."""

    def __init__(self) -> None:
        self.term = 0

    def admits(self, term: int) -> bool:
        if term < self.term:
            return False
        self.term = term
        return True
