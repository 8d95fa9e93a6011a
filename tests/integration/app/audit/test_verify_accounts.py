"""`jackpot verify` and snapshots over a journal with account entries: the accounts are
rebuilt from the entries alone, and a stored snapshot holds them exactly."""

from __future__ import annotations

from argon2 import PasswordHasher, profiles

from app.api.passwords import Passwords
from app.audit.replay_check import Verifier
from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.sealing import DEMO_KEY
from app.store.snapshots import dump_text, load_service
from jackpot.canonical import loads_exact
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, OPERATOR, SUPERVISOR, Clock, replayed

CHEAP = Passwords(PasswordHasher.from_parameters(profiles.CHEAPEST))
SUE = {"Authorization": "Bearer demo-supervisor-2"}


async def journal_with_accounts() -> KeptJournal:
    journal = KeptJournal()
    server = build_server(dual=True, journal=journal, clock=Clock(), passwords=CHEAP)
    async with running(server.app) as client:
        body = {"name": "ann", "display_name": "Ann", "role": "supervisor",
                "password": "a long enough password"}  # fmt: skip
        assert (await client.post("/v1/accounts", json=body, headers=SUPERVISOR)).is_success
        assert (await client.post("/v1/accounts/ann/role/approve", headers=SUE)).is_success
        reason = {"reason": "left"}
        r = await client.post("/v1/accounts/olivia/disable", json=reason, headers=SUPERVISOR)
        assert r.is_success
        pw = {"password": "another long password"}
        r = await client.post("/v1/accounts/sam/password", json=pw, headers=SUE)
        assert r.is_success
        # A refused change is not journaled.
        r = await client.post("/v1/accounts/olivia/disable", json=reason, headers=SUPERVISOR)
        assert r.status_code == 409
        assert (await client.get("/v1/awards", headers=OPERATOR)).status_code == 401
    return journal


async def test_verify_replays_account_entries_without_a_discrepancy() -> None:
    journal = await journal_with_accounts()
    rows = [row async for row in journal.read(0)]
    assert [row.kind for row in rows] == [
        "config", "arm", "operators_import", "account_create", "account_grant", "account_disable",
        "account_password",
    ]  # fmt: skip
    verifier = Verifier(floor_config(load_floor(DEMO), DEMO_KEY))
    for row in rows:
        verifier.feed(row)
    assert verifier.ok, verifier.discrepancies
    accounts = verifier.service.accounts
    assert accounts.by_name["ann"].role == "supervisor"
    assert accounts.by_name["olivia"].active is False
    assert accounts.by_name["sam"].generation == 1


async def test_a_snapshot_holds_the_accounts_exactly() -> None:
    journal = await journal_with_accounts()
    service = replayed([row async for row in journal.read(0)])
    text = dump_text(service, 5, "h")
    again = load_service(service.config, loads_exact(text, "snapshot"))
    assert again.accounts == service.accounts
    assert dump_text(again, 5, "h") == text


async def test_a_table_key_replays_under_a_floor_file_without_that_table() -> None:
    journal = KeptJournal()
    server = build_server(journal=journal, clock=Clock(), passwords=CHEAP)
    async with running(server.app) as client:
        assert (await client.post("/v1/tables/T03/token", headers=SUPERVISOR)).status_code == 201
    floor = load_floor(DEMO)
    fewer = floor.model_copy(update={"tables": tuple(t for t in floor.tables if t.id != "T03")})
    verifier = Verifier(floor_config(fewer, DEMO_KEY))
    async for row in journal.read(0):
        verifier.feed(row)
    assert verifier.ok, verifier.discrepancies
    assert "T03" in verifier.service.accounts.table_keys
