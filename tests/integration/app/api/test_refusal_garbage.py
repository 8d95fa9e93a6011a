"""A refused table event leaves nothing that only the cyclic collector frees.

The writer freezes its state out of the collector's reach every `freeze_every` entries
(app/writer/snapshot_policy.py): a garbage cycle still alive at a freeze, as a refusal in
flight is, would be kept for ever. A refusal's exception held its traceback, whose frames
held the writer's group (or the request's future) that held the exception, and a bad time
in a body left pydantic's errors and the validator's exception in such a cycle: a storm of
409s beside the bets leaked (docs/performance.md, "The cyclic collector"). An operator's
refusals, answered by FastAPI's own routes and exception handlers, are held to the same.
"""

from __future__ import annotations

import contextlib
import gc
from collections import Counter
from collections.abc import Iterator

import httpx

from tests.integration.app.support import build_server, running
from tests.support import OPERATOR, SUPERVISOR, T01, Clock, bets_body

BOX = (1, "10.00", "1.00")


@contextlib.contextmanager
def cyclic_garbage() -> Iterator[list[object]]:
    """What the collector finds unreachable once the block has run (`gc.DEBUG_SAVEALL`),
    in the list it yields; automatic collections are off meanwhile."""
    found: list[object] = []
    gc.collect()
    gc.disable()
    try:
        yield found
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def kinds(objects: list[object]) -> Counter[str]:
    return Counter(type(o).__qualname__ for o in objects)


async def refuse(client: httpx.AsyncClient, clock: Clock, n: int) -> None:
    """`n` refusals of each kind a table controller can provoke, after one first post."""
    path = "/v1/tables/T01/rounds/{}/bets"
    first = await client.post(path.format("R1"), json=bets_body(clock, BOX), headers=T01)
    assert first.status_code == 200
    for i in range(n):
        # another body for a recorded round: the writer's 409 (api.md, Idempotency)
        other = bets_body(clock, (1, f"{11 + i}.00", "1.00"))
        assert (await client.post(path.format("R1"), json=other, headers=T01)).status_code == 409
        # a box the table does not have: the rules' 422, refused by the writer
        bad_box = bets_body(clock, (99, "10.00", "1.00"))
        answer = await client.post(path.format(f"B{i}"), json=bad_box, headers=T01)
        assert answer.status_code == 422
        # bodies that are not a bets body: the edge's 422
        for body in ({"closed_at": 1}, {"closed_at": "nope", "boxes": []}):
            answer = await client.post(path.format(f"X{i}"), json=body, headers=T01)
            assert answer.status_code == 422
        answer = await client.post(f"/v1/tables/T01/rounds/X{i}/outcome", json={}, headers=T01)
        assert answer.status_code == 422
        # a token that is no table's: 401
        wrong = {"Authorization": "Bearer nobody"}
        answer = await client.post(path.format(f"Y{i}"), json={}, headers=wrong)
        assert answer.status_code == 401


async def test_refused_table_events_leave_no_cyclic_garbage() -> None:
    clock = Clock()
    with cyclic_garbage() as garbage:
        async with running(build_server(clock=clock).app) as client:
            await refuse(client, clock, 5)
    exceptions = [o for o in garbage if isinstance(o, BaseException)]
    assert exceptions == [], kinds(garbage).most_common(12)


async def refuse_operators(client: httpx.AsyncClient, n: int) -> None:
    """`n` refusals of each kind an operator's client can provoke on FastAPI's own routes."""
    seed = "/v1/links/stud/meters/{}/seed"
    for i in range(n):
        body = {"seed": "12000.00", "reason": f"refused {i}"}
        # above the meter's ceiling: the writer's 422 (api.md, Operators)
        over = {"seed": "9000000.00", "reason": "over"}
        answer = await client.put(seed.format("major"), json=over, headers=SUPERVISOR)
        assert answer.status_code == 422, answer.text
        # a meter the link does not have: 404
        answer = await client.put(seed.format("nope"), json=body, headers=SUPERVISOR)
        assert answer.status_code == 404, answer.text
        # a body that is not a seed change: the route's 422
        answer = await client.put(seed.format("major"), json={"seed": 1}, headers=SUPERVISOR)
        assert answer.status_code == 422, answer.text
        # an operator where a supervisor must act: 403; no token: 401
        answer = await client.put(seed.format("major"), json=body, headers=OPERATOR)
        assert answer.status_code == 403, answer.text
        assert (await client.put(seed.format("major"), json=body)).status_code == 401
        # a path FastAPI does not route: its 404
        assert (await client.get(f"/v1/nothing/{i}", headers=OPERATOR)).status_code == 404


async def test_refused_operator_requests_leave_no_cyclic_garbage() -> None:
    with cyclic_garbage() as garbage:
        async with running(build_server().app) as client:
            await refuse_operators(client, 5)
    exceptions = [o for o in garbage if isinstance(o, BaseException)]
    assert exceptions == [], kinds(garbage).most_common(12)
