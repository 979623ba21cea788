"""One harvest: walk the new history once, give every commit to every git source, write the records.

Incremental: the tips harvested last time (HEAD and the default branch) are kept in
`.git/comind/harvest-state.json`; the next walk hides them, so only new commits are read. When
nothing moved, the state file answers before pygit2 is even imported. `--full` re-reads everything
(still writing nothing new: harvested ids and contents are a function of the history).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from comind.errors import ComindError

if TYPE_CHECKING:
    from comind.workspace import Workspace

# Bump when what is harvested changes: the next harvest re-reads all. 2: "add back" relands; 3: back-outs,
# "…, reverts #N", merges of a branch's revert, people left out of revert reasons; 4: Go's prefixed
# 'pkg: revert "x"' and "This CL reverts commit <sha>", relands said in the body only (a revert of a
# revert, "Reland of #N"), markers in a squash body real only when their target is on the default branch.
HARVESTER_VERSION = "10"
STATE_FILE = "harvest-state.json"
STATE_VERSION = 2  # 2: reverted subjects are kept, for the relands that name or repeat them
Progress = Callable[[int, int], None]


class HarvestResult:
    def __init__(self) -> None:
        self.commits = 0
        self.written = 0
        self.records = 0
        self.counts: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.shallow = False
        self.up_to_date = False

    def summary(self) -> dict[str, Any]:
        return {"commits": self.commits, "records": self.records, "written": self.written,
                "counts": dict(sorted(self.counts.items())), "skipped": dict(sorted(self.skipped.items())),
                "shallow": self.shallow, "up_to_date": self.up_to_date}

    def line(self) -> str:
        """One summary line, for CI logs."""
        kinds = Counter({k.split(":", 1)[1]: v for k, v in self.counts.items()
                         if k.split(":", 1)[0] in ("reverts", "lore", "trailers") and ":" in k})
        parts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "nothing"
        skipped = sum(self.skipped.values())
        shallow = "; shallow clone: history beyond the boundary was not read" if self.shallow else ""
        return (f"harvested {self.commits} commits: {parts}; {self.written} new records"
                + (f"; {skipped} skipped" if skipped else "") + shallow)


def _state_path(ws: Workspace) -> Any:
    return ws.cache_dir / STATE_FILE


def _load_state(ws: Workspace) -> dict[str, Any]:
    try:
        state = json.loads(_state_path(ws).read_text())
    except (OSError, ValueError):
        return {}
    if state.get("version") != STATE_VERSION or state.get("harvester") != HARVESTER_VERSION:
        return {}  # a new harvester reads everything again
    return dict(state)


def _save_state(ws: Workspace, state: dict[str, Any]) -> None:
    path = _state_path(ws)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, sort_keys=True))
    os.replace(tmp, path)


def _tips(ws: Workspace) -> dict[str, str]:
    tips = {"HEAD": ws.head(), "default": ws.default_tip()}
    return {name: sha for name, sha in tips.items() if sha}


def _default_history(repo: Any, tips: dict[str, str], hide: list[str]) -> set[str] | None:
    """Ids of the commits reachable from the default tip and not from ``hide`` (None: all of the
    walk, when HEAD is the default tip or missing)."""
    default = tips.get("default")
    if default is None:
        return set()  # no default branch: nothing is on it
    if tips.get("HEAD") in (None, default):
        return None
    import pygit2

    walker = repo.walk(default, pygit2.enums.SortMode.NONE)
    for rev in hide:
        try:
            walker.hide(repo.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return {str(c.id) for c in walker}


def harvest(ws: Workspace, *, since: str | None = None, full: bool = False, publish: bool = False,
            progress: Progress | None = None) -> HarvestResult:
    """Harvest the git history new since the last run (or since `since`, or all of it with `full`)."""
    result = HarvestResult()
    state = {} if full else _load_state(ws)
    tips = _tips(ws)
    if not tips:
        return result  # a repository without commits
    if not since and state.get("tips") == tips:
        result.up_to_date = True
        return result
    import pygit2

    from comind.harvest import git_sources
    from comind.harvest.context import HarvestContext
    from comind.harvest.walker import open_repo, walk

    repo = open_repo(ws.root)
    result.shallow = bool(repo.is_shallow)
    ctx = HarvestContext(ws, repo, ws.default_tip())
    ctx.lore_ids = dict(state.get("lore_ids", {}))
    ctx.reverted = {str(k): [list(map(str, e)) for e in v] for k, v in state.get("reverted", {}).items()}
    hide = list(state.get("tips", {}).values())
    if since:
        try:
            hide.append(str(repo.revparse_single(since).peel(pygit2.Commit).id))
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise ComindError(f"unknown revision '{since}'") from exc
    sources = list(git_sources().values())
    records = []
    on_default = _default_history(repo, tips, hide)
    for commit in walk(repo, list(dict.fromkeys(tips.values())), hide, oldest_first=True):
        result.commits += 1
        # A commit of this walk is on the default branch exactly when the default tip's walk
        # (hiding the same commits) holds it: answered here instead of one descendant_of each
        # (~50 ms apiece on a long history), which the revert source asks for every reverted commit.
        ctx._on_default.setdefault(commit.sha, on_default is None or commit.sha in on_default)
        for source in sources:
            try:
                records.extend(source.harvest(commit, ctx))
            except Exception as exc:  # one odd commit never stops a harvest: it is counted and shown
                ctx.skip(f"{source.NAME}-error", f"{commit.sha[:12]}: {type(exc).__name__}: {exc}")
        if progress and result.commits % 500 == 0:
            progress(result.commits, 0)
    if progress:
        progress(result.commits, result.commits)
    store = ws.store if publish else ws.harvest_store
    result.records = len(records)
    result.written = store.put_derived(records, replace=not publish)
    result.counts, result.skipped, result.examples = ctx.counts, ctx.skipped, dict(ctx.examples)
    _save_state(ws, {"version": STATE_VERSION, "harvester": HARVESTER_VERSION, "tips": tips,
                     "lore_ids": ctx.lore_ids, "reverted": ctx.reverted})
    return result
