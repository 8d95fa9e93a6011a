"""The accounts as entries leave them: a property over any sequence of account changes."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.floor_state import FloorState
from jackpot.errors import JackpotError
from tests.support import DEMO

NAMES = ("ann", "bob", "cy")
CONFIG = floor_config(load_floor(DEMO))


def change(kind: str, name: str, extra: dict[str, Any], now: int) -> dict[str, Any]:
    return {"kind": kind, "now": now, "by": "ann", "name": name, **extra}


CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["account_disable", "account_enable", "account_role", "account_grant"]),
        st.sampled_from(NAMES),
        st.sampled_from(["operator", "supervisor", "auditor"]),
        st.booleans(),
    ),
    max_size=30,
)


@given(CHANGES)
def test_the_floor_always_keeps_an_active_supervisor_and_refusals_change_nothing(
    changes: list[tuple[str, str, str, bool]],
) -> None:
    service = FloorState(CONFIG)
    for name in NAMES:
        made = "supervisor" if name == "ann" else "operator"
        fields: dict[str, Any] = {
            "display_name": name,
            "role": made,
            "password": None,
            "pending_role": None,
        }
        service.apply(change("account_create", name, fields, 1))
    for now, (kind, name, role, flag) in enumerate(changes, start=2):
        extras: dict[str, dict[str, Any]] = {
            "account_disable": {"reason": "r"},
            "account_enable": {"reason": "r"},
            "account_role": {"role": role, "pending": flag},
            "account_grant": {"approve": flag},
        }
        extra = extras[kind]
        before = repr(service.accounts)
        generations = {a.name: a.generation for a in service.accounts.by_name.values()}
        try:
            service.apply(change(kind, name, extra, now))
        except JackpotError:
            assert repr(service.accounts) == before
        assert service.accounts.active_supervisors() != []
        for account in service.accounts.by_name.values():
            assert account.generation >= generations[account.name]
