"""`comind preflight --diff [RANGE] | --staged`: the check before the commit.

The change (a range, the working tree or the index, written as a commit by `worktree`) goes
through the same producers as `comind check` (compiled constraints, the dead-end rulebook), then
the records anchored to the files and symbols it touches are added: rejected alternatives of
decisions there, constraints, gotchas and attempts, each with status, trust and evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from comind import promisor
from comind.checks.change import compute_change
from comind.checks.findings import LEVELS, Report
from comind.checks.run import CheckRun, constraint_violations, dead_ends, unread
from comind.errors import ComindError

from .entries import entry_of, exists, followed, person_confirmed, where_now
from .render import Entry
from .worktree import PendingTree, uncommitted_commit

if TYPE_CHECKING:
    from comind.anchoring import Anchorer
    from comind.codeindex import Snapshot
    from comind.ledger import Ledger
    from comind.workspace import Workspace

HIDDEN = ("quarantined", "retracted", "superseded")
SECTIONS = {
    "reproposes": "re-proposes a dead end",
    "breaks": "breaks a constraint",
    "rejected": "rejected alternatives on this code",
    "anchored": "on the code it touches",
}


# a finding's section by its type; the others (dead ends, retries, relands) re-propose
_SECTION_OF = {"violation": "breaks", "not_run": "breaks", "suppression": "breaks"}


@dataclass(frozen=True)
class Item:
    section: str
    level: str  # note | warning | error
    entry: Entry
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "level": self.level, "message": self.message, **self.entry.to_json()}


@dataclass
class Preflight:
    mode: str
    base: str | None
    head: str | None
    items: list[Item] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # changed files the clone lacks: a partial result
    # the commit written for the uncommitted change (the working tree, or the index), on no ref, child of
    # HEAD: `head` stays the repository's HEAD, which the user knows
    uncommitted_commit: str | None = None

    def exit_code(self, fail_level: str) -> int:
        if fail_level == "none":
            return 0
        floor = LEVELS.index(fail_level)
        return 1 if any(LEVELS.index(i.level) >= floor for i in self.items) else 0

    def nothing(self) -> str:
        """What to say when there is no item: a plan has no change to re-propose or break anything."""
        if self.mode == "plan":
            return "comind preflight: no record bears on this plan"
        return "comind preflight: nothing re-proposed, no constraint broken, no record on what it touches"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "mode": self.mode,
            "base": self.base,
            "head": self.head,
            "uncommitted_commit": self.uncommitted_commit,
            "touched": self.touched,
            "items": [i.to_json() for i in self.items],
            "warnings": self.warnings,
            "partial": bool(self.unread),
            "unread": self.unread,
        }


class Resolved(NamedTuple):
    base: str
    head: str
    written: str = ""  # "working_tree" | "index": `head` is that, written as a commit (`worktree`)


def resolve(ws: Workspace, spec: str | None, *, staged: bool, tree: PendingTree | None = None) -> Resolved:
    """(base, head) commits: `A..B`, `A...B` (from their merge base), `A` (the working tree
    against A) or nothing (the working tree, or the index, against HEAD), as `git diff` reads them.
    `tree`: the working tree's (or the index's) tree, already being written (`PendingTree`)."""
    index = ws.index
    if ws.head() is None:
        raise ComindError("preflight: the repository has no commit to compare with")

    def commit(rev: str) -> str:
        return str(index.resolve(rev or "HEAD").id)

    if spec and "..." in spec:
        a, _, b = spec.partition("...")
        head = commit(b)
        found = index.repo.merge_base(commit(a), head)
        if found is None:
            raise ComindError(f"--diff {spec}: no common ancestor")
        return Resolved(str(found), head)
    if spec and ".." in spec:
        a, _, b = spec.partition("..")
        return Resolved(commit(a), commit(b))
    base = commit(spec or "HEAD")
    head = uncommitted_commit(index.repo, ws.root, ws.head_dir, base, staged=staged, tree=tree)
    return Resolved(base, head, "index" if staged else "working_tree")


def preflight_change(
    ws: Workspace, ledger: Ledger, base: str, head: str, mode: str = "diff", *, written: str = ""
) -> Preflight:
    """`written`: `head` is the working tree or the index written as a commit (`Resolved.written`)."""
    index = ws.index
    promisor.take_warning(index.repo)  # (an earlier question's, in a long-lived server)
    change = compute_change(index, base, head)  # (in a partial clone, it fetches what the snapshots read)
    run = CheckRun(ws, ledger, base, head, change, index.snapshot(head), index.snapshot(base), record_enforced=False)
    report = Report(base=base, head=head, repo=ws.repo_name)
    report.unread, warning = unread(index.repo, change)
    constraint_violations(run, report)
    dead_ends(run, report)
    result = Preflight(
        mode, base, ws.head() if written else head, warnings=[*report.warnings, *([warning] if warning else [])]
    )
    result.uncommitted_commit = head if written else None
    result.unread = report.unread
    touched = run.touched_symbols()
    result.touched = sorted(f"{p}::{q}" for p, q in touched) or sorted(change.paths)
    records = {r.id: r for r in run.records}
    confirmed = person_confirmed(ledger.relations())
    seen: set[str] = set()
    from comind.anchoring import Anchorer
    from comind.query import statuses
    from comind.why import gone_paths

    cached = Anchorer(ws.index, ws.config.drift_threshold)  # (where the statuses found the code: cached)
    anchorer = ThroughBase(cached, run.base_snapshot)

    def now(anchor: Mapping[str, Any]) -> tuple[str, str]:
        return followed(anchor, run.head_snapshot, anchorer)

    for f in report.sorted():
        record = records.get(f.record_id or "")
        if record is None or record.id in seen:
            continue
        if f.type == "suppression" and _on_touched(record.anchors, change.paths, touched, now) is None:
            continue  # an expired suppression elsewhere is `comind check`'s to report, not this change's
        section = _SECTION_OF.get(f.type) or ("rejected" if record.kind == "decision" else "reproposes")
        status = run.statuses([record])[record.id]
        read = (f.path, (f.line, f.end_line or f.line) if f.line else None) if f.path else None  # where it is here
        entry = entry_of(
            record,
            status,
            confirmed=record.id in confirmed,
            why=f.message[:200],
            read=read,
            snapshot=run.head_snapshot,
            anchorer=anchorer,
        )
        result.items.append(Item(section, f.level, entry, f.message))
        seen.add(record.id)
    # candidates as `why` finds them (on the files changed or gone since, or on the names touched),
    # then re-anchoring says which are on the change: a file and its symbol may both be renamed since
    names = sorted({q.rsplit(".", 1)[-1] for _, q in touched})
    paths = sorted({*change.paths, *gone_paths(ledger, index, run.head_snapshot)})
    near = [r for r in ledger.anchored_near(paths, names) if r.kind != "relation" and r.id not in seen]
    ons = {r.id: on for r in near if (on := _on_touched(r.anchors, change.paths, touched, now)) is not None}
    near = [r for r in near if r.id in ons]
    # their code followed to head, as `why` and `log` follow it: the run follows only the records on
    # the paths touched, not those found through a rename since (gone_paths)
    derived = statuses(ws, ledger, near, at=head, near={r.id for r in near})
    for record in near:
        status = derived[record.id]
        if status.state in HIDDEN or status.trust == 0:
            continue
        how, anchor = ons[record.id]
        section = "rejected" if record.kind == "decision" and record.fields.get("alternatives") else "anchored"
        path, _symbol, span = where_now(anchor, run.head_snapshot, anchorer)
        if path and path.endswith("/"):  # on a folder: read the files the change edits in it (as a hook does)
            path = next((p for p in sorted(change.paths) if p.startswith(path) and exists(run.head_snapshot, p)), None)
        read = (path, span) if path else None
        entry = entry_of(  # on the anchor the change touches, as a hook's edit is (not its first subject)
            record,
            status,
            confirmed=record.id in confirmed,
            why=how,
            read=read,
            snapshot=run.head_snapshot,
            anchorer=anchorer,
            shown_by=dict(anchor),
        )
        result.items.append(Item(section, "note", entry, how))
        seen.add(record.id)
    cached.flush()
    promisor.take_warning(index.repo)  # said as `warning`, of the files it left unread
    if written:
        result.items = [replace(i, entry=uncommitted(ws, i.entry, head, written)) for i in result.items]
    order = list(SECTIONS)
    result.items.sort(key=lambda i: (order.index(i.section), -LEVELS.index(i.level), i.entry.kind, i.entry.id))
    return result


def preflight_plan(
    ws: Workspace, ledger: Ledger, text: str, on: Sequence[Mapping[str, Any]] = (), limit: int = 10
) -> Preflight:
    """`--plan`: the records ranked for a plan in words (`ranking.rank`), nearest `on` first."""
    from comind.query import current_time, statuses

    from .ranking import plan_words, rank

    head = ws.head()
    if head:
        named_at(ws, head, on)
    records = [r for r in ledger.all() if r.kind != "relation"]
    derived = statuses(ws, ledger, records)
    result = Preflight("plan", None, head)
    snapshot = anchorer = None
    if head:  # where the code is now, as the statuses found it (from the index cache)
        from comind.anchoring import Anchorer

        snapshot, anchorer = ws.index.snapshot(head), Anchorer(ws.index, ws.config.drift_threshold)

    def now(anchor: Mapping[str, Any]) -> tuple[str, str]:  # `--on` names the code as it is now
        return followed(anchor, snapshot, anchorer)

    words = plan_words(text)
    relevance = ledger.relevance(words)
    ranked = rank(records, derived, relevance, current_time(), on, limit, where=now if head else None, words=words)
    confirmed = person_confirmed(ledger.relations())
    for r in ranked:
        why = f"score {r.score:.2f}: {r.why}"  # two places, as the relevance beside it
        entry = entry_of(
            r.record, r.status, confirmed=r.record.id in confirmed, why=why, snapshot=snapshot, anchorer=anchorer
        )
        result.items.append(Item("plan", "note", entry, entry.why))
    if anchorer is not None:
        anchorer.flush()
    return result


def uncommitted(ws: Workspace, entry: Entry, head: str, written: str) -> Entry:
    """An entry whose code was found at `head`, the working tree or the index written as a commit
    on no ref (`worktree`), said to be verified there, on HEAD (at HEAD where its tree is HEAD's)."""
    if entry.verified_at != head:
        return entry  # (not found there: as anchored, at the commit the anchor names)
    import pygit2

    at = ws.head() or ""
    repo = ws.index.repo
    same = bool(at) and repo[head].peel(pygit2.Commit).tree_id == repo[at].peel(pygit2.Commit).tree_id
    return entry._replace(verified_at=at, verified_in="" if same else written)


def named_at(ws: Workspace, head: str, on: Sequence[Mapping[str, Any]]) -> None:
    """Each anchor a plan is on names something at `head`, as `why` reads one (a file, a symbol it
    defines, a line in it, a module), or is a folder there; AnchorError naming the first that is
    not (a typo would rank the plan's records near nothing, and say nothing of it)."""
    from comind.anchors import AnchorError
    from comind.why import target_at

    snapshot = ws.index.snapshot(head)
    for anchor in on:
        try:
            target_at(snapshot, dict(anchor))
        except AnchorError as exc:
            raise AnchorError(f"anchor {anchor.get('raw')!r}: {exc}") from None


class ThroughBase:
    """An anchorer (`anchoring.Anchorer`) that follows an anchor it cannot find at the change's head
    through the change's base: code renamed since the anchor was made, then edited by the change, has
    fingerprints the anchor's no longer match, but is found at base, and from there at head."""

    def __init__(self, anchorer: Anchorer, base: Snapshot | None) -> None:
        self.anchorer, self.base = anchorer, base

    def where(self, anchor: Mapping[str, Any], target: Snapshot) -> tuple[str, str | None, str | None]:
        found = self.anchorer.where(anchor, target)
        if found[0] == "found" or self.base is None or target.commit == self.base.commit:
            return found
        state, path, symbol = self.anchorer.where(anchor, self.base)
        if state != "found" or not path:
            return found
        there = {**anchor, "commit": self.base.commit, "path": path}
        if symbol and (definition := self.base.find(path, symbol)) is not None:
            there |= {"symbol": symbol, "body_hash": definition.body_hash, "shape_hash": definition.shape_hash}
        return self.anchorer.where(there, target)

    def follow_folder(self, path: str, old: str, new: str) -> tuple[str | None, str | None]:
        return self.anchorer.follow_folder(path, old, new)


def _on_touched(
    anchors: Sequence[Mapping[str, Any]],
    paths: set[str],
    touched: set[tuple[str, str]],
    now: Callable[[Mapping[str, Any]], tuple[str, str]],
) -> tuple[str, Mapping[str, Any]] | None:
    """How one of a record's anchors is on the change, and that anchor: the nearest, a symbol it
    touches before a file it changes before a folder holding one (as a hook's edit finds it); `now`
    says where an anchor's code is at head (moved or renamed since)."""
    found: list[tuple[int, str, Mapping[str, Any]]] = []
    for anchor in anchors:
        if not anchor.get("path"):
            continue
        path, symbol = now(anchor)
        if symbol and any(p == path and (q == symbol or q.startswith(symbol + ".")) for p, q in touched):
            found.append((0, f"on {path}::{symbol}, which the change touches", anchor))
        elif not symbol and (path in paths or (path.endswith("/") and any(p.startswith(path) for p in paths))):
            found.append((2 if path.endswith("/") else 1, f"on {path}, which the change edits", anchor))
    return min(found, key=lambda f: f[0])[1:] if found else None
