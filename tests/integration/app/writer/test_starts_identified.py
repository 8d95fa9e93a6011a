"""Every start identified (docs/journal.md `start`): a writer that begins leading records
its software identity and the parameters in force; `GET /v1/about` answers the same and
`jackpot verify` lists each start."""

from __future__ import annotations

import orjson

from app.audit.findings import format_report
from app.audit.verify_run import verify
from app.compose import writer_process
from app.config.floor_file import load_floor
from app.config.settings import Settings
from app.ops.software import Identity
from app.state.sealing import DEMO_KEY
from tests.integration.app.support import KeptJournal, running
from tests.support import DEMO, OPERATOR, T01, Clock

IDENTITY = Identity(
    version="9.9.9", install="wheel", software_sha256="ab" * 32, files=3,
    lock="/srv/jackpot/deploy/requirements.lock", lock_sha256="cd" * 32,
    python="3.11.7", host="floor-1",
)  # fmt: skip


async def test_each_start_is_recorded_with_its_software_and_parameters() -> None:
    journal, clock = KeptJournal(), Clock()
    for _ in range(2):
        process = writer_process(
            Settings(demo_tokens=True),
            load_floor(DEMO),
            journal=journal,
            clock=clock,
            identity=IDENTITY,
        )
        async with running(process.app) as client:
            about = (await client.get("/v1/about", headers=OPERATOR)).json()
            assert (await client.get("/v1/about", headers=T01)).status_code == 403
        clock.now += 60_000
    rows = [row async for row in journal.read(0)]
    # The demo floor's must-hit-by level draws its first trigger with the first start.
    assert [r.kind for r in rows] == ["config", "start", "arm", "start"]
    config = orjson.loads(rows[0].entry)
    start = orjson.loads(rows[1].entry)
    assert start["host"] == "floor-1" and start["params_sha256"] == config["sha256"]
    assert start["software"] == {
        "name": "jackpot-server", "version": "9.9.9", "install": "wheel",
        "software_sha256": "ab" * 32, "files": 3,
        "lock": "/srv/jackpot/deploy/requirements.lock", "lock_sha256": "cd" * 32,
        "python": "3.11.7",
    }  # fmt: skip
    assert about == {
        **start["software"], "host": "floor-1", "params_sha256": config["sha256"],
        "params_seq": 1,
    }  # fmt: skip
    report = await verify(journal, None, mystery_key=DEMO_KEY)
    assert report.ok, format_report(report)
    assert [s["seq"] for s in report.starts] == [2, 4]
    text = format_report(report)
    assert (
        f"start at seq 2 on floor-1: jackpot-server 9.9.9 (wheel) software_sha256 {'ab' * 32}"
        in text
    )
    assert f"parameters {config['sha256']}" in text


async def test_a_server_built_without_an_identity_records_no_start() -> None:
    """Tests build servers with no identity: their journals stay as they were."""
    journal = KeptJournal()
    process = writer_process(
        Settings(demo_tokens=True), load_floor(DEMO), journal=journal, clock=Clock()
    )
    async with running(process.app) as client:
        about = (await client.get("/v1/about", headers=OPERATOR)).json()
    assert [r.kind async for r in journal.read(0)] == ["config", "arm"]
    assert about["install"] in ("editable", "source")  # this checkout, and it says so
