"""A must-hit-by trigger sealed in its journal entry: only the writers' key opens it.

The entry publishes the commitment in clear (jackpot/mystery.py); the trigger and nonce
("<trigger>|<nonce>") are XORed with an HMAC-SHA256 keystream keyed by
JACKPOT_MYSTERY_KEY over the commitment (unique per draw: a fresh 128-bit nonce), so
recovery, a standby and `jackpot verify` holding the key rebuild the trigger, and the
commitment itself proves the opened text is the one drawn. Which key: app/config/mystery_key.py
(the demo's well-known one only under `jackpot demo`).
"""

from __future__ import annotations

import hashlib
import hmac

DEMO_KEY = "jackpot-demo-mystery-key: not a secret"


class SealError(ValueError):
    """A sealed trigger that does not open to its commitment with this key."""


def _stream(key: str, commitment: str, size: int) -> bytes:
    blocks = (size + 31) // 32
    return b"".join(
        hmac.new(key.encode(), f"{commitment}|{i}".encode(), hashlib.sha256).digest()
        for i in range(blocks)
    )[:size]


def _xor(data: bytes, key: str | None, commitment: str) -> bytes:
    if key is None:
        raise SealError("no key to seal or open a trigger: JACKPOT_MYSTERY_KEY is unset")
    return bytes(a ^ b for a, b in zip(data, _stream(key, commitment, len(data)), strict=True))


def seal(key: str | None, commitment: str, text: str) -> str:
    return _xor(text.encode(), key, commitment).hex()


def unseal(key: str | None, commitment: str, sealed: str) -> str:
    opened = _xor(bytes.fromhex(sealed), key, commitment)
    if hashlib.sha256(opened).hexdigest() != commitment:
        raise SealError("the sealed trigger does not open to its commitment with this key")
    return opened.decode()
