"""Pseudonymous actors: people appear in records as keyed hashes, never as names or emails."""

from __future__ import annotations

import os


def actor_id(identity: str, salt: str) -> str:
    """A stable pseudonym for an email or login within one repository.

    Keyed by COMIND_ACTOR_SALT when set, else by the repository name, so every clone (and the CI
    runner) derives the same id for the same person while the id says nothing by itself.
    """
    from blake3 import blake3

    key = blake3(os.environ.get("COMIND_ACTOR_SALT", salt).encode(), derive_key_context="comind actor v1").digest()
    return "p-" + str(blake3(identity.strip().lower().encode(), key=key).hexdigest(length=8))
