"""How the routes answer: JSON rendered by orjson, or CSV where a report offers it."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response


class JSONResponse(Response):
    """JSON rendered by orjson: the answers are plain dicts of str, int, bool, None."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


JSON_OR_CSV: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "JSON, or CSV with format=csv",
        "content": {"application/json": {}, "text/csv": {}},
    }
}
