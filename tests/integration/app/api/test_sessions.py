"""Sign-in and the console's sessions: the cookie, the idle timeout and the lifetime,
sign-out, sessions ended by account changes, CSRF and Origin, slowed sign-ins and their
lockouts, the sign-in log (docs/api.md "Sign-in and sessions")."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from argon2 import PasswordHasher, profiles
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from app.api.passwords import Passwords
from app.api.sessions import SignInPolicy, SignIns
from app.state.accounts import Account, Accounts
from app.store.sessions import MemorySessions
from tests.integration.app.support import build_server, running, scrape
from tests.support import SUPERVISOR, Clock

CHEAP = Passwords(PasswordHasher.from_parameters(profiles.CHEAPEST))
POLICY = SignInPolicy(
    idle_ms=60_000,
    lifetime_ms=600_000,
    failures_per_name=3,
    failures_per_address=10,
    window_ms=300_000,
    lockout_ms=120_000,
    slowdown_ms=0,
)
ORIGIN = "http://t"
PASSWORDS = {"ann": "ann's long password", "bob": "bob's long password"}


@dataclass
class Signed:
    cookie: str
    csrf: str

    def headers(self, *, csrf: bool = True, origin: str | None = ORIGIN) -> dict[str, str]:
        headers = {"Cookie": f"jackpot_session={self.cookie}"}
        if csrf:
            headers["X-CSRF-Token"] = self.csrf
        if origin is not None:
            headers["Origin"] = origin
        return headers


@pytest.fixture
async def client(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(clock=clock, passwords=CHEAP, signin_policy=POLICY)
    async with running(server.app) as client:
        for name, role in (("ann", "supervisor"), ("bob", "operator")):
            body = {"name": name, "display_name": name.title(), "role": role,
                    "password": PASSWORDS[name]}  # fmt: skip
            r = await client.post("/v1/accounts", json=body, headers=SUPERVISOR)
            assert r.status_code == 201, r.text
        yield client


async def sign_in(
    client: httpx.AsyncClient, name: str, password: str | None = None, address: str = ""
) -> httpx.Response:
    body = {"name": name, "password": PASSWORDS.get(name, "") if password is None else password}
    headers = {"X-Test-Address": address} if address else {}
    r = await client.post("/v1/signin", json=body, headers=headers)
    client.cookies.clear()  # each test says which cookie it sends
    return r


async def signed(client: httpx.AsyncClient, name: str) -> Signed:
    r = await sign_in(client, name)
    assert r.status_code == 200, r.text
    return Signed(r.cookies["jackpot_session"], r.json()["csrf_token"])


async def test_a_sign_in_gives_a_strict_http_only_cookie_and_who_signed_in(
    client: httpx.AsyncClient,
) -> None:
    r = await sign_in(client, "ann")
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "ann" and r.json()["role"] == "supervisor"
    assert r.json()["via"] == "session" and r.json()["csrf_token"]
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("jackpot_session=")
    for attribute in ("HttpOnly", "SameSite=strict", "Path=/", "Max-Age=600"):
        assert attribute.lower() in cookie.lower()
    assert "secure" not in cookie.lower()  # plain http: the browser would not send it back
    session = Signed(r.cookies["jackpot_session"], r.json()["csrf_token"])
    me = await client.get("/v1/session", headers=session.headers())
    assert me.json()["name"] == "ann" and me.json()["csrf_token"] == session.csrf
    assert (await client.get("/v1/accounts", headers=session.headers())).status_code == 200


async def test_over_https_the_cookie_is_secure(clock: Clock) -> None:
    server = build_server(clock=clock, passwords=CHEAP, signin_policy=POLICY)
    async with running(server.app, base_url="https://t") as client:
        body = {"name": "a1", "display_name": "A", "role": "operator",
                "password": "a long password"}  # fmt: skip
        assert (await client.post("/v1/accounts", json=body, headers=SUPERVISOR)).is_success
        r = await client.post("/v1/signin", json={"name": "a1", "password": "a long password"})
        assert r.status_code == 200
        assert "secure" in r.headers["set-cookie"].lower()


async def test_a_wrong_password_and_an_unknown_name_are_told_alike(
    client: httpx.AsyncClient,
) -> None:
    wrong = await sign_in(client, "ann", "not ann's password")
    unknown = await sign_in(client, "nobody", "not ann's password")
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json()["detail"] == unknown.json()["detail"]
    assert "set-cookie" not in wrong.headers
    log = (await client.get("/v1/signins", headers=SUPERVISOR)).json()["signins"]
    failures = [(e["event"], e["name"], e["detail"]) for e in log if e["event"] == "failure"]
    assert failures == [
        ("failure", "ann", "wrong password"),
        ("failure", "nobody", "unknown name"),
    ]


async def test_the_floor_files_operators_have_no_password_until_one_is_set(
    client: httpx.AsyncClient,
) -> None:
    r = await sign_in(client, "sam", "")
    assert r.status_code in (401, 422)
    r = await sign_in(client, "sam", "any long password")
    assert r.status_code == 401


async def test_a_state_change_by_a_session_needs_its_csrf_token_and_origin(
    client: httpx.AsyncClient,
) -> None:
    ann = await signed(client, "ann")
    reason = {"reason": "away"}
    path = "/v1/accounts/bob/disable"
    r = await client.post(path, json=reason, headers=ann.headers(csrf=False))
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]
    r = await client.post(path, json=reason, headers=ann.headers(origin="http://evil.example"))
    assert r.status_code == 403 and "origin" in r.json()["detail"]
    r = await client.post(path, json=reason, headers=ann.headers(origin=None))
    assert r.status_code == 403
    wrong = Signed(ann.cookie, "not-the-token")
    assert (await client.post(path, json=reason, headers=wrong.headers())).status_code == 403
    bob = await client.get("/v1/accounts/bob", headers=ann.headers())
    assert bob.json()["active"] is True  # nothing changed
    r = await client.post(path, json=reason, headers=ann.headers())
    assert r.status_code == 200, r.text
    audit = (await client.get("/v1/audit", headers=SUPERVISOR)).json()["audit"]
    assert audit[-1]["action"] == "account:disable" and audit[-1]["who"] == "ann"


async def test_a_bearer_token_is_not_asked_for_csrf(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/accounts/bob/disable", json={"reason": "x"}, headers=SUPERVISOR)
    assert r.status_code == 200


async def test_sign_out_ends_the_session_on_the_server(client: httpx.AsyncClient) -> None:
    ann = await signed(client, "ann")
    r = await client.post("/v1/signout", headers=ann.headers())
    assert r.status_code == 200
    assert 'jackpot_session=""' in r.headers["set-cookie"] or "Max-Age=0" in r.headers["set-cookie"]
    # The old cookie, kept by someone: refused.
    assert (await client.get("/v1/accounts", headers=ann.headers())).status_code == 401
    log = (await client.get("/v1/signins", headers=SUPERVISOR)).json()["signins"]
    assert [e["event"] for e in log] == ["signin", "signout"]


async def test_a_session_ends_after_its_idle_timeout(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    ann = await signed(client, "ann")
    clock.now += 50_000
    assert (await client.get("/v1/accounts", headers=ann.headers())).status_code == 200
    clock.now += 50_000  # 50 s since the last request: still within the idle minute
    assert (await client.get("/v1/accounts", headers=ann.headers())).status_code == 200
    clock.now += 60_000
    assert (await client.get("/v1/accounts", headers=ann.headers())).status_code == 401
    log = (await client.get("/v1/signins?event=session_end", headers=SUPERVISOR)).json()
    assert log["signins"][0]["detail"] == "idle (server)"


async def test_a_session_ends_at_its_lifetime_however_busy(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    ann = await signed(client, "ann")
    for _ in range(11):
        clock.now += 50_000
        assert (await client.get("/v1/accounts", headers=ann.headers())).status_code == 200
    clock.now += 55_000  # 605 s since the sign-in, 55 s since the last request
    assert (await client.get("/v1/accounts", headers=ann.headers())).status_code == 401
    log = (await client.get("/v1/signins?event=session_end", headers=SUPERVISOR)).json()
    assert log["signins"][0]["detail"] == "lifetime reached (server)"


async def test_disabling_an_account_ends_its_sessions_at_once(client: httpx.AsyncClient) -> None:
    bob = await signed(client, "bob")
    assert (await client.get("/v1/awards", headers=bob.headers())).status_code == 200
    r = await client.post("/v1/accounts/bob/disable", json={"reason": "x"}, headers=SUPERVISOR)
    assert r.status_code == 200
    assert (await client.get("/v1/awards", headers=bob.headers())).status_code == 401
    # Re-enabled, the old session stays ended; a new sign-in works.
    await client.post("/v1/accounts/bob/enable", json={"reason": "x"}, headers=SUPERVISOR)
    assert (await client.get("/v1/awards", headers=bob.headers())).status_code == 401
    assert (await sign_in(client, "bob")).status_code == 200


async def test_a_new_password_ends_every_session_of_the_account(
    client: httpx.AsyncClient,
) -> None:
    first, second = await signed(client, "bob"), await signed(client, "bob")
    pw = {"password": "bob's new long password"}
    assert (await client.post("/v1/accounts/bob/password", json=pw, headers=SUPERVISOR)).is_success
    for session in (first, second):
        assert (await client.get("/v1/awards", headers=session.headers())).status_code == 401
    assert (await sign_in(client, "bob")).status_code == 401
    assert (await sign_in(client, "bob", pw["password"])).status_code == 200


async def test_failed_sign_ins_lock_the_name_out_then_time_lifts_it(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    for _ in range(3):
        assert (await sign_in(client, "bob", "a wrong password")).status_code == 401
    # Locked: even the right password is refused, and so is it for a name nobody has.
    locked = await sign_in(client, "bob")
    assert locked.status_code == 429
    assert int(locked.headers["retry-after"]) == 120
    for _ in range(3):
        await sign_in(client, "ghost", "a wrong password")
    assert (await sign_in(client, "ghost", "whatever")).status_code == 429
    clock.now += 120_000
    assert (await sign_in(client, "bob")).status_code == 200
    log = (await client.get("/v1/signins?event=lockout", headers=SUPERVISOR)).json()["signins"]
    assert [(e["name"], e["scope"]) for e in log] == [("bob", "name"), ("ghost", "name")]


async def test_a_supervisor_lifts_a_lockout(client: httpx.AsyncClient) -> None:
    for _ in range(3):
        await sign_in(client, "bob", "a wrong password")
    assert (await sign_in(client, "bob")).status_code == 429
    ann = await signed(client, "ann")
    r = await client.post("/v1/signins/unlock", json={"name": "bob"}, headers=ann.headers())
    assert r.status_code == 200, r.text
    assert (await sign_in(client, "bob")).status_code == 200


async def test_failures_from_one_address_lock_that_address_out(client: httpx.AsyncClient) -> None:
    # In-process, every request comes from one client address.
    for name in [f"u{n}" for n in range(10)]:
        assert (await sign_in(client, name, "a wrong password")).status_code == 401
    assert (await sign_in(client, "ann")).status_code == 429
    log = (await client.get("/v1/signins?event=lockout", headers=SUPERVISOR)).json()["signins"]
    assert [e["scope"] for e in log] == ["address"]


async def test_the_sign_in_log_is_for_supervisors_and_auditors(
    client: httpx.AsyncClient,
) -> None:
    bob = await signed(client, "bob")
    assert (await client.get("/v1/signins", headers=bob.headers())).status_code == 403
    role = {"role": "auditor"}
    assert (await client.post("/v1/accounts/bob/role", json=role, headers=SUPERVISOR)).is_success
    bob = await signed(client, "bob")
    r = await client.get("/v1/signins", headers=bob.headers())
    assert r.status_code == 200
    assert r.json()["total"] == 2 and r.json()["signins"][1]["name"] == "bob"


async def test_sign_ins_and_lockouts_are_counted(client: httpx.AsyncClient) -> None:
    await signed(client, "ann")
    for _ in range(4):
        await sign_in(client, "bob", "a wrong password")
    samples = await scrape(client)
    assert samples[("jackpot_signins_total", frozenset({("result", "ok")}))] == 1
    assert samples[("jackpot_signins_total", frozenset({("result", "failure")}))] == 3
    assert samples[("jackpot_signins_total", frozenset({("result", "locked")}))] == 1
    assert samples[("jackpot_signin_lockouts_total", frozenset({("scope", "name")}))] == 1


async def test_supervisors_see_and_end_open_sessions(client: httpx.AsyncClient) -> None:
    ann, bob = await signed(client, "ann"), await signed(client, "bob")
    listed = (await client.get("/v1/sessions", headers=ann.headers())).json()["sessions"]
    assert sorted(s["account"] for s in listed) == ["ann", "bob"]
    bob_id = next(s["id"] for s in listed if s["account"] == "bob")
    assert bob.cookie not in str(listed)
    r = await client.post(f"/v1/sessions/{bob_id}/end", headers=ann.headers())
    assert r.status_code == 200
    assert (await client.get("/v1/awards", headers=bob.headers())).status_code == 401


@contextlib.asynccontextmanager
async def served(clock: Clock) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    """The writer app on a real uvicorn (websockets need one), its address and a client."""
    app = build_server(clock=clock, passwords=CHEAP, signin_policy=POLICY).app
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    address = f"127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        async with httpx.AsyncClient(base_url=f"http://{address}") as client:
            yield address, client
    finally:
        server.should_exit = True
        await task


async def test_the_floor_websocket_takes_the_session_from_this_origin_only(clock: Clock) -> None:
    async with served(clock) as (address, client):
        body = {"name": "ann", "display_name": "Ann", "role": "operator",
                "password": PASSWORDS["ann"]}  # fmt: skip
        assert (await client.post("/v1/accounts", json=body, headers=SUPERVISOR)).is_success
        r = await client.post("/v1/signin", json={"name": "ann", "password": PASSWORDS["ann"]})
        cookie = {"Cookie": f"jackpot_session={r.cookies['jackpot_session']}"}
        url = f"ws://{address}/v1/floor/ws"
        own = {**cookie, "Origin": f"http://{address}"}
        async with connect(url, subprotocols=["jackpot"], additional_headers=own) as ws:  # type: ignore[list-item]
            hello = json.loads(await ws.recv())
            assert hello == {"type": "hello", "you": {"name": "ann", "role": "operator"}}
        evil = {**cookie, "Origin": "http://evil.example"}
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, subprotocols=["jackpot"], additional_headers=evil):  # type: ignore[list-item]
                pass
        assert refused.value.response.status_code == 403


async def test_another_account_signs_in_from_a_browser_with_an_open_session(
    client: httpx.AsyncClient,
) -> None:
    ann = await signed(client, "ann")
    body = {"name": "bob", "password": PASSWORDS["bob"]}
    r = await client.post("/v1/signin", json=body, headers=ann.headers(csrf=False))
    assert r.status_code == 200 and r.json()["name"] == "bob"
    r = await client.post("/v1/signin", json=body, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403


async def test_the_sweep_ends_and_logs_sessions_past_their_end(clock: Clock) -> None:
    accounts = Accounts()
    accounts.by_name["ann"] = Account(name="ann", display_name="Ann", role="operator",
                                      password=await CHEAP.hash(PASSWORDS["ann"]))  # fmt: skip
    store = MemorySessions()
    signins = SignIns(store, lambda: accounts, CHEAP, POLICY, clock)
    idle = await signins.sign_in("ann", PASSWORDS["ann"], "10.0.0.1")
    clock.now += 30_000
    busy = await signins.sign_in("ann", PASSWORDS["ann"], "10.0.0.2")
    clock.now += 30_000  # the first idle a minute, the second half a minute
    assert await signins.sweep() == 1
    assert await signins.sweep() == 0
    ends = [(e.address, e.detail) for e in store.log if e.event == "session_end"]
    assert ends == [("10.0.0.1", "idle (server)")]
    assert (await store.get(idle.session.id_sha256)) is not None
    assert [s.id_sha256 for s in await store.live(clock.now)] == [busy.session.id_sha256]
