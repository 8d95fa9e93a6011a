"""GET /metrics over the real app: it parses, its readings follow the floor, its counters move."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.api.passwords import Passwords
from app.api.sessions import SignInPolicy, SignIns, watch_signins
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.ops.logs import RequestContextMiddleware
from app.ops.metrics import PrometheusMetrics
from app.state.accounts import Accounts
from app.state.timefmt import format_time
from app.store.sessions import MemorySessions
from tests.integration.app.support import (
    FlakyJournal,
    Samples,
    build_server,
    running,
    scrape,
    value,
)
from tests.support import ROOT

T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
NOW = 1_800_000_000_000
ROYAL = ["AS", "KS", "QS", "JS", "TS"]


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> int:
        return self.now


def bets(at: int, *boxes: tuple[int, str]) -> dict[str, Any]:
    return {
        "closed_at": format_time(at),
        "boxes": [{"box": b, "ante": "25.00", "jackpot": j} for b, j in boxes],
    }


@pytest.fixture
async def served() -> AsyncIterator[tuple[httpx.AsyncClient, Clock, FlakyJournal, Any]]:
    clock, journal = Clock(), FlakyJournal()
    app = build_server(journal=journal, clock=clock, outcome_wait_s=0.1).app
    async with running(app, "http://test") as client:
        yield client, clock, journal, app


async def test_readings_follow_the_floor_at_scrape_time(
    served: tuple[httpx.AsyncClient, Clock, FlakyJournal, Any],
) -> None:
    client, clock, _, _ = served
    before = await scrape(client)
    assert value(before, "jackpot_database_up") == 1
    assert value(before, "jackpot_writer_queue_depth") == 0
    assert value(before, "jackpot_meter_value", link="stud", meter="major") == 10000.0
    assert value(before, "jackpot_open_rounds", link="stud") == 0
    seq = value(before, "jackpot_journal_seq")

    r = await client.post("/v1/tables/T02/rounds/R1/bets", json=bets(NOW, (1, "1.00")), headers=T02)
    assert r.status_code == 200, r.text
    during = await scrape(client)
    assert value(during, "jackpot_journal_seq") > seq  # the bets (and a finalize entry)
    assert value(during, "jackpot_open_rounds", link="stud") == 1
    assert value(during, "jackpot_meter_value", link="stud", meter="major") == 10000.25
    assert value(during, "jackpot_commits_total") >= 1
    assert value(during, "jackpot_journal_rows_total") >= 1

    outcome = {"boxes": [{"box": 1, "dealt_at": format_time(NOW + 100), "cards": ROYAL}]}
    clock.now += 200
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=T02)
    assert r.json()["awards"][0]["state"] == "pending"
    pending = await scrape(client)
    assert value(pending, "jackpot_open_rounds", link="stud") == 0
    assert value(pending, "jackpot_pending_awards", link="stud") == 1
    assert value(pending, "jackpot_meter_awards_final_total", link="stud") == 0

    clock.now += 5_000
    final = await client.get("/v1/tables/T02/rounds/R1?wait=10", headers=T02)
    assert final.json()["awards"][0]["state"] == "final"
    after = await scrape(client)
    assert value(after, "jackpot_pending_awards", link="stud") == 0
    assert value(after, "jackpot_meter_awards_final_total", link="stud") == 1
    assert value(after, "jackpot_meter_value", link="stud", meter="major") == 10000.0


async def test_a_voided_pending_award_is_no_longer_counted_pending(
    served: tuple[httpx.AsyncClient, Clock, FlakyJournal, Any],
) -> None:
    """docs/design.md "the watermark": a void of its box ends an award's "jackpot pending"
    (5.20: it keeps its place on the timeline, paid to nobody): no longer a pending award."""
    client, clock, _, _ = served
    for round_id in ("R0", "R1"):  # R0 stays open: it holds R1's royal flush pending
        url = f"/v1/tables/T02/rounds/{round_id}/bets"
        r = await client.post(url, json=bets(clock.now, (1, "1.00")), headers=T02)
        assert r.status_code == 200, r.text
        clock.now += 1
    outcome = {"boxes": [{"box": 1, "dealt_at": format_time(clock.now + 5), "cards": ROYAL}]}
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=T02)
    assert r.json()["awards"][0]["state"] == "pending"
    assert value(await scrape(client), "jackpot_pending_awards", link="stud") == 1
    clock.now += 100  # past its deal: the voided award keeps its place, still pending
    void = {"reason": "foreign card found (5.8.1)"}
    r = await client.post("/v1/tables/T02/rounds/R1/void", json=void, headers=T02)
    assert r.status_code == 200, r.text
    assert value(await scrape(client), "jackpot_pending_awards", link="stud") == 0


async def test_displays_connected_are_read_from_the_broadcaster() -> None:
    broadcaster = Broadcaster(MemoryBackend())
    broadcaster.configure_link("stud", "SGD", [("major", "Major")])
    metrics = PrometheusMetrics(process=False)
    metrics.watch_broadcaster(broadcaster)
    await broadcaster.start()
    try:
        subs = [broadcaster.subscribe("stud") for _ in range(3)]
        samples = parse(metrics.text().decode())
        assert value(samples, "jackpot_displays_connected", link="stud") == 3
        subs[0].close()
        samples = parse(metrics.text().decode())
        assert value(samples, "jackpot_displays_connected", link="stud") == 2
        assert ("jackpot_redis_up", frozenset()) not in samples  # in-process: no Redis
    finally:
        await broadcaster.stop()


def parse(text: str) -> Samples:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_outcomes_are_counted_once_the_group_is_through() -> None:
    metrics = PrometheusMetrics(process=False)
    metrics.applied("bets", "T01", object())
    metrics.retry("bets", "T02")
    assert metrics.events == {}  # not answered yet: the group is not committed
    metrics.commit(2, 0.003)
    metrics.applied("void", "T01", object())
    metrics.unavailable([("void", "T01"), ("bets", "T02")])  # that commit failed
    metrics.retry("outcome", "T01")
    metrics.settle()  # a group of retries only: nothing to commit
    metrics.event("bets", "T01", "refused")
    samples = parse(metrics.text().decode())
    assert value(samples, "jackpot_events_total", kind="bets", table="T01", outcome="accepted") == 1
    assert value(samples, "jackpot_events_total", kind="bets", table="T02", outcome="retry") == 1
    assert value(samples, "jackpot_events_total", kind="void", table="T01", outcome="accepted") == 0
    assert (
        value(samples, "jackpot_events_total", kind="void", table="T01", outcome="unavailable") == 1
    )
    assert value(samples, "jackpot_events_total", kind="outcome", table="T01", outcome="retry") == 1
    assert value(samples, "jackpot_events_total", kind="bets", table="T01", outcome="refused") == 1
    assert value(samples, "jackpot_commit_batch_rows_count") == 1
    assert value(samples, "jackpot_commit_batch_rows_bucket", le="1.0") == 0
    assert value(samples, "jackpot_commit_batch_rows_bucket", le="2.0") == 1
    assert value(samples, "jackpot_commit_seconds_bucket", le="0.0025") == 0
    assert value(samples, "jackpot_commit_seconds_bucket", le="0.005") == 1
    assert value(samples, "jackpot_commit_seconds_bucket", le="+Inf") == 1
    assert value(samples, "jackpot_commit_seconds_sum") == pytest.approx(0.003)


def test_a_reading_that_fails_is_left_out_not_the_scrape() -> None:
    metrics = PrometheusMetrics(process=False)

    def broken() -> int:
        raise RuntimeError("state changing under us")

    metrics.read("jackpot_broken", "never readable", broken)
    metrics.read("jackpot_fine", "readable", lambda: 7)
    samples = parse(metrics.text().decode())
    assert value(samples, "jackpot_fine") == 7
    assert ("jackpot_broken", frozenset()) not in samples


def test_each_app_has_its_own_registry() -> None:
    one, two = PrometheusMetrics(), PrometheusMetrics()
    one.event("bets", "T01", "refused")
    assert "jackpot_events_total{" in one.text().decode()
    assert "jackpot_events_total{" not in two.text().decode()


# -- through the writer ---------------------------------------------------------------


async def test_event_counters_move_as_events_are_posted(
    served: tuple[httpx.AsyncClient, Clock, FlakyJournal, Any],
) -> None:
    client, clock, _, _ = served
    url = "/v1/tables/T01/rounds/R1/bets"
    body = bets(NOW, (1, "1.00"))
    assert (await client.post(url, json=body, headers=T01)).status_code == 200
    assert (await client.post(url, json=body, headers=T01)).status_code == 200  # a retry
    other = bets(NOW, (1, "1.00"), (2, "1.00"))
    assert (await client.post(url, json=other, headers=T01)).status_code == 409
    wrong = bets(NOW, (1, "2.00"))  # not the prescribed wager: the rules refuse it
    assert (
        await client.post("/v1/tables/T01/rounds/R2/bets", json=wrong, headers=T01)
    ).status_code == 422
    late = bets(NOW - 3_000, (1, "1.00"))  # closed more than hold (2 s) ago
    r = await client.post("/v1/tables/T01/rounds/R3/bets", json=late, headers=T01)
    assert r.status_code == 200 and r.json().get("late") is True, r.text

    samples = await scrape(client)
    events = "jackpot_events_total"
    assert value(samples, events, kind="bets", table="T01", outcome="accepted") == 2
    assert value(samples, events, kind="bets", table="T01", outcome="retry") == 1
    assert value(samples, events, kind="bets", table="T01", outcome="refused") == 2
    assert value(samples, "jackpot_late_events_total", kind="bets") == 1
    assert value(samples, "jackpot_commit_batch_rows_count") >= 2
    assert value(samples, "jackpot_commit_seconds_count") >= 2
    assert value(samples, "jackpot_http_responses_total", code="200") >= 3
    assert value(samples, "jackpot_http_responses_total", code="409") == 1


async def test_a_failed_commit_counts_unavailable_and_database_down(
    served: tuple[httpx.AsyncClient, Clock, FlakyJournal, Any],
) -> None:
    client, _, journal, _ = served
    journal.down = True
    r = await client.post("/v1/tables/T01/rounds/R1/bets", json=bets(NOW, (1, "1.00")), headers=T01)
    assert r.status_code == 503
    samples = await scrape(client)
    events = "jackpot_events_total"
    assert value(samples, events, kind="bets", table="T01", outcome="unavailable") == 1
    assert value(samples, events, kind="bets", table="T01", outcome="accepted") == 0
    assert value(samples, "jackpot_database_up") == 0
    assert value(samples, "jackpot_commit_failures_total") == 1

    journal.down = False
    r = await client.post("/v1/tables/T01/rounds/R1/bets", json=bets(NOW, (1, "1.00")), headers=T01)
    assert r.status_code == 200
    samples = await scrape(client)
    assert value(samples, events, kind="bets", table="T01", outcome="accepted") == 1
    assert value(samples, "jackpot_database_up") == 1


async def test_the_app_echoes_a_request_id(
    served: tuple[httpx.AsyncClient, Clock, FlakyJournal, Any],
) -> None:
    client, _, _, app = served
    assert any(m.cls is RequestContextMiddleware for m in app.user_middleware)
    r = await client.get("/health", headers={"X-Request-Id": "till-42"})
    assert r.headers["x-request-id"] == "till-42"
    assert len((await client.get("/health")).headers["x-request-id"]) == 16


# -- the dashboard and the alerts read names the server exports --------------------------

DEPLOY = ROOT / "deploy"


def exported_names() -> set[str]:
    """Every sample name a writer process and a display process (with Redis) can export."""
    from app.display.redis_backend import RedisBackend
    from app.display.screen_watch import ScreenWatch
    from app.display.screens import Screens

    metrics = PrometheusMetrics()
    metrics.watch_writer(build_server().writer)
    # A writer on PostgreSQL also reads its lease (app/writer/follower.py's Leadership).
    lease = SimpleNamespace(leading=True, epoch=1, takeovers=0, lease_age_s=lambda: 0.0)
    metrics.watch_leadership(lease)
    metrics.watch_broadcaster(Broadcaster(RedisBackend("redis://127.0.0.1:1/0")))
    # The console's sign-ins (app/api/sessions.py).
    watch_signins(metrics, SignIns(MemorySessions(), Accounts, Passwords(), SignInPolicy(), int))
    metrics.watch_screens(ScreenWatch(Screens(lambda link: None), Broadcaster(MemoryBackend())))
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}
    names: set[str] = set()
    for family in text_string_to_metric_families(metrics.text().decode()):
        names.update(family.name + s for s in suffixes.get(family.type, ("",)))
    return names


def test_the_dashboard_and_the_alerts_use_names_the_server_exports() -> None:
    import json
    import re

    import yaml  # type: ignore[import-untyped]

    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    alerts = yaml.safe_load((DEPLOY / "prometheus-alerts.yml").read_text())
    exprs += [str(rule["expr"]) for group in alerts["groups"] for rule in group["rules"]]
    used = {n for e in exprs for n in re.findall(r"\b(?:jackpot|process)_[a-z_]+\b", e)}
    assert used, "no metric names found"
    assert used - exported_names() == set()
