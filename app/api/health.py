"""`/health` for load balancers and orchestrators: is this process serving (status), as
what (role); and the database probe that keeps the writer's answer current.

The journal's head is not here: operators read it from `/v1/journal/head`.
"""

from __future__ import annotations

import asyncio
import logging

from fastapi.responses import JSONResponse

from app.store.errors import JournalUnavailable
from app.writer.writer import Writer

log = logging.getLogger("jackpot.health")

# How often the writer's process asks the database whether it could commit, and how
# long it waits for the answer: a database that goes away shows as `degraded` within
# about two seconds, with no traffic, not only once a table's commit has failed.
PROBE_EVERY_S = 1.0
PROBE_TIMEOUT_S = 1.0


def health_answer(role: str, ready: bool, degraded: bool = False) -> JSONResponse:
    """200 `{"status": "ok", "role"}` when serving; 503 while starting or stopping, and
    for the writer while it cannot record events (the balancer must not send it tables'
    events it could only refuse; the process is alive: nothing should restart it), for a
    display process while its Redis relay is not connected."""
    status = "starting" if not ready else "degraded" if degraded else "ok"
    return JSONResponse(
        {"status": status, "role": role}, status_code=200 if status == "ok" else 503
    )


def writer_health(ready: bool, writer: Writer) -> JSONResponse:
    """A writer process: 200 `{"status": "ok", "role": "leader"}` while it leads and can
    record; a standby answers 503 `{"status": "standby", "role": "standby"}`, so that a
    proxy's health check or passive retry sends tables and operators to the leader."""
    if ready and writer.standby:
        return JSONResponse({"status": "standby", "role": "standby"}, status_code=503)
    return health_answer("standby" if writer.standby else "leader", ready, writer.degraded)


async def probe_database(writer: Writer, every_s: float = PROBE_EVERY_S) -> None:
    """Until cancelled: ping the journal; a failure marks the writer degraded (as a failed
    commit does: displays are told), a success clears it (after an outage with no
    traffic, no commit would come to clear it)."""
    while True:
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a
            # cancellation that comes as the ping completes, and the loop then never ends.
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                await writer.journal.ping()
        except (JournalUnavailable, TimeoutError, OSError) as error:
            if not writer.degraded:
                log.error("database probe failed: %s", error)
            writer.cannot_record()
        else:
            writer.recorded_again()
        await asyncio.sleep(every_s)
