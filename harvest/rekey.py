"""The harvest cache under a new actor key, without harvesting again.

Pseudonyms are keyed (`comind.actors`), so when the key changes (the store gets one, or HEAD moves to
a branch whose committed store has another) every cached record's actor is stale. A git record's actor
is its commit's author, pseudonymized: `rekey` reads each author back from the commit the record names
(`head_commit`) and writes the record again, so the cache equals a fresh harvest under the new key at
the cost of one object lookup per record. Merge-request records name no commit: they keep the key they
were harvested with (docs: harvest, "Actor keys").

The cache as it was keyed before is kept aside (hard links) in `harvest-keyed/<tag>/`, the newest
`KEEP_KEYED`, each with the listing of the cache it was re-keyed into: switching back, while that is
still the cache, swaps the two folders instead of re-keying again.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from comind.store.layout import ERASED, INBOX, SNAPSHOTS

if TYPE_CHECKING:
    import pygit2

    from comind.records import Record
    from comind.workspace import Workspace

KEYED = "harvest-keyed"  # under the cache folder: <tag>/ a harvest cache, <tag>.pair what it pairs with
KEEP_KEYED = 2  # caches kept under other keys: a store's key, the repository name's, one more


def rekey(ws: Workspace, repo: pygit2.Repository, old: str, new: str) -> bool:
    """Bring the harvest cache from the key tagged `old` to the current one, tagged `new` (`salt_tag`).
    False when a git record's commit cannot be read: the caller harvests from scratch instead."""
    cache = ws.harvest_store.local_root
    if cache is None or not (cache / INBOX).is_dir():
        return True  # nothing harvested yet
    root = ws.cache_dir / KEYED
    if _pair(root, new) == f"{old} {_listing(cache)}":
        _set_aside(cache, root, old)
        os.replace(root / new, cache)
        (root / f"{new}.pair").unlink()
    else:
        _forget(root, new)
        _set_aside(cache, root, old, link=True)
        if not _rekey_records(ws, repo):
            _forget(root, old)
            return False
    (root / f"{old}.pair").write_text(f"{new} {_listing(cache)}\n")
    _bound(root)
    return True


def forget_keyed(ws: Workspace) -> None:
    """Drop the caches kept under other keys (a record erased or cleaned must not come back with them)."""
    shutil.rmtree(ws.cache_dir / KEYED, ignore_errors=True)


def _rekey_records(ws: Workspace, repo: pygit2.Repository) -> bool:
    import pygit2

    from comind.actors import actor_id
    from comind.harvest.walker import identity

    salt = ws.actor_salt()
    fresh: list[Record] = []
    for record in ws.harvest_store.read(warn=False).records.values():
        provenance = record.provenance
        if provenance.get("source") != "git":
            continue  # a merge request's: its author is the forge's to tell
        try:
            commit = repo[str(provenance["head_commit"])]
        except (KeyError, ValueError, pygit2.GitError):
            return False
        name, email = identity(commit.author)
        actor = actor_id(email or name, salt)
        if actor != provenance.get("actor"):
            fresh.append(_with_actor(record, actor))
    ws.harvest_store.put_derived(fresh, replace=True)
    return True


def _with_actor(record: Record, actor: str) -> Record:
    from comind.records import Record, content_hash

    data = {k: v for k, v in record.data.items() if k != "hash"}
    data["provenance"] = {**record.provenance, "actor": actor}
    data["hash"] = content_hash(data)
    return Record(data)


def _listing(cache: Path) -> str:
    """A digest of what the cache holds: its object names say their contents (`<id>-<hash>`)."""
    from blake3 import blake3

    names: list[str] = []
    for sub in (INBOX, SNAPSHOTS, ERASED):
        try:
            names += sorted(sub + name for name in os.listdir(cache / sub))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return str(blake3("\n".join(names).encode()).hexdigest(length=16))


def _pair(root: Path, tag: str) -> str | None:
    try:
        return (root / f"{tag}.pair").read_text().strip() if (root / tag).is_dir() else None
    except OSError:
        return None


def _set_aside(cache: Path, root: Path, tag: str, *, link: bool = False) -> None:
    """The cache kept as `root/tag`: moved, or with `link` hard-linked (its objects are never written
    in place: a put is create-only, a change a new object)."""
    _forget(root, tag)
    root.mkdir(exist_ok=True)
    if link:
        shutil.copytree(cache, root / tag, copy_function=os.link)
    else:
        os.replace(cache, root / tag)


def _forget(root: Path, tag: str) -> None:
    (root / f"{tag}.pair").unlink(missing_ok=True)
    shutil.rmtree(root / tag, ignore_errors=True)


def _bound(root: Path) -> None:
    """Keep the newest `KEEP_KEYED` caches, and none without its pair (left by a run that stopped)."""
    pairs = sorted(root.glob("*.pair"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    kept = {p.stem for p in pairs[:KEEP_KEYED] if (root / p.stem).is_dir()}
    for entry in root.iterdir():
        if entry.name.removesuffix(".pair") not in kept:
            _forget(root, entry.name.removesuffix(".pair"))
