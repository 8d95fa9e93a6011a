"""The demo floor (app/demo/floor.toml): the floor `jackpot demo` runs, whose tokens are
published in the repository, so that no other server may run on them."""

from pathlib import Path

from app.config.floor_file import FloorFile, load_floor

DEMO_FLOOR = Path(__file__).resolve().parents[1] / "demo" / "floor.toml"


def demo_tokens_in(floor: FloorFile) -> list[str]:
    """The floor's entries whose token is one of the demo floor's ("tables T01", ...)."""
    demo = load_floor(DEMO_FLOOR)
    published = {t.token_sha256 for t in demo.tables} | {o.token_sha256 for o in demo.operators}
    return [f"tables {t.id}" for t in floor.tables if t.token_sha256 in published] + [
        f"operators {o.name}" for o in floor.operators if o.token_sha256 in published
    ]
