"""`comind check`: what a change re-proposes, which constraints it breaks, which records it stales.

One pass: harvest what is new, index base and head, then evaluate compiled constraints
(diff-aware), match the change against dead ends, and report the records anchored to what the
change touches that are stale or orphaned at head, plus a little context. Findings carry their
evidence; the report renders to every format.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from comind import promisor
from comind.checks.change import Change, compute_change
from comind.checks.deadends import report_dead_ends
from comind.checks.findings import Finding, Report, fingerprint, snippet_of
from comind.checks.violations import report_violations
from comind.errors import ComindError
from comind.harvest.walker import walk
from comind.query import open_ledger, statuses
from comind.records import Record, short_id
from comind.status import Status, is_history

if TYPE_CHECKING:
    from comind.codeindex import Snapshot
    from comind.ledger import Ledger
    from comind.workspace import Workspace

CONTEXT_LIMIT = 5  # context notes per report: precision over recall
# reviewdog's filter modes: a finding is kept when on an added or changed line (added), within the
# diff's hunks (diff-context: git's 3 lines of context around the change's lines), in a changed
# file (file), or anywhere (none, the default). A finding with no place is always kept.
FILTERS = ("added", "diff-context", "file", "none")
DIFF_CONTEXT = 3
Progress = Callable[[str], None]


class CheckRun:
    """Everything one `comind check` needs, computed once and shared by the finding producers."""

    def __init__(
        self,
        ws: Workspace,
        ledger: Ledger,
        base: str | None,
        head: str,
        change: Change | None,
        head_snapshot: Snapshot,
        base_snapshot: Snapshot | None,
        *,
        record_enforced: bool = True,
    ) -> None:
        self.ws = ws
        # a preflight's head is no commit of the history: its passing checks make nothing T4
        self.record_enforced = record_enforced
        self.ledger = ledger
        self.base = base
        self.head = head
        self.change = change
        self.head_snapshot = head_snapshot
        self.base_snapshot = base_snapshot
        self.records = [r for r in ledger.all() if r.kind != "relation"]
        self.enforced: set[str] = set()  # constraints whose check passes at head: T4
        self._statuses: dict[str, Status] = {}
        self._touched: set[tuple[str, str]] | None = None

    def statuses(self, records: list[Record]) -> dict[str, Status]:
        """Statuses at head. Code anchors are followed (renames, moves, drift) only for the records
        anchored to what the change touches (:attr:`near`); for the others the ledger state and
        their dependency anchors decide, which is all the dead-end and constraint producers read
        (retracted, superseded, quarantined; retry conditions): following an old anchor through
        years of renames costs seconds and the change cannot have moved it."""

        todo = [r for r in records if r.id not in self._statuses]
        if todo:
            self._statuses.update(statuses(self.ws, self.ledger, todo, at=self.head, near=self.near))
        return {r.id: self._statuses[r.id] for r in records}

    @cached_property
    def near(self) -> frozenset[str] | None:
        """Ids of the records anchored to a path the change touches or named like a symbol it
        touches (what the stale and context producers report on); None with --all: every record."""
        if self.change is None:
            return None
        names = {q.rsplit(".", 1)[-1] for _, q in self.touched_symbols()}
        return frozenset(r.id for r in self.ledger.anchored_near(sorted(self.touched_paths()), sorted(names)))

    @cached_property
    def commits(self) -> frozenset[str]:
        """The commits of the change: reachable from head, not from its base."""
        if self.change is None:
            return frozenset()

        return frozenset(c.sha for c in walk(self.ws.index.repo, [self.change.head], [self.change.base]))

    def touched_paths(self) -> set[str]:
        return self.change.paths if self.change else set(self.head_snapshot.files)

    def touched_symbols(self) -> set[tuple[str, str]]:
        if not self.change or not self.base_snapshot:
            return set()
        if self._touched is None:
            self._touched = self.change.touched_symbols(self.head_snapshot, self.base_snapshot)
        return set(self._touched)

    def in_diff(self, path: str | None, line: int | None) -> bool:
        return bool(self.change and path and line and line in self.change.added_lines(path))


def resolve_base(ws: Workspace, base: str | None, head: str) -> str | None:
    """The baseline commit: --base, else the merge base with the default branch; None means --all."""
    index = ws.index
    head_id = str(index.resolve(head).id)
    if base is None:
        tip = ws.default_tip()
        if tip is None or tip == head_id:
            return None  # on the default branch itself: report everything at head
        base = tip
    base_id = str(index.resolve(base).id)
    try:
        merge_base = index.repo.merge_base(base_id, head_id)
    except Exception:  # pygit2 raises several error types for missing history
        merge_base = None
    if merge_base is None:
        shallow = (ws.git_dir / "shallow").exists()
        hint = (
            " This is a shallow clone: fetch the full history (actions/checkout with fetch-depth: 0, "
            "or GIT_DEPTH: 0 on GitLab)."
            if shallow
            else ""
        )
        raise ComindError(f"{base[:12]} and {head[:12]} have no common ancestor.{hint}")
    return str(merge_base)


def run_check(
    ws: Workspace,
    *,
    base: str | None,
    head: str = "HEAD",
    check_all: bool = False,
    harvest: bool = True,
    progress: Progress | None = None,
    filter_mode: str = "none",
) -> Report:
    """Run every producer of findings and return the report (the CLI renders it)."""
    say = progress or (lambda _message: None)
    started = time.perf_counter()
    index = ws.index
    head_id = str(index.resolve(head).id)
    base_id = None if check_all else resolve_base(ws, base, head)
    stats: dict[str, Any] = {}
    if harvest:
        say("harvesting history")
        stats["harvest"] = harvest_new(ws, head_id)

    ledger = open_ledger(ws)
    # the change first: in a partial clone its diff fetches the blobs the snapshots then read
    change = compute_change(index, base_id, head_id) if base_id else None
    say("indexing head")
    head_snapshot = index.snapshot(head_id)
    base_snapshot = None
    if base_id:
        say("indexing base")
        base_snapshot = index.snapshot(base_id)
    run = CheckRun(ws, ledger, base_id, head_id, change, head_snapshot, base_snapshot)
    report = Report(base=base_id, head=head_id, repo=ws.repo_name)
    if change is not None:
        stats["files_changed"] = len(change.files)
        report.unread = change.unread(index.repo)
    if base_id is None and not check_all and ws.default_branch() == "HEAD":
        report.warnings.append(
            "no default branch found (no origin/HEAD, main or master), so HEAD stands for it and "
            "everything at HEAD is reported, not a change; name it with --default-branch or "
            "default_branch in .comind.yml"
        )
    if (ws.git_dir / "shallow").exists():
        report.warnings.append(
            "shallow clone: the history beyond its boundary was not read, so dead ends and "
            "constraints from it are missing; fetch the full history (fetch-depth: 0 on "
            "actions/checkout, GIT_DEPTH: 0 on GitLab)"
        )
    for name, producer in PRODUCERS:
        say(f"checking {name}")
        producer(run, report)
    report.findings = _inline_suppressions(report, head_snapshot, change)
    report.findings = with_snippets(apply_filter(report, change, filter_mode), head_snapshot)
    # one failed fetch, one warning: of the change's files if it left any unread, else of past changes
    warning = unread_warning(index.repo, report.unread, past=True)
    if (past := promisor.take_warning(index.repo)) and not warning:
        report.warnings.append(past)
    elif warning:
        report.warnings.insert(0, warning)
    stats["records"] = len(run.records)
    stats["relations"] = sum(1 for r in run.ledger.all() if r.kind == "relation")
    stats["seconds"] = round(time.perf_counter() - started, 3)
    report.stats.update(stats)
    return report


def unread(repo: Any, change: Change) -> tuple[list[str], str | None]:
    """The changed files this clone lacks the contents of (after a partial clone's fetch), and a
    warning saying how many and why: what touches their symbols is not found, so the result is partial."""
    paths = change.unread(repo)
    return paths, unread_warning(repo, paths)


def unread_warning(repo: Any, paths: list[str], *, past: bool = False) -> str | None:
    """The warning for changed files the clone lacks; with `past`, when the promisor's fetches failed,
    it also says what the promisor warning (`promisor.take_warning`) would have."""
    if not paths:
        return None
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    files = f"{len(paths)} changed file{'s' if len(paths) != 1 else ''}"
    warning = (
        f"partial result: {files} could not be read ({promisor.why_unread(repo)}): {shown}; "
        "the symbols the change touches there, and the records on them, are not known"
    )
    if past and promisor.fetch_failed(repo):
        warning += (
            ", nor the dead ends of past changes whose blobs were not fetched; give the job network access "
            "to the promisor remote, or clone without --filter"
        )
    return warning


def keeps(mode: str, change: Change, finding: Finding) -> bool:
    """Whether ``finding`` passes the filter ``mode`` (see FILTERS) for ``change``."""
    if mode == "none" or not finding.path:
        return True
    if finding.path not in change.paths:
        return False
    if mode == "file":
        return True
    added = change.added_lines(finding.path)
    first = finding.line
    if not first:
        return False  # a whole-file finding is on no line of the diff
    last = max(finding.end_line or first, first)
    reach = DIFF_CONTEXT if mode == "diff-context" else 0
    return any(first - reach <= n <= last + reach for n in added)


def apply_filter(report: Report, change: Change | None, mode: str) -> list[Finding]:
    """The findings ``mode`` keeps; how many it left out is said, so no filter looks like a miss."""
    if mode not in FILTERS:
        raise ComindError(f"unknown filter {mode!r} (one of {', '.join(FILTERS)})")
    if change is None or mode == "none":
        return report.findings
    kept = [f for f in report.findings if keeps(mode, change, f)]
    if left := len(report.findings) - len(kept):
        report.stats["filtered_out"] = left
        report.warnings.append(f"--filter {mode}: {left} finding{'s' if left != 1 else ''} outside it not shown")
    return kept


def _inline_suppressions(report: Report, snapshot: Snapshot, change: Change | None) -> list[Finding]:
    """Findings silenced by ``comind: ignore[...] reason`` comments are counted, as suppression
    records are; a comment without a reason, or unused in the change's files, is a finding."""

    def read(path: str) -> str | None:
        try:
            return snapshot.blob_data(path).decode("utf-8", errors="replace")
        except KeyError:
            return None

    from comind.checks import inline  # `comind check` only: preflight reports no inline suppression

    done = inline.apply(report.findings, read, sorted(change.paths) if change else ())
    if done.suppressed:
        report.stats["inline_suppressed"] = [
            {"fingerprint": f.fingerprint, "path": m.path, "line": m.line, "reason": m.reason}
            for f, m in done.suppressed
        ]
    return done.kept + done.findings


def with_snippets(findings: list[Finding], snapshot: Snapshot) -> list[Finding]:
    """Each finding with a line gets the lines at head (and a few around), numbered."""
    texts: dict[str, str | None] = {}
    out = []
    for f in findings:
        if f.path and f.line and not f.snippet:
            if f.path not in texts:
                try:
                    texts[f.path] = snapshot.blob_data(f.path).decode("utf-8", errors="replace")
                except KeyError:
                    texts[f.path] = None
            text = texts[f.path]
            if text is not None:
                f = replace(f, snippet=snippet_of(text, f.line, f.end_line))
        out.append(f)
    return out


def harvest_new(ws: Workspace, head: str | None = None) -> dict[str, Any]:
    """Harvest what is new in git (the harvesters are incremental), with `head`'s branch as HEAD's;
    the counts go into the stats. The term weights the dead-end check reads are counted on another
    core meanwhile."""
    from comind.harvest.run import harvest  # `comind check` harvests first; `preflight` does not

    return harvest(ws, head=head, weigh=True).summary()


# -- producers -------------------------------------------------------------------------------


def stale_records(run: CheckRun, report: Report) -> None:
    """Records anchored to what the change touches that are stale, orphaned or unverifiable at head.

    Attempts are left out: "we tried X and it failed" is history, which code changes do not make
    less true (their status still shows in `why` and `status`); nagging about them is noise.
    """
    paths = run.touched_paths()
    names = {q.rsplit(".", 1)[-1] for _, q in run.touched_symbols()}
    if run.change is None:
        candidates = [r for r in run.records if any(a.get("commit") for a in r.anchors)]
    else:
        candidates = [r for r in run.ledger.anchored_near(sorted(paths), sorted(names)) if r.kind != "relation"]
    derived = run.statuses(candidates)
    level = {"stale": "warning", "orphaned": "warning", "unverifiable": "note"}
    reported = {f.record_id for f in report.findings}  # a re-proposed dead end is not also "stale"
    locate = _locator(run)
    unread = set(report.unread)  # a file the clone lacks at head is not gone: its records' state is not known
    for record in candidates:
        status = derived[record.id]
        if status.state not in level or record.id in reported or record.kind == "attempt":
            continue
        if any(a.get("path") in unread for a in record.anchors):
            continue
        path, line = locate(record, status.reason)
        if is_history(record):  # harvested evidence stays true: read it, nothing to confirm
            commands: tuple[str, ...] = (f"comind show {short_id(record.id)}",)
            ask = "It is history (harvested), still true of when it was written: read it before changing this code."
        else:
            commands = (
                f"comind review confirm {short_id(record.id)}",
                f'comind review retract {short_id(record.id)} --reason "…"',
            )
            ask = "Confirm it if it still holds, retract it if not."
        report.findings.append(
            Finding(
                type="orphaned" if status.state == "orphaned" else "stale",
                level="note" if is_history(record) else level[status.state],
                title=f"{record.kind} {status.state}: {record.title}",
                message=f"{record.title} — {status.reason}. {ask}",
                fingerprint=fingerprint("stale", record.id, status.state),
                record_id=record.id,
                path=path,
                line=line,
                in_diff=run.in_diff(path, line),
                evidence=tuple(record.shown_evidence),
                commands=commands,
            )
        )


def context_notes(run: CheckRun, report: Report) -> None:
    """A few active constraints and attempts anchored to the symbols the change touches."""
    touched = run.touched_symbols()
    if not touched:
        return
    names = {q.rsplit(".", 1)[-1] for _, q in touched}
    already = {f.record_id for f in report.findings}
    candidates = [
        r
        for r in run.ledger.anchored_near(sorted({p for p, _ in touched}), sorted(names))
        if r.kind in ("constraint", "attempt", "gotcha", "decision") and r.id not in already
    ]
    derived = run.statuses(candidates)
    ranked = []
    for record in candidates:
        status = derived[record.id]
        if status.state != "active":
            continue
        symbols = {(a.get("path"), a.get("symbol")) for a in record.anchors if a.get("symbol")}
        direct = bool(symbols & touched)
        if not direct:
            continue  # precision over recall: only records on a symbol the change touches
        ranked.append(
            (
                -status.trust,
                {"constraint": 0, "attempt": 1, "gotcha": 2}.get(record.kind, 3),
                record.created_at,
                record,
                status,
            )
        )
    ranked.sort(key=lambda item: item[:3])
    locate = _locator(run)
    for _, _, _, record, status in ranked[:CONTEXT_LIMIT]:
        path, line = locate(record, "")
        what = str(record.fields.get("rule") or record.fields.get("approach") or record.fields.get("cause") or "")
        # a Lore constraint's rule is its title; a rejected option's approach is in its title, and a
        # harvested attempt's is its title and the reverted commit
        if _COMMIT_SUFFIX.sub("", what).strip().lower() in record.title.lower():
            what = ""
        article = "an" if record.kind[0] in "aeiou" else "a"
        report.findings.append(
            Finding(
                type="context",
                level="note",
                title=f"{record.kind}: {record.title}",
                message=f"This change touches code that {article} {record.kind} is about: {record.title}"
                + (f" — {what}" if what else "")
                + f" ({status.reason}).",
                fingerprint=fingerprint("context", record.id),
                record_id=record.id,
                path=path,
                line=line,
                in_diff=run.in_diff(path, line),
                evidence=tuple(record.shown_evidence),
                commands=(f"comind show {short_id(record.id)}",),
            )
        )


_COMMIT_SUFFIX = re.compile(r"\s*\([0-9a-f]{7,40}\)$")


def _locator(run: CheckRun) -> Callable[[Record, str], tuple[str | None, int | None]]:
    """Where a record is shown: a subject anchor as it is at head, those on the change's files first,
    then the one its status names: its definition's line now, else its file when still there. An
    anchor's span is where it was when written; shown on today's file it points at whatever took
    that line."""
    import pygit2

    touched = run.touched_paths()
    try:
        tree = run.ws.index.repo[run.head].peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError):
        return lambda record, reason: (None, None)

    def locate(record: Record, reason: str) -> tuple[str | None, int | None]:
        subjects = [
            a
            for a in record.anchors
            if a.get("role", "subject") == "subject" and a.get("path") and not a["path"].endswith("/")
        ]
        # the change's files first, then the anchor the status names (`a.py::f: body drifted`)
        named = [a for a in subjects if a.get("raw") and reason.startswith(f"{a['raw']}: ")]
        for anchor in sorted(subjects, key=lambda a: (a["path"] not in touched, a not in named)):
            path, symbol = anchor["path"], anchor.get("symbol")
            if path not in tree:
                continue
            found = run.head_snapshot.find(path, symbol) if symbol else None
            return path, found.start_line if found else None
        return None, None

    return locate


def constraint_violations(run: CheckRun, report: Report) -> None:
    """Compiled constraint checks (see checks/evaluate.py)."""

    report_violations(run, report)


def dead_ends(run: CheckRun, report: Report) -> None:
    """The change against every attempt's approach fingerprint (see checks/deadends.py)."""

    report_dead_ends(run, report)


PRODUCERS: tuple[tuple[str, Callable[[CheckRun, Report], None]], ...] = (
    ("constraints", constraint_violations),
    ("dead ends", dead_ends),
    ("stale records", stale_records),
    ("context", context_notes),
)
