"""The harvest cache under a new actor key, without harvesting again.

Pseudonyms are keyed (`comind.actors`), so when the key changes (the store gets one, or HEAD moves to
a branch whose committed store has another) every cached record's actor is stale. A git record's actor
is its commit's author, pseudonymized: `rekey` reads each author back from the commit the record names
(`head_commit`) and writes the record again, so the cache equals a fresh harvest under the new key at
the cost of one object lookup per record. Merge-request records name no commit: they keep the key they
were harvested with (docs: harvest, "Actor keys").

Re-keying is idempotent (each actor is computed again from its commit), so a run stopped half-way
is finished by the next; switching branches back and forth re-keys each time, at that same cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from comind.store.layout import INBOX

if TYPE_CHECKING:
    import pygit2

    from comind.records import Record
    from comind.workspace import Workspace


def rekey(ws: Workspace, repo: pygit2.Repository) -> int | None:
    """Bring the harvest cache's git records to the current actor key: how many were written again.
    None when a record's commit cannot be read: the caller harvests from scratch instead."""
    import pygit2

    from comind.actors import actor_id
    from comind.harvest.walker import identity

    cache = ws.harvest_store.local_root
    if cache is None or not (cache / INBOX).is_dir():
        return 0  # nothing harvested yet
    salt = ws.actor_salt()
    fresh: list[Record] = []
    for record in ws.harvest_store.read(warn=False).records.values():
        provenance = record.provenance
        if provenance.get("source") != "git":
            continue  # a merge request's: its author is the forge's to tell
        try:
            commit = repo[str(provenance["head_commit"])]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        name, email = identity(commit.author)
        actor = actor_id(email or name, salt)
        if actor != provenance.get("actor"):
            fresh.append(_with_actor(record, actor))
    ws.harvest_store.put_derived(fresh, replace=True)
    return len(fresh)


def _with_actor(record: Record, actor: str) -> Record:
    from comind.records import Record, content_hash

    data = {k: v for k, v in record.data.items() if k != "hash"}
    data["provenance"] = {**record.provenance, "actor": actor}
    data["hash"] = content_hash(data)
    return Record(data)
