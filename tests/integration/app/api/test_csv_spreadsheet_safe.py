"""The audit log's CSV as an auditor's spreadsheet reads it (docs/api.md, "Records and
reports"): an operator's reason that starts like a formula, or holds a CR, stays one cell
of text in its own row."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.integration.app.support import make_client
from tests.support import OPERATOR, Clock
from tests.unit.app.audit.test_csv_cells import raw_rows

SAM = {"Authorization": "Bearer demo-supervisor"}
CORRECTIONS = "/v1/links/stud/meters/major/corrections"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async for c in make_client(Clock(), dual=False):
        yield c


async def test_reasons_with_a_cr_or_a_leading_tab_stay_text_in_their_own_rows(
    client: httpx.AsyncClient,
) -> None:
    reasons = ['fault\r=HYPERLINK("http://x")', "\t=1+1", "\r@SUM(A1)"]
    for reason in reasons:
        body = {"kind": "adjust", "amount": "1.00", "reason": reason}
        r = await client.post(CORRECTIONS, json=body, headers=SAM)
        assert r.status_code == 200, r.text
    answer = await client.get("/v1/audit?format=csv", headers=OPERATOR)
    rows = raw_rows(answer.text)
    column = rows[0].index("reason")
    assert len(rows) == 1 + len(reasons)
    assert [row[column] for row in rows[1:]] == [
        'fault\r=HYPERLINK("http://x")',
        "'\t=1+1",
        "'\r@SUM(A1)",
    ]
