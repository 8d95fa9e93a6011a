"""The journal's head signed with a key the database does not hold (Ed25519), one file per
signature in a directory the auditor keeps (docs/operations.md "Signed heads"): a journal
cut short or rewritten, hashes recomputed and all, no longer holds a signed head."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FORMAT = "jackpot-signed-head/1"
# head-<signed at, ms>-<seq>.json: names sort by time, and a second signature of one head
# (a restart, a takeover) gets a name of its own.
_NAME = re.compile(r"^head-(\d+)-(\d+)\.json$")


class SignedHeadError(ValueError):
    """A key or a signed-head file that cannot be read."""


@dataclass(frozen=True, slots=True)
class SignedHead:
    seq: int
    hash: str
    at_ms: int
    key_id: str  # the first 16 hex digits of the sha256 of the raw public key
    signature: str  # base64 of the Ed25519 signature of `message`

    def message(self) -> bytes:
        """What is signed: the format, the seq, the hash and the time, a line each."""
        return signed_message(self.seq, self.hash, self.at_ms)

    def text(self) -> str:
        body = {
            "format": FORMAT,
            "seq": self.seq,
            "hash": self.hash,
            "at_ms": self.at_ms,
            "key_id": self.key_id,
            "signature": self.signature,
        }
        return orjson.dumps(body).decode() + "\n"

    def file_name(self) -> str:
        return f"head-{self.at_ms:013d}-{self.seq:012d}.json"

    def verifies(self, public_key: Ed25519PublicKey) -> bool:
        try:
            public_key.verify(base64.b64decode(self.signature, validate=True), self.message())
        except (InvalidSignature, ValueError):
            return False
        return True


def signed_message(seq: int, head: str, at_ms: int) -> bytes:
    return f"{FORMAT}\n{seq}\n{head}\n{at_ms}".encode()


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def new_key_pair() -> tuple[bytes, bytes]:
    """(private key, public key), both PEM: PKCS#8 unencrypted and SubjectPublicKeyInfo."""
    private = Ed25519PrivateKey.generate()
    return (
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )


def private_key(pem: bytes) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as error:
        raise SignedHeadError(f"not an unencrypted PEM private key: {error}") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise SignedHeadError("not an Ed25519 private key")
    return key


def public_key(pem: bytes) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as error:
        raise SignedHeadError(f"not a PEM public key: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise SignedHeadError("not an Ed25519 public key")
    return key


class HeadSigner:
    """Signs heads with one private key and writes each into `directory`."""

    def __init__(self, key: Ed25519PrivateKey, directory: Path) -> None:
        self._key = key
        self.key_id = key_id(key.public_key())
        self.directory = directory

    def sign(self, seq: int, head: str, at_ms: int) -> SignedHead:
        signature = self._key.sign(signed_message(seq, head, at_ms))
        return SignedHead(seq, head, at_ms, self.key_id, base64.b64encode(signature).decode())

    def write(self, seq: int, head: str, at_ms: int) -> Path:
        """Sign the head and write its file (whole or not at all: written aside, flushed,
        then renamed into place)."""
        signed = self.sign(seq, head, at_ms)
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / signed.file_name()
        aside = path.with_suffix(".tmp")
        with aside.open("w", encoding="utf-8") as out:
            out.write(signed.text())
            out.flush()
            os.fsync(out.fileno())
        aside.replace(path)
        return path


def read_signed_head(path: Path) -> SignedHead:
    try:
        body = orjson.loads(path.read_bytes())
        if body.get("format") != FORMAT:
            raise SignedHeadError(f"{path.name}: not a {FORMAT} file")
        head = SignedHead(
            int(body["seq"]),
            str(body["hash"]),
            int(body["at_ms"]),
            str(body["key_id"]),
            str(body["signature"]),
        )
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        if isinstance(error, SignedHeadError):
            raise
        raise SignedHeadError(f"{path.name}: unreadable: {error}") from error
    return head


def signed_heads(directory: Path) -> list[SignedHead]:
    """Every signed head in `directory`, by seq, then by time (the last is the latest of
    the highest seq)."""
    if not directory.is_dir():
        raise SignedHeadError(f"{directory}: not a directory")
    heads = [read_signed_head(p) for p in directory.iterdir() if _NAME.match(p.name)]
    return sorted(heads, key=lambda h: (h.seq, h.at_ms))
