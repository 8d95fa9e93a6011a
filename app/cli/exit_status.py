"""The exit statuses of `jackpot serve` when it does not serve (docs/operations.md, "Exit
status"): each its own, so that a supervisor (systemd, an orchestrator) or an inspector
tells a refusal from a crash."""

from __future__ import annotations

INVALID_FLOOR = 2  # the floor file does not parse or validate
STARTUP_FAILED = 3  # anything else stopped the start (as uvicorn's own)
START_REFUSED = 4  # the floor file's parameters are refused by the journal's state
NOT_AUTHENTIC = 5  # an installed file differs from the sha256 its distribution recorded
CRASHED = 6  # it served, then a loop it cannot run without ended by an error
