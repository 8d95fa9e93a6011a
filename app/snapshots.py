"""The service's whole state as one JSON-able dict (snapshots) and back."""

from __future__ import annotations

import copy
from typing import Any

from app.service import RoundExtras, Service
from jackpot import snapshot


def dump_service(service: Service, seq: int, head: str) -> dict[str, Any]:
    return {
        "seq": seq,
        "head": head,
        "floor": snapshot.dump(service.floor),
        "extras": [
            [table, round_id, e.boxes, e.decisions, e.draws, e.hands]
            for (table, round_id), e in service.extras.items()
        ],
        "idem": dict(service.idem),
        "proposals": service.proposals,
        "audit": service.audit,
    }


def load_service(config: Any, state: dict[str, Any]) -> Service:
    service = Service(config)
    if "floor" not in state:  # nothing durable yet: the empty floor
        return service
    service.floor = snapshot.load(
        state["floor"], list(config.links), config.timing, config.retain_ms
    )
    service.extras = {
        (table, round_id): RoundExtras(boxes, decisions, draws, hands)
        for table, round_id, boxes, decisions, draws, hands in state["extras"]
    }
    service.idem = dict(state["idem"])
    # Copies: the state dict may be kept as the writer's base to rebuild from.
    service.proposals = copy.deepcopy(state["proposals"])
    service.audit = list(state["audit"])
    return service
