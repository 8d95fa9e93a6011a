"""An export's answer: the forked child's stream relayed as it comes, with the number of
matching records in `X-Total-Count` and a file name (docs/api.md "Records and reports")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

from app.audit.record_export import FORMATS
from app.store.aside import AsideStream

EXTENSIONS = {"csv": "csv", "jsonl": "jsonl"}
# The OpenAPI answers of a listing that exports: JSON, or the export's CSV or JSON lines.
JSON_OR_EXPORT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "JSON, or with format=csv|jsonl every matching record, streamed",
        "content": {"application/json": {}, "text/csv": {}, "application/x-ndjson": {}},
    }
}


async def export_response(stream: AsideStream, name: str, format: str) -> StreamingResponse:
    """The answer's head once the child has counted; its body as the child writes it. A
    child that fails mid-way breaks the answer off (no last chunk): a client sees an
    incomplete transfer, never a file that looks whole."""
    try:
        total = int(await stream.readline())
    except BaseException:
        await stream.close()
        raise

    async def body() -> AsyncIterator[bytes]:
        try:
            async for chunk in stream.chunks():
                yield chunk
        finally:
            await stream.close()

    return StreamingResponse(
        body(),
        media_type=FORMATS[format],
        headers={
            "X-Total-Count": str(total),
            "Content-Disposition": f'attachment; filename="{name}.{EXTENSIONS[format]}"',
            "Cache-Control": "no-store",
        },
    )
