"""Where the demo floor is: the default floor file of every command (app/demo/floor.toml)."""

from pathlib import Path

DEMO_FLOOR = Path(__file__).resolve().parents[1] / "demo" / "floor.toml"
