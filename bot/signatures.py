"""Webhook signatures, checked while the body streams in (pure functions of headers and bytes).

- GitHub: ``X-Hub-Signature-256: sha256=<hex>``, the HMAC-SHA256 of the raw body keyed with the
  webhook secret.
- GitLab: ``X-Gitlab-Token``, the secret itself; or a signing token (Standard Webhooks): the
  headers ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature: v1,<base64>``, the
  HMAC-SHA256 of ``{id}.{timestamp}.{body}`` keyed with the base64 after ``whsec_``.

All comparisons are constant-time. ``start`` decides from the headers alone whatever it can, so a
request that cannot be authentic is refused before its body is read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Protocol

TOLERANCE = 300  # seconds a signed GitLab timestamp may be off: an old signature is a replay

_GITHUB = re.compile(r"sha256=[0-9a-fA-F]{64}")


class Check(Protocol):
    """A signature being checked over a body that arrives in chunks."""

    def update(self, chunk: bytes) -> None: ...

    def valid(self) -> bool: ...


class _Accepted:
    """Authentic from the headers alone (GitLab's secret token)."""

    def update(self, chunk: bytes) -> None:
        pass

    def valid(self) -> bool:
        return True


class _Hmac:
    def __init__(self, key: bytes, prefix: bytes, expected: list[bytes], encode: str) -> None:
        self._mac = hmac.new(key, prefix, hashlib.sha256)
        self._expected = expected
        self._encode = encode

    def update(self, chunk: bytes) -> None:
        self._mac.update(chunk)

    def valid(self) -> bool:
        digest = self._mac.digest()
        got = digest.hex().encode() if self._encode == "hex" else base64.b64encode(digest)
        # compare with every candidate, so the time taken says nothing about which one matched
        return sum(hmac.compare_digest(got, want) for want in self._expected) > 0


def start(forge: str, secret: str, headers: Mapping[str, str], now: float) -> Check | str:
    """A check to feed the body to, or why the request is refused already (a short reason)."""
    if forge == "github":
        signature = headers.get("x-hub-signature-256", "")
        if not _GITHUB.fullmatch(signature):
            return "missing or malformed X-Hub-Signature-256"
        return _Hmac(secret.encode(), b"", [signature[7:].lower().encode()], "hex")
    token = headers.get("x-gitlab-token")
    if token is not None and hmac.compare_digest(token.encode(), secret.encode()):
        return _Accepted()
    if "webhook-signature" not in headers:
        return "bad X-Gitlab-Token" if token is not None else "missing X-Gitlab-Token or webhook-signature"
    return _standard(secret, headers, now)


def _standard(secret: str, headers: Mapping[str, str], now: float) -> Check | str:
    message_id = headers.get("webhook-id", "")
    stamp = headers.get("webhook-timestamp", "")
    if not message_id or not stamp.isdigit():
        return "webhook-signature without webhook-id and webhook-timestamp"
    if abs(now - int(stamp)) > TOLERANCE:
        return "webhook-timestamp too far from now"
    key = signing_key(secret)
    expected = [
        value.encode()
        for version, _, value in (part.partition(",") for part in headers["webhook-signature"].split())
        if version == "v1" and value
    ]
    if not expected:
        return "webhook-signature has no v1 signature"
    return _Hmac(key, f"{message_id}.{stamp}.".encode(), expected, "base64")


def signing_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret (``whsec_<base64>``); any other secret as is."""
    if secret.startswith("whsec_"):
        try:
            return base64.b64decode(secret[6:], validate=True)
        except (binascii.Error, ValueError):
            pass
    return secret.encode()
