"""The service's settings: environment variables (and CLI options) read once at start."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """docs/api.md "Running". DATABASE_URL, REDIS_URL and JACKPOT_CONFIG keep their plain names
    (what docker-compose and twelve-factor tooling set); everything else is JACKPOT_*.

    Code may pass the field names directly: `Settings(database_url=..., config=...)`.
    """

    model_config = SettingsConfigDict(
        env_prefix="JACKPOT_",
        populate_by_name=True,
        extra="ignore",
        frozen=True,
    )

    # None: start the embedded PostgreSQL (pgserver) under data_dir.
    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "database_url")
    )
    # None: broadcast in-process only.
    redis_url: str | None = Field(
        default=None, validation_alias=AliasChoices("REDIS_URL", "redis_url")
    )
    # The floor TOML (app.config.floor_file); the CLI's --config overrides it.
    config: Path | None = Field(
        default=None, validation_alias=AliasChoices("JACKPOT_CONFIG", "config")
    )
    data_dir: Path = Path(".jackpot")
    host: str = "127.0.0.1"
    port: int = 8000
    # Group commit: the writer appends at most this many journal entries per transaction.
    commit_max_batch: int = Field(default=512, ge=1)
    # A snapshot of the floor's state every this many journal entries (bounds replay time).
    snapshot_every: int = Field(default=20_000, ge=1)
    # None: displays need no token (docs/design.md "Who may do what").
    display_token: str | None = None
    # Logging (app.ops.logs): JACKPOT_LOG_FORMAT=json for one JSON object a line, else text.
    log_format: Literal["text", "json"] = "text"
    log_level: str = "info"
    # JACKPOT_ACCESS_LOG=1: one line per HTTP request (off: the writer's hot path).
    access_log: bool = False
    # A request body above this is refused (413) before it is read whole: the largest
    # table event (52 boxes, docs/api.md) is under 16 KiB.
    max_body_bytes: int = Field(default=65_536, ge=1_024)
    # Connection limits (app/cli/serving.py; docs/operations.md "Limits"), per process: beyond
    # max_connections open connections (display websockets included) new requests and
    # websockets get 503; a request must arrive whole within request_read_timeout_s; an
    # idle keep-alive connection is closed after keep_alive_s (more than the proxy's own
    # upstream keep-alive, so the proxy never reuses a connection we are closing).
    max_connections: int = Field(default=4_096, ge=16)
    request_read_timeout_s: float = Field(default=10.0, gt=0)
    keep_alive_s: int = Field(default=20, ge=1)
    # HMAC-SHA256 key for the display messages carried over Redis (app/display/redis_backend.py):
    # the writer signs, display processes drop what is not signed with it. None: unsigned,
    # and anyone who can publish on that Redis can change what screens show (a warning
    # at start).
    redis_secret: str | None = None
    # The key that seals must-hit-by triggers in the journal (app/state/sealing.py): the
    # same on every writer and for `jackpot verify`. None: the demo's well-known key.
    mystery_key: str | None = None
    # The writer's lease (app/store/lease.py; docs/operations.md, "Standby writers"): a
    # standby takes over this long after the leader's last renewal, by the database's
    # clock; the leader renews every third of it.
    lease_ms: int = Field(default=3_000, ge=100)
    # The leader's lock (app/store/leader_lock.py): a standby takes over at once when the
    # leader's process dies. It needs a direct connection (or a pooler in session mode):
    # turn it off behind a transaction-mode pooler, and takeovers wait for the lease.
    leader_lock: bool = True
    # A writer on a floor holding the demo floor's published tokens: only `jackpot demo`
    # and the tests set JACKPOT_DEMO_TOKENS=1 (docs/operations.md, "The floor file").
    demo_tokens: bool = False
    # /docs and /redoc (their pages load scripts from a public CDN): off unless asked.
    api_docs: bool = False
    # The journal's head signed with Ed25519 (app/writer/head_signing.py; docs/operations.md,
    # "Signed heads"): the private key as a PEM file or as its text, the directory the
    # signed heads are written to (default: data_dir/signed-heads), and how often.
    head_key_file: Path | None = None
    head_key: str | None = Field(default=None, repr=False)
    signed_heads_dir: Path | None = None
    sign_head_every_s: float = Field(default=60.0, gt=0)
