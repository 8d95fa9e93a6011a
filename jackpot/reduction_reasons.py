"""The listed reasons a meter or a reserve may be lowered for (docs/api.md, reason codes).

Regulators allow a progressive to go down only for listed reasons (Michigan R 432.1838(4),
Nevada Regulation 5.110): every reset, and every correction that lowers a meter or its
reserve, names one of these beside its free-text reason.
"""

from __future__ import annotations

from jackpot.errors import InvalidCommandError

REASON_CODES: dict[str, str] = {
    "jackpot_paid": "the meter was won and paid (a reset after a hit, a jackpot paid by hand)",
    "malfunction": "a malfunction of the controller, a table or a display",
    "error_correction": "an error corrected: a wrong amount, a round voided after its award",
    "limit_reached": "the meter reached its limit",
    "transfer": "the amount moved to another progressive",
    "closure": "the link or its game taken off the floor",
    "regulator_order": "ordered by the regulator",
}


def lowers(kind: str, correction: str | None = None, amount: int = 0) -> bool:
    """A reset returns the meter to its seed (its excess to the reserve, or the reserve
    funding it); hand_paid pays out of the meter; void_round takes contributions back;
    an adjust lowers when it is negative."""
    if kind == "reset" or (kind == "transfer" and correction == "out"):
        return True  # a transfer's `out` side lowers its source (code `transfer`)
    if kind != "correct":
        return False
    return correction in ("hand_paid", "void_round") or (correction == "adjust" and amount < 0)


def check_reason_code(code: str | None, *, required: bool) -> None:
    """Refuse a change without a listed code where one is required, or with an unlisted one."""
    listed = ", ".join(REASON_CODES)
    if code is None:
        if required:
            raise InvalidCommandError(
                f"reason_code is required to lower a meter or a reserve: one of {listed}",
                ("reason_code",),
            )
        return
    if code not in REASON_CODES:
        raise InvalidCommandError(
            f"reason_code {code!r} is not a listed reason: one of {listed}", ("reason_code",)
        )
