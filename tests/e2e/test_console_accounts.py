"""The console's sign-in by name and password and its Accounts view, in a real headless
Chromium against a real writer (`jackpot serve` on the demo floor with dual control).
Screenshots go to artifacts/console-accounts-*.png."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Browser, Dialog, Page, expect

from tests.e2e.conftest import ARTIFACTS, Server

pytestmark = [pytest.mark.browser, pytest.mark.integration]

SAM, SUE = "demo-supervisor", "demo-supervisor-2"
ANN_PASSWORD = "ann's long console password"


def api(server: Server, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.base, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


async def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"console-accounts-{name}.png"), full_page=True)


def make_ann(server: Server) -> None:
    """A supervisor with a password: granted by sam, approved by sue (dual control)."""
    with api(server, SAM) as sam, api(server, SUE) as sue:
        body = {"name": "ann", "display_name": "Ann Tan", "role": "supervisor",
                "password": ANN_PASSWORD}  # fmt: skip
        r = sam.post("/v1/accounts", json=body)
        assert r.status_code == 202, r.text
        assert sue.post("/v1/accounts/ann/role/approve").status_code == 200


async def sign_in(page: Page, server: Server, name: str, password: str) -> None:
    await page.goto(f"{server.base}/console")
    await page.fill("#signin-name", name)
    await page.fill("#signin-password", password)
    await page.press("#signin-password", "Enter")


async def test_a_supervisor_signs_in_manages_accounts_and_signs_out(
    browser: Browser, server: Server
) -> None:
    make_ann(server)
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        await sign_in(page, server, "ann", "not the password at all")
        await expect(page.locator("#password-error")).to_have_text(
            "The name or the password is not right."
        )
        await shot(page, "wrong-password")  # the sign-in page, with its message

        await sign_in(page, server, "ann", ANN_PASSWORD)
        await expect(page.locator("#connection")).to_have_text("Live", timeout=15_000)
        await expect(page.locator("#who-name")).to_have_text("Ann Tan")
        await expect(page.locator("#who-role")).to_have_text("supervisor")
        cookies = await context.cookies()
        session = next(c for c in cookies if c["name"] == "jackpot_session")
        assert session["httpOnly"] and session["sameSite"] == "Strict"
        assert await page.evaluate("document.cookie") == ""  # the script never sees it

        # A reload finds the session again.
        await page.reload()
        await expect(page.locator("#connection")).to_have_text("Live", timeout=15_000)

        await page.click('.tabs button[data-view="accounts"]')
        accounts = page.locator("#accounts tbody tr")
        await expect(accounts).to_have_count(4)  # olivia, sam, sue from the floor file; ann
        await expect(page.locator("#sessions tbody tr")).to_have_count(1)
        await expect(page.locator("#signins tbody")).to_contain_text("wrong password")

        form = page.locator("#account-create")
        await form.locator('input[name="name"]').fill("bob")
        await form.locator('input[name="display_name"]').fill("Bob Lim")
        await form.locator('select[name="role"]').select_option("operator")
        await form.locator('input[name="password"]').fill("bob's long password")
        await form.locator('button[type="submit"]').click()
        await expect(page.locator("#accounts-result")).to_have_text("Create bob: done.")
        await expect(page.locator('#accounts tr[data-account="bob"]')).to_contain_text("active")

        row = page.locator('#accounts tr[data-account="bob"]')
        await row.locator('button:has-text("Set password")').click()
        await row.locator('input[name="password"]').fill("bob's newer long password")
        await row.locator('button:has-text("Save")').click()
        await expect(page.locator("#accounts-result")).to_have_text("Password of bob: done.")
        with httpx.Client(base_url=server.base, timeout=30) as client:
            body = {"name": "bob", "password": "bob's newer long password"}
            assert client.post("/v1/signin", json=body).status_code == 200

        await page.fill('#token-create input[name="name"]', "nightly report")
        await page.click('#token-create button[type="submit"]')
        token = (await page.locator("#token-value").text_content()) or ""
        assert token.startswith("jpt_")
        with httpx.Client(base_url=server.base, timeout=30) as client:
            mine = client.get("/v1/accounts", headers={"Authorization": f"Bearer {token}"})
            assert mine.status_code == 200  # ann's token, ann's role
        await shot(page, "view")

        async def reason(dialog: Dialog) -> None:
            await dialog.accept("left the company")

        page.once("dialog", reason)
        await page.click('#accounts tr[data-account="bob"] button:has-text("Disable")')
        await expect(page.locator('#accounts tr[data-account="bob"]')).to_contain_text("disabled")
        await shot(page, "disabled")

        await page.click("#sign-out")
        await expect(page.locator("#signin")).to_be_visible()
        await shot(page, "signed-out")
        # The old cookie, replayed by someone who kept it: refused by the server.
        with httpx.Client(base_url=server.base, timeout=30) as client:
            old = client.get(
                "/v1/accounts", headers={"Cookie": f"jackpot_session={session['value']}"}
            )
            assert old.status_code == 401
            log = client.get("/v1/signins", headers={"Authorization": f"Bearer {SAM}"}).json()
        events = [(e["event"], e["name"]) for e in log["signins"]]
        assert ("failure", "ann") in events and ("signout", "ann") in events
        assert errors == []
    finally:
        await context.close()


async def test_a_state_change_from_another_origin_is_refused(server: Server) -> None:
    with httpx.Client(base_url=server.base, timeout=30) as client:
        r = client.post("/v1/signin", json={"name": "sue", "password": "x" * 12})
        assert r.status_code == 401  # the floor file's operators have no password yet
        with api(server, SAM) as sam:
            body = {"name": "cy", "display_name": "Cy", "role": "operator",
                    "password": "cy's long password"}  # fmt: skip
            assert sam.post("/v1/accounts", json=body).status_code == 201
        r = client.post("/v1/signin", json={"name": "cy", "password": "cy's long password"})
        assert r.status_code == 200
        cookie, csrf = r.cookies["jackpot_session"], r.json()["csrf_token"]
        client.cookies.clear()
        headers = {"Cookie": f"jackpot_session={cookie}", "X-CSRF-Token": csrf}
        evil = {**headers, "Origin": "https://evil.example"}
        assert client.post("/v1/tokens", json={"name": "x"}, headers=evil).status_code == 403
        no_csrf = {"Cookie": headers["Cookie"], "Origin": server.base}
        assert client.post("/v1/tokens", json={"name": "x"}, headers=no_csrf).status_code == 403
        good = {**headers, "Origin": server.base}
        assert client.post("/v1/tokens", json={"name": "x"}, headers=good).status_code == 201
