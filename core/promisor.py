"""Partial clones: the blobs a clone lacks, fetched from its promisor remote as git would.

A partial clone (`git clone --filter=blob:none`, actions/checkout's `filter: blob:none`) holds
every commit and tree but only the blobs it checked out; git fetches the others when a command
needs them. pygit2 (libgit2) reads only what is on disk, so without this the old side of every
past change is unreadable: a revert's attempt gets no fingerprint and its dead end is never
matched, silently. Before reading a diff, the blobs it needs are fetched in one `git fetch` of
their ids (what git's own lazy fetch runs), and a blob read alone is fetched alone.

A clone that is not partial costs one config lookup per repository. Why a fetch failed is kept,
per repository, for the check's report (:func:`take_warning`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from comind.git import git_said

if TYPE_CHECKING:
    import pygit2

FETCH_TIMEOUT = 600  # seconds for one batch

_remotes: dict[str, str | None] = {}  # repository path -> its promisor remote (None: not a partial clone)
_failures: dict[str, list[str]] = {}  # repository path -> why its fetches failed, once per reason


def promisor_remote(repo: pygit2.Repository) -> str | None:
    """The remote a partial clone fetches missing objects from, or None for a complete clone."""
    path = repo.path
    if path not in _remotes:
        config = repo.config
        try:  # set by older git, and with repositoryformatversion 1
            name: str | None = str(config["extensions.partialclone"]) or None
        except (KeyError, ValueError):
            name = None
        if name is None:  # remote.<name>.promisor = true: what `git clone --filter` sets now
            name = next(
                (
                    entry.name[len("remote.") : -len(".promisor")]
                    for entry in config
                    if entry.name.startswith("remote.")
                    and entry.name.endswith(".promisor")
                    and str(entry.value).lower() in ("true", "yes", "on", "1")
                ),
                None,
            )
        _remotes[path] = name
    return _remotes[path]


def fetch_missing(repo: pygit2.Repository, oids: Iterable[Any]) -> int:
    """Fetch those of `oids` (blob ids; the null id is skipped) the clone lacks, in one request;
    returns how many were fetched. A failed fetch is remembered, not raised: the caller then reads
    what it can, as from any clone missing objects."""
    remote = promisor_remote(repo)
    if remote is None:
        return 0
    odb = repo.odb
    missing = sorted({str(oid) for oid in oids if any(_raw(oid)) and oid not in odb})
    if not missing:
        return 0
    try:
        done = subprocess.run(
            [
                "git",
                "--git-dir",
                repo.path,
                "-c",
                "fetch.negotiationAlgorithm=noop",
                "fetch",
                remote,
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                "--stdin",
            ],
            input="\n".join(missing) + "\n",
            capture_output=True,
            text=True,
            timeout=FETCH_TIMEOUT,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            check=False,
        )
        said = (git_said(done.stderr) or [f"git fetch exited {done.returncode}"])[0]
        ok = done.returncode == 0
    except (OSError, subprocess.TimeoutExpired) as exc:
        said, ok = str(exc), False
    if not ok:
        failures = _failures.setdefault(repo.path, [])
        if said not in failures:
            failures.append(said)
        return 0
    return len(missing)


def fetch_for_diff(repo: pygit2.Repository, diff: pygit2.Diff) -> int:
    """Fetch the blobs on both sides of every file a tree-to-tree diff changes (before its patches,
    or rename detection, read them)."""
    if promisor_remote(repo) is None:
        return 0
    return fetch_missing(repo, diff_blobs(diff))


def diff_blobs(diff: pygit2.Diff) -> Iterator[Any]:
    """The blob ids on both sides of every file a diff changes (reading no blob)."""
    import pygit2

    gitlink = pygit2.enums.FileMode.COMMIT  # a submodule's commit is not an object of this clone
    for delta in diff.deltas:
        for side in (delta.old_file, delta.new_file):
            if side.mode != gitlink:
                yield side.id


def take_warning(repo: pygit2.Repository) -> str | None:
    """What the check's report should say about the fetches into `repo` since the last call, if
    any failed."""
    failures = _failures.pop(repo.path, [])
    if not failures:
        return None
    return (
        "partial clone: blobs of past changes could not be fetched from the promisor remote "
        f"({'; '.join(failures[:2])}), so the dead ends of those changes are not matched; give the job "
        "network access to it, or clone without --filter"
    )


def fetch_failed(repo: pygit2.Repository) -> bool:
    """Whether a fetch into `repo` failed since the last :func:`take_warning`."""
    return bool(_failures.get(repo.path))


def why_unread(repo: pygit2.Repository) -> str:
    """Why blobs this clone lacks are not here, for a warning naming what could not be read: the
    promisor's failed fetch (kept for :func:`take_warning`), or no promisor to fetch them from."""
    if promisor_remote(repo) is None:
        return "not in this clone, which has no promisor remote to fetch them from"
    failures = _failures.get(repo.path)
    if failures:
        return f"not fetched from the promisor remote: {failures[0]}"
    return "not in this clone, nor fetched from its promisor remote"


def _raw(oid: Any) -> bytes:
    return oid.raw if hasattr(oid, "raw") else bytes.fromhex(str(oid))
