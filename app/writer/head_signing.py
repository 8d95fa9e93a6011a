"""The leader signs the journal's durable head at start (and at every takeover), every
`every_s` seconds, and as it stops, into the auditor's directory (app/store/signed_heads.py,
docs/operations.md "Signed heads")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

from app.config.settings import Settings
from app.store.signed_heads import HeadSigner, SignedHeadError, private_key
from app.writer.writer import Writer

log = logging.getLogger("jackpot.heads")

# How often the task looks whether a takeover calls for a signature now.
LOOK_EVERY_S = 1.0


class HeadSigning:
    """Runs beside the writer: signs while `leading()` says this process leads."""

    def __init__(
        self,
        signer: HeadSigner,
        writer: Writer,
        every_s: float,
        *,
        leading: Callable[[], bool] = lambda: True,
        terms: Callable[[], int] = lambda: 0,
    ) -> None:
        self.signer, self.writer, self.every_s = signer, writer, every_s
        self.leading, self.terms = leading, terms
        self.task: asyncio.Task[None] | None = None
        self.signed = 0

    def sign_now(self) -> None:
        seq, head = self.writer.durable_head()
        try:
            self.signer.write(seq, head, self.writer.clock())
        except OSError as error:  # the next one may succeed: the server goes on
            log.error("the head at seq %d could not be signed into %s: %s",
                      seq, self.signer.directory, error)  # fmt: skip
            return
        self.signed += 1

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name="jackpot-head-signing")

    async def stop(self) -> None:
        """After the writer drained: the last head it committed is signed."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
        if self.leading():
            self.sign_now()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        term, last = None, 0.0
        while True:
            if self.leading() and (self.terms() != term or loop.time() - last >= self.every_s):
                term, last = self.terms(), loop.time()
                self.sign_now()
            await asyncio.sleep(min(LOOK_EVERY_S, self.every_s))


def head_signing(
    settings: Settings,
    writer: Writer,
    *,
    leading: Callable[[], bool] = lambda: True,
    terms: Callable[[], int] = lambda: 0,
) -> HeadSigning | None:
    """The signing the settings ask for: the key from JACKPOT_HEAD_KEY_FILE or
    JACKPOT_HEAD_KEY (its PEM); None without one (a warning, once)."""
    pem: bytes | None = None
    if settings.head_key_file is not None:
        pem = Path(settings.head_key_file).read_bytes()
    elif settings.head_key is not None:
        pem = settings.head_key.encode()
    if pem is None:
        log.warning(
            "no head signing key (JACKPOT_HEAD_KEY_FILE or JACKPOT_HEAD_KEY): the journal's "
            "head is not signed, and a journal cut short would verify clean "
            "(docs/operations.md, Signed heads; `jackpot keygen` makes a key pair)"
        )
        return None
    try:
        key = private_key(pem)
    except SignedHeadError as error:
        raise SignedHeadError(f"the head signing key: {error}") from error
    directory = settings.signed_heads_dir or settings.data_dir / "signed-heads"
    os.makedirs(directory, exist_ok=True)
    signer = HeadSigner(key, Path(directory))
    return HeadSigning(signer, writer, settings.sign_head_every_s, leading=leading, terms=terms)
