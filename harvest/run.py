"""One harvest: walk the new history once, give every commit to every git source, write the records.

Incremental: the tips harvested last time (HEAD and the default branch) are kept in
`.git/comind/harvest-state.json`; the next walk of the default branch hides its old tip, so only new
commits are read. The commits only HEAD's branch has are read again each time HEAD moves, into a
cache of their own that they replace (see `harvest`). When nothing moved, the state file answers
before pygit2 is even imported (which is why this module imports the harvest's own modules inside
the functions that use them). `--full` re-reads everything (still writing nothing new: harvested
ids and contents are a function of the history).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from comind.harvest import HARVESTER_VERSION
from comind.harvest.budget import Budget

if TYPE_CHECKING:
    import pygit2

    from comind.harvest.context import HarvestContext
    from comind.harvest.walker import CommitInfo
    from comind.records import Record
    from comind.store import Put
    from comind.workspace import Workspace

STATE_VERSION = 3  # 2: reverted subjects are kept, for the relands that name or repeat them; 3: two passes
Progress = Callable[[int, int], None]


class HarvestResult:
    def __init__(self) -> None:
        self.commits = 0
        self.new = 0  # records no store of the harvest held
        self.rederived = 0  # records held under another content hash: derived again (a new harvester)
        self.records = 0
        self.counts: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.shallow = False
        self.up_to_date = False
        self.over_budget: Counter[str] = Counter()  # setting -> records over it, not written
        self.budget_line = ""
        self.weighed = 0  # changes added to the term weights (`harvest.weights`)
        self.rekeyed = 0  # cached records given the actor key's pseudonyms (`harvest.rekey`)

    @property
    def written(self) -> int:
        """Records written: new and re-derived."""
        return self.new + self.rederived

    def add(self, put: Put) -> None:
        self.new, self.rederived = self.new + put.new, self.rederived + put.rederived

    def summary(self) -> dict[str, Any]:
        return {
            "commits": self.commits,
            "records": self.records,
            "written": self.written,
            "new": self.new,
            "rederived": self.rederived,
            "counts": dict(sorted(self.counts.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "over_budget": dict(sorted(self.over_budget.items())),
            "shallow": self.shallow,
            "up_to_date": self.up_to_date,
            "rekeyed": self.rekeyed,
        }

    def line(self) -> str:
        """One summary line, for CI logs."""
        kinds = Counter(
            {
                k.split(":", 1)[1]: v
                for k, v in self.counts.items()
                if k.split(":", 1)[0] in ("reverts", "lore", "trailers") and ":" in k
            }
        )
        parts = ", ".join(_counted(n, k) for k, n in sorted(kinds.items())) or "nothing"
        skipped = sum(self.skipped.values())
        shallow = "; shallow clone: history beyond the boundary was not read" if self.shallow else ""
        return (
            f"harvested {self.commits} commit{'' if self.commits == 1 else 's'}: {parts}; "
            f"{written_words(self.new, self.rederived)}"
            + (f"; {skipped} skipped" if skipped else "")
            + (f"; {self.budget_line}" if self.budget_line else "")
            + (f"; {self.rekeyed} cached records re-keyed (the actor key changed)" if self.rekeyed else "")
            + shallow
        )


def written_words(new: int, rederived: int) -> str:
    """`2 new records`; `6 records re-derived (0 new)`: records the store held, under another hash
    (every record a newer harvester makes differs, by its version if nothing else), are not new."""
    if rederived:
        return f"{rederived} record{'s' if rederived != 1 else ''} re-derived ({new} new)"
    return f"{new} new record{'s' if new != 1 else ''}"


# what a summary count names, where its kind alone is no noun ("12 unresolved")
_NOUNS = {
    # a revert whose target this history does not hold (free-form, or of a change made elsewhere):
    # its own diff is the attempt, at T1, so the count is of a fact, not a failure
    "unresolved": ("revert naming no known commit", "reverts naming no known commit"),
    "ambiguous": ("ambiguous revert", "ambiguous reverts"),
    "reland-unresolved": ("reland of no known attempt", "relands of no known attempt"),
    "fixes": ("Fixes trailer", "Fixes trailers"),
    "fixes-unresolved": ("Fixes trailer naming no known commit", "Fixes trailers naming no known commit"),
    "comind-record": ("Comind-Record trailer", "Comind-Record trailers"),
}


def _counted(n: int, kind: str) -> str:
    """`1 attempt`, `35 attempts`, `2 supersedes relations`, `12 reverts naming no known commit`."""
    if kind.startswith("relation-"):
        kind = f"{kind.removeprefix('relation-')} relation"
    one, many = _NOUNS.get(kind, (kind, kind + "s"))
    return f"{n} {one if n == 1 else many}"


def _load_state(ws: Workspace) -> dict[str, Any]:
    try:
        state = json.loads(ws.harvest_state.read_text())
    except (OSError, ValueError):
        return {}
    if state.get("version") != STATE_VERSION or state.get("harvester") != HARVESTER_VERSION:
        return {}  # a new harvester reads everything again
    return dict(state)


def _save_state(ws: Workspace, state: dict[str, Any]) -> None:
    path = ws.harvest_state
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, sort_keys=True))
    os.replace(tmp, path)


def _tips(ws: Workspace, head: str | None = None) -> dict[str, str]:
    tips = {"HEAD": head or ws.head(), "default": ws.default_tip()}
    return {name: sha for name, sha in tips.items() if sha}


def harvest(
    ws: Workspace,
    *,
    since: str | None = None,
    full: bool = False,
    publish: bool = False,
    progress: Progress | None = None,
    head: str | None = None,
    weigh: bool = False,
) -> HarvestResult:
    """Harvest the git history new since the last run (`_harvest`), attempts' anchors found in a
    worker process when a core is to spare (`harvest.worker`): read again without it should a record
    it was found for not be made after all."""
    run = partial(_harvest, ws, since=since, full=full, publish=publish, progress=progress, head=head)
    if weigh:  # (its weights are counted by a thread: no fork beside one)
        return run(weigh=True)
    first = HarvestResult()
    try:
        return run(worker=True, result=first)
    except Exception as exc:
        from comind.harvest.worker import Diverged  # (imported once a worker ran)

        if not isinstance(exc, Diverged):
            raise
        again = run()
        again.new += first.new  # the default branch's, written before the branch's diverged
        again.rederived += first.rederived
        return again


def _harvest(
    ws: Workspace,
    *,
    since: str | None = None,
    full: bool = False,
    publish: bool = False,
    progress: Progress | None = None,
    head: str | None = None,
    weigh: bool = False,
    worker: bool = False,
    result: HarvestResult | None = None,
) -> HarvestResult:
    """Harvest the git history new since the last run (or since `since`, or all of it with `full`).

    Two passes. The default branch's new commits go to the harvest cache (or the shared store with
    `publish`), incrementally, and so does what they leave for later commits (reverted subjects, Lore
    ids). Then the commits only HEAD's branch has are read again, from that state, into the branch
    cache, which they replace whole: what another branch harvested (an unmerged reland retiring an
    attempt, say) is gone once HEAD is elsewhere. `head` (a commit id) stands for HEAD: `check --head`.
    `weigh`: bring the term weights (`harvest.weights`) up to the default branch in a process of its
    own while the walk runs; otherwise the first check that reads them does (`weights.current`)."""
    result = result or HarvestResult()
    # publishing reads the whole default branch: what a local harvest already read must reach the store too
    state = {} if full or publish else _load_state(ws)
    tips = _tips(ws, head)
    if not tips:
        return result  # a repository without commits
    from comind.actors import salt_tag

    actors = salt_tag(ws.actor_salt())
    keyed = state.get("actors", salt_tag(ws.repo_name))
    if not since and state.get("tips") == tips and keyed == actors:
        result.up_to_date = True
        return result

    from comind.git import open_repo, since_commit
    from comind.promisor import promisor_remote

    repo = open_repo(ws.root)
    if state and keyed != actors:  # records keyed otherwise before (the store got its key, HEAD left it)
        from comind.harvest.rekey import rekey

        if (rekeyed := rekey(ws, repo)) is not None:
            result.rekeyed = rekeyed
            _save_state(ws, state | {"actors": actors})
        else:
            state = {}  # a record's commit is gone: derived again, with the new key
    result.shallow = bool(repo.is_shallow)
    default = tips.get("default")
    base = default or tips["HEAD"]  # the history whose records are kept from one run to the next
    if state.get("base") and not _extends(repo, base, state["base"]):
        state = {}  # the default branch was rewritten (or another one named): what it held may be gone
    hide = []
    if since:
        hide.append(since_commit(repo, since))
    ctx = _context(ws, repo, state)
    if worker and promisor_remote(repo) is None:  # (a partial clone fetches blobs as it reads them)
        from comind.harvest.worker import allowed

        ctx.worker_allowed = allowed()
    budget = Budget.from_config(ws.config)
    ctx.search_history([base])
    weights = None
    if weigh and default is not None and promisor_remote(repo) is None:  # (a partial clone would fetch every blob)
        from comind.harvest.weights import Pending

        # how much each line and identifier says, measured on the default branch's changes, by git
        # while the walk runs
        weights = Pending(repo.path, ws.cache_dir, default, lambda t, old: _extends(repo, t, old), full)
    kept = _walk(
        repo,
        [base],
        hide + ([state["base"]] if state.get("base") else []),
        ctx,
        result,
        progress,
        budget,
        on_default=default is not None,
    )
    if weights is not None:
        try:
            result.weighed = weights.finish()
        except OSError as exc:  # no git, or a history it cannot read: the matcher weighs every term alike
            ctx.skip("weights-error", str(exc))
    # the shared store's tombstones, not the cache's: a fresh clone or an emptied cache has none of its own
    erased = ws.store.erased_ids()
    kept = [r for r in kept if r.id not in erased]
    store = ws.store if publish else ws.harvest_store
    result.add(store.put_derived(kept, replace=not publish))
    if not state and not since and not publish:
        # a first or a fresh harvest: git-derived records it did not make again are left over from an
        # older harvester, or from branches an earlier version kept (the bot's forge records stay)
        made = {r.id for r in kept}
        ws.harvest_store.drop_derived(lambda r: r.provenance.get("source") != "git" or r.id in made, made)
    # what the default branch leaves for the next run, before the branch's commits add to it
    saved = {
        "lore_ids": {k: list(v) for k, v in ctx.lore_ids.items()},
        "reverted": {k: [list(e) for e in v] for k, v in ctx.reverted.items()},
        "reverted_changes": {k: list(v) for k, v in ctx.reverted_changes.items()},
    }
    branch = []
    if tips.get("HEAD") and tips["HEAD"] != base:
        ctx.search_history([tips["HEAD"], base])
        branch = _walk(repo, [tips["HEAD"]], [base, *hide], ctx, result, progress, budget, on_default=False)
    branch = [r for r in branch if r.id not in erased]
    result.add(ws.branch_store.put_derived(branch, replace=True))
    made = {r.id for r in branch}
    ws.branch_store.drop_derived(lambda r: r.id in made, made)
    if progress:
        progress(result.commits, result.commits)
    result.records = len(kept) + len(branch)
    result.counts, result.skipped, result.examples = ctx.counts, ctx.skipped, dict(ctx.examples)
    result.over_budget, result.budget_line = budget.over, budget.summary()
    _save_state(
        ws,
        {
            "version": STATE_VERSION,
            "harvester": HARVESTER_VERSION,
            "tips": tips,
            "base": base,
            "actors": actors,
            **saved,
        },
    )
    return result


def _extends(repo: pygit2.Repository, tip: str, old: str) -> bool:
    """Is `old` the tip itself or one of its ancestors?"""
    import pygit2

    try:
        return tip == old or bool(repo.descendant_of(tip, old))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def _context(ws: Workspace, repo: pygit2.Repository, state: dict[str, Any]) -> HarvestContext:
    from comind.harvest.context import HarvestContext

    ctx = HarvestContext(ws, repo, ws.default_tip())
    ctx.lore_ids = dict(state.get("lore_ids", {}))
    ctx.reverted = {str(k): [list(map(str, e)) for e in v] for k, v in state.get("reverted", {}).items()}
    ctx.reverted_changes = {str(k): list(map(str, v)) for k, v in state.get("reverted_changes", {}).items()}
    return ctx


def _prefetch_reverts(repo: pygit2.Repository, commits: list[CommitInfo]) -> int:
    """In a partial clone, fetch the blobs of every revert's change in one request: the attempts
    are read from them (a revert's change holds the blobs of the change it reverts), and one fetch
    per attempt would cost a round trip each."""
    import pygit2

    from comind.harvest.markers import revert_markers
    from comind.promisor import diff_blobs, fetch_missing

    oids: list[pygit2.Oid] = []
    for commit in commits:
        if not (commit.parents and revert_markers(commit.subject, commit.body)):
            continue
        try:
            oids += diff_blobs(repo.diff(commit.parents[0], commit.sha))
        except (KeyError, TypeError, ValueError, pygit2.GitError):  # unreadable here: its attempt says so later
            continue
    return fetch_missing(repo, oids)


def _walk(
    repo: pygit2.Repository,
    tips: list[str],
    hide: list[str],
    ctx: HarvestContext,
    result: HarvestResult,
    progress: Progress | None,
    budget: Budget,
    *,
    on_default: bool,
) -> list[Record]:
    """Give every commit reachable from `tips` and not from `hide`, oldest first, to every git source."""
    from comind.harvest.sources import GIT_SOURCES  # on use: a re-harvest with nothing new skips them
    from comind.harvest.walker import walk
    from comind.promisor import promisor_remote

    sources = GIT_SOURCES
    commits: Iterable[CommitInfo] = walk(repo, tips, hide, oldest_first=True)
    if not hide and tips == ctx.history_tips:  # the history the lookups search: indexed from this walk
        commits = list(commits)
        ctx.history_walked(commits)
    if promisor_remote(repo) is not None:
        commits = list(commits)
        _prefetch_reverts(repo, commits)
    try:
        return _read(commits, sources, ctx, result, progress, budget, on_default=on_default)
    finally:
        ctx.close()


def _read(
    commits: Iterable[CommitInfo],
    sources: Iterable[Any],
    ctx: HarvestContext,
    result: HarvestResult,
    progress: Progress | None,
    budget: Budget,
    *,
    on_default: bool,
) -> list[Record]:
    """`_walk`'s records: every commit given to every source, then the pending ones made."""
    records: list[Record] = []
    for commit in commits:
        result.commits += 1
        ctx._on_default.setdefault(commit.sha, on_default)  # (no descendant_of per reverted commit)
        made: list[Record] = []
        for source in sources:
            try:
                made.extend(source.harvest(commit, ctx))
            except Exception as exc:  # one odd commit never stops a harvest: it is counted and shown
                ctx.skip(f"{source.NAME}-error", f"{commit.sha[:12]}: {type(exc).__name__}: {exc}")
        records.extend(budget.commit(made))
        if progress and result.commits % 500 == 0:
            progress(result.commits, 0)
    if ctx.worker_allowed:
        from comind.harvest.worker import resolve

        records = resolve(records)
    return [r for r in records if r.id not in ctx.dropped] if ctx.dropped else records
