"""Pseudonymous actors: people appear in records as keyed hashes, never as names or emails."""

from __future__ import annotations

import os


def actor_id(identity: str, salt: str) -> str:
    """A stable pseudonym for an email or login within one repository.

    Keyed by `salt`, which `Workspace.actor_salt` gives: COMIND_ACTOR_SALT when set, else a random
    key kept in the store (the repository name for a store holding records from before it had one),
    so every clone (and the CI runner) derives the same id for the same person while the id says
    nothing by itself, nor to one who reads only the git log.
    """
    from blake3 import blake3

    key = blake3(os.environ.get("COMIND_ACTOR_SALT", salt).encode(), derive_key_context="comind actor v1").digest()
    return "p-" + str(blake3(identity.strip().lower().encode(), key=key).hexdigest(length=8))


def salt_tag(salt: str) -> str:
    """A name for a key that does not give it away: what a harvest notes to tell a changed key."""
    from blake3 import blake3

    return str(blake3(salt.encode(), derive_key_context="comind actor tag v1").hexdigest(length=8))
