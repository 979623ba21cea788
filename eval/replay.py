"""Prove it on real history: replay the dead-end matcher over a repository's past, and measure
(`comind eval replay`; `eval.coverage` measures what the harvesters read).

**Replay.** The history of the default branch is harvested once, in memory, by the registered git
sources (nothing is written to any store, cache or state file; a bare repository works). It is
then replayed as the sequence of changes that landed on that branch — its first-parent chain,
oldest first: a squash or a direct push is one change, a merge is the change its first-parent
diff makes (what `comind check` sees on that merge request), and a run of commits one committer
wrote in the same second (GitHub's rebase-and-merge, a rebased push: they landed together, and a
merge request saw them as one change) is the change from the run's base to its last commit. At
each landing C the matcher of `comind check` (`checks.deadends.match_lines` and the rules of the configured
rulebook, `comind.rulebook`, and `moves_into`: a dependency moved again to a version a
reverted change moved it to, as a lockfile-only bump is) runs C's change against every attempt whose
revert landed strictly before C and that no reland retired before C.

The positives are *relands*, recognised from subjects alone, independently of the matcher:
`Reapply "…"`, `Revert "Revert "…""` (and `Revert^2`), `Reland …` / `Re-land …` (also after a
Conventional Commits prefix: `fix(x): reland …`, `reland: …`), `Redo "…"`, and a subject equal
(`markers.reland_key`) to a reverted commit's after its revert — the first such landing, when
that subject was not a common one before (earlier landings of it that were themselves reverted
do not make it common) and has two words or more (`fmt` names no change). Words that also mean
a plain rewrite count only when what they name is a reverted subject (`markers.reland_subject`):
`Redo x`, `Restore x`, `Bring back x`, `Re-add x` / `Re-enable x` / `Re-fix x` (any `re-<verb> x`,
read as `<verb> x`), and `x again` / `x, take 2`
(where x may be the start of exactly one reverted subject). For a merge, the subjects of the
commits it brings in and its pull-request title count too. A reland whose revert landed in the
same landing (both inside one merged branch), or later (on another branch, merged after the reland)
is left out: no check ever saw the attempt before it. So is a merged commit's reland that the merge
itself does not bring (its diff touches none of that commit's files: the change reached the branch
otherwise, or never did).
Everything else is an ordinary commit, and a flag on one is a false flag — to be audited: each
flag carries its evidence (commit, subject, attempt, revert, matched/total lines).

Speed: an inverted index maps every informative line of an attempt to the attempts holding it,
so a change is matched only against attempts it shares a line with; and the full change
(`approach`, with rename detection) is computed only for landings whose raw patch (one libgit2
call, no rename detection: a superset of the lines) holds such a line, or touches a manifest and adds
a version an attempt moved a dependency to.
"""

from __future__ import annotations

import bisect
import re
import shutil
import subprocess
import tempfile
import time
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from comind import config as configuration
from comind.checks.deadends import (
    ChangeLines,
    Match,
    commit_of,
    dependency_moves,
    dependency_ranges,
    fingerprint_of,
    held_at,
    is_back,
    judge,
    match_lines,
    moves_into,
    rule_label,
    strongest,
)
from comind.deps import is_manifest
from comind.errors import ComindError
from comind.git import changed_paths, find_git, open_repo, since_commit
from comind.harvest.approach import Approach, approach
from comind.harvest.context import HarvestContext, first_line
from comind.harvest.markers import (
    full_subject,
    merge_title,
    reland_key,
    reland_subject,
    request_line,
    revert_markers,
)
from comind.harvest.sources import GIT_SOURCES
from comind.harvest.walker import CommitInfo, walk
from comind.harvest.weights import log_command
from comind.records import Record
from comind.rulebook import (
    DEFAULT,
    Brought,
    DependencyMove,
    ExactReapply,
    HadAlready,
    KeptNames,
    RelandedBefore,
    RevertedRef,
    RevertFirst,
    RuleBook,
    SameSubject,
    SquashedCycle,
    Undone,
    Verdict,
    rules_of,
)
from comind.weights import IDENT, Weights
from comind.workspace import Workspace

Progress = Callable[[str, int, int], None]  # (phase, done, total or 0 while unknown)
EXAMPLES = 5
PROGRESS_EVERY = 500
NEAR_MISS = 3  # shared lines from which a pair that is no match is listed (`--near-misses`)


# -- the repository under evaluation ----------------------------------------------------------


class EvalWorkspace(Workspace):
    """A repository evaluated read-only: a work tree or a bare git directory (a mirror).

    Settings come from flags, the environment and the work tree's `.comind.yml` (a bare repository
    has none). Nothing is written into the repository: `cache_dir` is a private temporary folder.
    """

    def __init__(self, path: Path, flags: Mapping[str, Any] | None = None) -> None:
        start = path.resolve()
        for folder in (start, *start.parents):
            if (folder / ".git").exists():
                self.root, self.head_dir, self.git_dir = find_git(folder)
                self.bare = False
                break
            if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
                self.root = self.head_dir = self.git_dir = folder
                self.bare = True
                break
        else:
            raise ComindError(f"not a git repository: {path}")
        self.config = configuration.load(self.root, flags)
        self._scratch: Path | None = None
        self._actor_salt = (None, True)  # a replay reads no store: pseudonyms keyed by the repository name

    @property
    def cache_dir(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="comind-eval-"))
            weakref.finalize(self, shutil.rmtree, self._scratch, True)
        return self._scratch


# -- one harvest of the whole history, in memory ---------------------------------------------


@dataclass
class Attempt:
    record: Record
    lines_of: ChangeLines | None  # the net informative lines of its fingerprint
    revert: str  # the revert commit
    reverted: str | None  # the reverted commit, when resolved
    subject: str  # what was reverted: the reverted commit's subject, else the quoted one
    start: int  # landing of the revert: the attempt counts from the next landing on
    end: int | None = None  # landing of the reland that retired it (it still counts there)
    lines: int = 0  # informative lines of its fingerprint
    deps: list[dict[str, Any]] = field(default_factory=list)  # its `dep:` anchors with a version range
    inside: bool = False  # tried and reverted in one landing: it counts there too (a check harvests first)

    @property
    def first(self) -> int:
        return self.start if self.inside else self.start + 1

    def active(self, landing: int) -> bool:
        return self.first <= landing and (self.end is None or landing <= self.end)


@dataclass
class History:
    repo: pygit2.Repository
    tip: str
    commits: list[CommitInfo]  # every commit of the default branch, oldest first
    chain: list[str]  # its first-parent chain (the landings), oldest first
    landing: dict[str, int]  # commit -> index in `chain` of the landing that brought it
    side: dict[int, list[CommitInfo]]  # landing index -> the commits a merge (or a run) brought in
    base: dict[int, str]  # landing index -> where a run's change starts (its first parent)
    ctx: HarvestContext
    records: list[tuple[int, Record]]  # (index in `commits`, record)
    attempts: list[Attempt] = field(default_factory=list)
    seconds: float = 0.0
    rules: RuleBook = DEFAULT


def _tip(ws: Workspace) -> str:
    tip = ws.default_tip() or ws.head()
    if not tip:
        raise ComindError("the repository has no commits")
    return tip


def _landings(
    repo: pygit2.Repository, tip: str, commits: list[CommitInfo]
) -> tuple[list[str], dict[str, int], dict[int, list[CommitInfo]], dict[int, str]]:
    """(the landings' last commits, oldest first; commit -> landing index; the commits each merge or
    run brought in besides its last; where each run's change starts)."""
    by_sha = {c.sha: c for c in commits}
    chain: list[str] = []
    landing: dict[str, int] = {}
    side: dict[int, list[CommitInfo]] = {}
    base: dict[int, str] = {}
    for c in walk(repo, [tip], first_parent=True, oldest_first=True):
        c = by_sha.get(c.sha, c)
        if chain and _landed_together(repo, before := by_sha[chain[-1]], c):
            i = len(chain) - 1
            base.setdefault(i, before.parents[0])
            side.setdefault(i, []).append(before)
            chain[i] = c.sha
        else:
            chain.append(c.sha)
        landing[c.sha] = len(chain) - 1
    for i, sha in enumerate(chain):
        parents = by_sha[sha].parents
        if len(parents) < 2:
            continue
        brought = []
        for c in walk(repo, list(parents[1:]), [parents[0]]):
            if c.sha not in landing:
                landing[c.sha] = i
                brought.append(by_sha.get(c.sha, c))
        side[i] = brought[::-1]
    return chain, landing, side, base


def _landed_together(repo: pygit2.Repository, before: CommitInfo, commit: CommitInfo) -> bool:
    """Did one operation write both (a rebase, GitHub's rebase-and-merge): same committer, same second?"""
    if before.is_merge or commit.is_merge or not before.parents or before.committer_time != commit.committer_time:
        return False
    a, b = repo[before.sha].peel(pygit2.Commit).committer, repo[commit.sha].peel(pygit2.Commit).committer
    return (a.name, a.email) == (b.name, b.email)


def harvest_history(ws: Workspace, *, progress: Progress | None = None) -> History:
    """Harvest the default branch's whole history with the registered git sources, in memory."""

    started = time.perf_counter()
    repo = open_repo(ws.git_dir)
    tip = _tip(ws)
    commits = list(walk(repo, [tip], oldest_first=True))
    chain, landing, side, base = _landings(repo, tip, commits)
    ctx = HarvestContext(ws, repo, tip)
    ctx.mark_on_default(c.sha for c in commits)  # walked from the tip: no descendant_of per revert
    sources = GIT_SOURCES
    records: list[tuple[int, Record]] = []
    for n, commit in enumerate(commits):
        for source in sources:
            try:
                records.extend((n, r) for r in source.harvest(commit, ctx))
            except Exception as exc:  # as in comind harvest: counted and shown, never fatal
                ctx.skip(f"{source.NAME}-error", f"{commit.sha[:12]}: {type(exc).__name__}: {exc}")
        if progress and n % PROGRESS_EVERY == 0:
            progress("harvesting", n, len(commits))
    if progress:
        progress("harvesting", len(commits), len(commits))
    history = History(repo, tip, commits, chain, landing, side, base, ctx, records, rules=rules_of(ws.config))
    history.attempts = _attempts(history)
    history.seconds = time.perf_counter() - started
    return history


def _attempts(history: History) -> list[Attempt]:
    """The harvested attempts that carry an approach, with the landings where they count."""
    by_id: dict[str, Attempt] = {}
    for n, record in history.records:
        if record.kind != "attempt" or int(record.data.get("trust", 1)) == 0:
            continue
        commit = history.commits[n]
        reverted = commit_of(record, "reverted")
        target = history.ctx.commit(reverted) if reverted else None
        markers = [m for m in revert_markers(*full_subject(commit.subject, commit.body)) if m.source == "subject"]
        quoted = next((m.quoted_subject for m in markers if m.quoted_subject and m.kind != "conventional-revert"), None)
        described = next((m.described for m in markers if m.described), None)  # "Revert realms from core"
        # (an unresolved revert quoting nothing titles its attempt by what its subject took out)
        titled = first_line(commit.subject) if record.data.get("attributes", {}).get("revert_subject") else None
        # (a forge's merge reverted: named by the request it landed, as the harvester titles it)
        landed = merge_title(target.subject, target.body) if target is not None and target.is_merge else None
        subject = (landed or target.subject) if target else (quoted or described or titled or record.title)
        change = fingerprint_of(record)
        net = ChangeLines(change, history.rules) if change is not None else None
        by_id[record.id] = Attempt(
            record,
            net,
            commit.sha,
            target.sha if target else None,
            subject,
            history.landing[commit.sha],
            lines=net.total if net else 0,
            deps=dependency_ranges(record.anchors),
            inside=target is not None and history.landing.get(target.sha) == history.landing[commit.sha],
        )
    for n, record in history.records:  # relands retire, as the ledger's status would
        if record.kind == "relation" and record.fields.get("relation") in ("retracts", "supersedes"):
            attempt = by_id.get(str(record.fields.get("target")))
            if attempt is not None:
                at = history.landing[history.commits[n].sha]
                attempt.end = at if attempt.end is None else min(attempt.end, at)
    return list(by_id.values())


# -- relands: the positives, from messages alone (never from the diff) ------------------------------


def subject_key(subject: str) -> str:
    """A subject as relands repeat it (`markers.reland_key`): `markers.normalise_subject`, then
    without parenthesised asides (`(fix: #3288)`, `(#12)` in the middle), which relands often change."""
    return reland_key(subject)


@dataclass(frozen=True)
class Reland:
    form: str  # reapply | revert-of-revert | reland | redo | restore | bring-back | re-add | again | in-body | …
    relanded: str  # `subject_key` of what it re-applies ("" when unknown)
    named: bool = True  # False: "Redo x", "Restore x", "x again"… count only when x is a reverted subject


# A merged branch named as GitHub's revert button names a revert of a revert (`revert-12-revert-9-x`),
# or by hand (`revert-revert-gh5606`)
_REVERT_REVERT_BRANCH = re.compile(
    r"(?:Merge pull request #\d+ from [\w.-]+/|Auto merge of #\d+ - [\w.-]+:|Merge branch ')"
    r"(?:[\w.-]*?[/_-])?revert-(?:\d+-)?revert\b",
    re.IGNORECASE,
)


def reland_of(subject: str) -> Reland | None:
    """The reland a subject announces, if any (the same-subject form needs the history): a revert of
    a revert, or the words of `markers.reland_subject` (`Reland x`, `Re-land x`, `Redo "x"`, `x again`…)."""
    s = subject.split("\n", 1)[0].strip()
    markers = revert_markers(s, "")
    if markers:
        m = markers[0]
        if m.is_reland:
            form = "reapply" if s.lower().lstrip().startswith("reapply") else "revert-of-revert"
            return Reland(form, subject_key(m.quoted_subject or ""))
        if m.kind != "free-form":
            return None  # a revert (or a revert of a reland)
    if _REVERT_REVERT_BRANCH.match(s):  # a merged `user:revert-revert-gh5606` branch
        return Reland("revert-of-revert", "")
    said = reland_subject(s)
    if said is None:
        return None
    form, text, named = said
    return Reland(form, subject_key(text), named)


_SQUASHED = re.compile(r"^\* (\S.*)$", re.M)
_SQUASH_SUBJECT = re.compile(r"\(#\d+\)\s*$")


def _squashed(commit: CommitInfo) -> list[str]:
    """The subjects a squash merge lists (GitHub's `Title (#N)` + `* subject` lines): the squashed
    counterpart of the commits a merge brings in."""
    if commit.is_merge or not _SQUASH_SUBJECT.search(commit.subject):
        return []
    return [m.group(1).strip() for m in _SQUASHED.finditer(commit.body)]


def _squashed_cycle(landing: Landing, rules: RuleBook) -> bool:
    """Is the reland a squash-merge bullet, with what it relands among the same bullets (rule E9)?"""
    bullets = _squashed(landing.commit)
    if landing.reland is None or landing.reland_subject not in bullets:
        return False
    return rules.get(SquashedCycle).judge({subject_key(b) for b in bullets}, landing.reland.relanded)


def _pr_title(commit: CommitInfo) -> str | None:
    """A merge's pull-request title: the first body line of `Merge pull request #N …` and bors merges."""
    if not commit.is_merge:
        return None
    return request_line(commit.body) or None


# -- replay ------------------------------------------------------------------------------------


@dataclass
class Hit:
    attempt: Attempt
    match: Match
    expected: bool
    kind: str  # `deadends.judge` (lines | files | edit), or dependency
    rule: str = ""  # the rule that flagged it (`comind.rulebook`)
    moved: str = ""  # dependency: "clap 4.5.34 -> 4.5.35"

    @property
    def evidence(self) -> str:
        """Its strongest evidence, in one line (as `comind check` says it)."""
        if self.kind == "dependency":
            return f"it moves {self.moved}, as the attempt did"
        return strongest(self.match, self.kind)


@dataclass
class Landing:
    index: int
    commit: CommitInfo
    reland: Reland | None = None
    reland_subject: str | None = None  # the subject that announced it (a merge's side commit, say)
    announcer: CommitInfo | None = None  # the commit whose message announced it
    run: list[str] = field(default_factory=list)  # the commits that landed with it, in one run
    expected: list[Attempt] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    judged: dict[int, Verdict] = field(default_factory=dict)  # id(expected attempt) -> the scan's verdict
    note: str = ""


@dataclass
class ReplayResult:
    repo: str
    tip: str
    threshold: float
    min_lines: int
    path: str = ""
    commits_walked: int = 0
    commits_scanned: int = 0
    merges_scanned: int = 0
    attempts: int = 0
    attempts_with_lines: int = 0
    relands: list[Landing] = field(default_factory=list)
    relands_skipped: list[Landing] = field(default_factory=list)
    not_relands: list[Landing] = field(default_factory=list)  # announced as relands of nothing reverted
    flagged: list[Landing] = field(default_factory=list)
    diffs: int = 0
    patches_from: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    # every (landing, attempt) pair sharing `NEAR_MISS` lines or more or a name it introduced, flagged or
    # not: to try a rule on
    near_misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def relands_flagged(self) -> int:
        return sum(1 for r in self.relands if r.hits)

    @property
    def recall(self) -> float | None:
        return self.relands_flagged / len(self.relands) if self.relands else None

    @property
    def ordinary(self) -> int:
        return self.commits_scanned - len(self.relands) - len(self.relands_skipped)

    @property
    def false_flags(self) -> int:
        return sum(1 for f in self.flagged if f.reland is None)

    @property
    def false_flags_per_1000(self) -> float:
        return 1000 * self.false_flags / self.ordinary if self.ordinary else 0.0

    def by_subject(self) -> dict[str, Any]:
        """The figures with positives read from subjects alone, as the issue that asked for the
        replay defines them: relands said in the body only (form `in-body`) count as ordinary commits."""
        body = [r for r in self.relands if r.reland is not None and r.reland.form == "in-body"]
        relands = [r for r in self.relands if r not in body]
        flagged = sum(1 for r in relands if r.hits)
        false = self.false_flags + sum(1 for r in body if r.hits)
        ordinary = self.ordinary + len(body)
        return {
            "relands": len(relands),
            "relands_flagged": flagged,
            "recall": round(flagged / len(relands), 4) if relands else None,
            "false_flags": false,
            "false_flags_per_1000": round(1000 * false / ordinary, 3) if ordinary else 0.0,
        }

    def to_json(self) -> dict[str, Any]:
        recall = self.recall
        return {
            "repo": self.repo,
            "path": self.path,
            "tip": self.tip,
            "dead_end_threshold": self.threshold,
            "dead_end_min_lines": self.min_lines,
            "commits_walked": self.commits_walked,
            "commits_scanned": self.commits_scanned,
            "merges_scanned": self.merges_scanned,
            "ordinary_commits": self.ordinary,
            "attempts": self.attempts,
            "attempts_with_lines": self.attempts_with_lines,
            "relands": len(self.relands),
            "relands_flagged": self.relands_flagged,
            "recall": None if recall is None else round(recall, 4),
            "relands_by_form": dict(sorted(Counter(r.reland.form for r in self.relands if r.reland).items())),
            "relands_skipped": [_landing_json(r) for r in self.relands_skipped],
            "relands_of_nothing_reverted": [
                _landing_json(r) | {"announced": r.reland_subject} for r in self.not_relands
            ],
            "false_flags": self.false_flags,
            "false_flags_per_1000": round(self.false_flags_per_1000, 3),
            "by_subject": self.by_subject(),
            "flags": [_landing_json(f) for f in self.flagged],
            "missed": [_landing_json(r) for r in self.relands if not r.hits],
            "diffs_computed": self.diffs,
            "patches_read_with": self.patches_from,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
        }


def _attempt_json(a: Attempt) -> dict[str, Any]:
    out: dict[str, Any] = {
        "attempt": a.record.id,
        "title": a.record.title,
        "revert": a.revert,
        "reverted": a.reverted,
        "lines": a.lines,
    }
    if subject := a.record.data.get("attributes", {}).get("revert_subject"):
        out["revert_subject"] = subject  # (an unresolved revert's, which its title quotes)
    return out


def _landing_json(landing: Landing) -> dict[str, Any]:
    out: dict[str, Any] = {
        "commit": landing.commit.sha,
        "subject": landing.commit.subject,
        "kind": "reland" if landing.reland else "ordinary",
    }
    if landing.run:
        out["landed_with"] = landing.run
    if landing.reland:
        out["form"] = landing.reland.form
        if landing.reland_subject and landing.reland_subject != landing.commit.subject:
            out["reland_subject"] = landing.reland_subject
        out["expected"] = [_attempt_json(a) for a in landing.expected]
    if landing.hits:
        out["matches"] = [
            _attempt_json(h.attempt)
            | {
                "how": h.kind,
                "rule": h.rule,
                "matched": h.match.matched,
                "total": h.match.total,
                "own": h.match.own,
                "added": h.match.added,
                "added_total": h.match.added_total,
                "recreated": list(h.match.recreated),
                "expected": h.expected,
                "where": list(h.match.where) if h.match.where else None,
                "score": round(h.match.score, 4),
                "evidence": h.evidence,
            }
            | ({"moved": h.moved} if h.moved else {})
            for h in landing.hits
        ]
    if landing.note:
        out["note"] = landing.note
    return out


class _Index:
    """Informative line -> the attempts holding it (added and removed lines apart), and the same
    keyed by a coarser form (all whitespace collapsed) for the raw-patch prefilter."""

    def __init__(self, attempts: Iterable[Attempt], names_needed: int = 0, rare: float = 1.0) -> None:
        self.names_needed = names_needed  # rare identifiers an attempt introduced that a change must say (D14)
        self.rare = rare
        self.names: dict[str, list[Attempt]] = defaultdict(list)  # an identifier -> the attempts introducing it
        self.added: dict[str, list[Attempt]] = defaultdict(list)
        self.removed: dict[str, list[Attempt]] = defaultdict(list)
        self.keys: dict[str, list[Attempt]] = defaultdict(list)
        self.creating: dict[str, list[Attempt]] = defaultdict(list)  # path -> attempts that only created files
        self.versions: dict[str, list[Attempt]] = defaultdict(list)  # a version its dependencies moved to
        self.moving: list[Attempt] = []  # the attempts that moved dependencies
        self.edits: list[Attempt] = []  # the attempts with no informative line, matched by their whole edit
        for a in attempts:
            for dep in a.deps:
                self.versions[_bare_version(dep["version_range"])].append(a)
            if a.deps:
                self.moving.append(a)
            if a.lines_of is None:
                continue
            if names_needed:
                for name in a.lines_of.introduced:
                    self.names[name].append(a)
            if not a.lines_of.total and any(a.lines_of.edit):
                self.edits.append(a)
                plus, minus = a.lines_of.edit
                for sign, side in (("+", plus), ("-", minus)):
                    for _name, text in side:
                        self.keys[_key(sign, text)].append(a)
            if a.lines_of.only_creates:
                for path in a.lines_of.created:
                    self.creating[path].append(a)
                    self.keys["+++ b/" + path].append(a)  # the raw patch's header of a file it creates
            for sign, pool, lines in (("+", self.added, a.lines_of.adds), ("-", self.removed, a.lines_of.removes)):
                for text in lines:
                    pool[text].append(a)
                    self.keys[_key(sign, text)].append(a)

    def may_match(self, keys: set[str], landing: int) -> bool:
        """Do the raw patch's lines (`_keys`) hold a line of an attempt active at `landing`, or the
        header of a file it only created? A superset test for every match with at least one exact
        line: whatever the diff algorithm and rename detection, a raw patch holds every line the
        matcher counts (the net re-added and re-removed ones), and more. (A change that brings
        back only *edited* lines of an attempt, none exactly, is not replayed; `check` sees it.)"""
        shared = keys & self.keys.keys()
        return any(a.active(landing) for key in shared for a in self.keys[key]) or self._may_move(keys, landing)

    def saying(self, said: Iterable[str], landing: int, weights: Weights) -> list[Attempt]:
        """The attempts active at `landing` of which `said` holds `names_needed` introduced
        identifiers, each rare there (rule D14's superset: in any file)."""
        count: Counter[int] = Counter()
        found: dict[int, Attempt] = {}
        for name in said:
            for a in self.names.get(name, ()):
                assert a.lines_of is not None
                if a.active(landing) and a.lines_of.name_weight(name, weights) >= self.rare:
                    count[id(a)] += 1
                    found[id(a)] = a
        return [found[k] for k, n in count.items() if n >= self.names_needed]

    def _may_move(self, keys: set[str], landing: int) -> bool:
        """Does the raw patch touch a manifest and add a version an active attempt moved a
        dependency to (`version = "4.5.35"`, `clap==4.5.35`, `"version": "4.5.35"`)?"""
        if not any(a.active(landing) for a in self.moving):
            return False
        if not any(k.startswith("+++ b/") and is_manifest(k[6:]) for k in keys):
            return False
        if any(a.active(landing) for v, moved in self.versions.items() if "." not in v for a in moved):
            return True  # a major alone (`=20`, `=6`): written in too many ways (`.nvmrc`'s `20`) to look for
        found = {_bare_version(v) for k in keys if k.startswith("+") for v in _VERSION.findall(k)}
        # a version written short holds its releases (`=6.0` holds 6.0.8): every leading part is one
        held = {".".join(parts[:n]) for v in found for parts in [v.split(".")] for n in range(1, len(parts) + 1)}
        return any(a.active(landing) for v in held & self.versions.keys() for a in self.versions[v])

    def moving_at(self, landing: int) -> list[Attempt]:
        return [a for a in self.moving if a.active(landing)]

    def candidates(self, change: ChangeLines, landing: int, weights: Weights) -> list[Attempt]:
        out: dict[int, Attempt] = {}
        for pool, lines in ((self.added, change.adds), (self.removed, change.removes)):
            for text in lines:
                for a in pool.get(text, ()):
                    if a.active(landing):
                        out.setdefault(id(a), a)
        for path in change.created:
            for a in self.creating.get(path, ()):
                if a.active(landing):
                    out.setdefault(id(a), a)
        if self.names:
            for a in self.saying(change.said & self.names.keys(), landing, weights):
                out.setdefault(id(a), a)
        if not change.total:  # an edit with no informative line, as theirs: compared whole (they are few)
            for a in self.edits:
                if a.active(landing) and a.lines_of is not None and a.lines_of.edit == change.edit:
                    out.setdefault(id(a), a)
        return list(out.values())


_VERSION = re.compile(r"(?<![\w.])(?:v|go)?\d+(?:\.[0-9A-Za-z+-]+)+")  # `go1.22.3`: go.mod's toolchain


def _bare_version(text: str) -> str:
    """`=4.5.35`, `==4.5.35`, `v4.5.35` -> `4.5.35`: versions as a raw patch may show them."""
    return text.lstrip("=<>~^ ").removeprefix("v").removeprefix("go")


def _key(sign: str, text: str) -> str:
    return sign + " ".join(text.split())


def _patch_keys(repo: pygit2.Repository, commit: CommitInfo, base: str | None = None) -> set[str] | None:
    """The raw patch's keys of one landing, through libgit2 (when `git log` is not available)."""
    try:
        c = repo[commit.sha].peel(pygit2.Commit)
        if base is not None:
            diff = repo.diff(repo[base].peel(pygit2.Commit), c, context_lines=0)
        elif c.parents:
            diff = repo.diff(c.parents[0], c, context_lines=0)
        else:
            diff = c.tree.diff_to_tree(context_lines=0, swap=True)
        patch = diff.patch or ""
    except (KeyError, ValueError, UnicodeDecodeError, pygit2.GitError):
        return None  # undecidable here: the full change decides
    return {_key(ln[0], ln[1:]) for ln in patch.split("\n") if ln.startswith(("+", "-"))}


def _logged_keys(
    repo: pygit2.Repository, tip: str, hide: Iterable[str]
) -> Iterator[tuple[str, set[str], list[set[str]]]]:
    """(commit, keys of its raw patch, the normalised changed lines of each file it touched) for
    every landing, from one streamed `git log -p` over the first-parent chain: git prunes unchanged
    subtrees, so this is several times faster than a libgit2 diff per commit. Nothing is written:
    git only reads the repository. git stops at a commit it cannot show (a blob the clone lacks):
    that commit is left out (libgit2 reads it, or says it cannot) and the stream goes on from its
    first parent."""
    hide = list(hide)
    start: str | None = tip
    while start is not None:
        stopped = yield from _logged_from(repo, start, hide)
        if stopped is None:
            return
        try:
            parents = repo[stopped].peel(pygit2.Commit).parent_ids
        except (KeyError, ValueError, pygit2.GitError):
            raise OSError(f"git log stopped at {stopped}") from None
        start = str(parents[0]) if parents else None


def _logged_from(
    repo: pygit2.Repository, tip: str, hide: list[str]
) -> Generator[tuple[str, set[str], list[set[str]]], None, str | None]:
    """`_logged_keys` from `tip`, one git process; returns the commit it stopped at, if git failed
    on one (OSError when it failed before any)."""
    cmd = log_command(repo.path, tip, hide)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    sha: str | None = None
    keys: set[str] = set()
    files: list[set[str]] = []
    current: set[str] | None = None
    try:
        for raw in proc.stdout:
            first = raw[:1]
            if first == b"\x00":
                if sha:
                    yield sha, keys, files
                sha, keys, files, current = raw[1:].strip().decode("ascii", "replace"), set(), [], None
            elif first in (b"+", b"-"):
                k = _key(chr(raw[0]), raw[1:].decode("utf-8", "replace"))
                keys.add(k)
                if current is not None:
                    current.add(k[1:])
            elif first == b"d" and raw.startswith(b"diff --git "):
                current = None
                files.append(set())
            elif first == b"@" and files:
                current = files[-1]  # in a hunk: its lines (not the file's `---`/`+++` header)
    finally:
        proc.stdout.close()
        code = proc.wait()
    if code == 0:
        if sha:
            yield sha, keys, files
        return None
    if sha is None:
        raise OSError(f"git log exited with {code}")
    return sha  # the one git could not show: not yielded, its patch is partial


class _AsOf(Weights):
    """The term weights a harvest cache holds at one landing: counted over the landings before it."""

    def __init__(self, seen: _Seen, landing: int) -> None:
        self._seen, self._at = seen, landing
        self.changes = bisect.bisect_left(seen.docs, landing)
        self.files = seen.files_before(landing)

    def counts(self, term: str) -> tuple[int, int]:
        at = self._at
        return (
            bisect.bisect_left(self._seen.in_changes.get(term, ()), at),
            bisect.bisect_left(self._seen.in_files.get(term, ()), at),
        )


class _Seen:
    """Where the attempts' terms (their lines, the identifiers they introduced) occur: the landing of
    every change and file holding one, from the prefilter's stream, so that the weights at a landing
    count only the history before it, as `comind check` there would."""

    def __init__(self, attempts: Iterable[Attempt]) -> None:
        self.lines: set[str] = set()
        self.names: set[str] = set()
        for a in attempts:
            if a.lines_of is not None:
                self.lines.update(a.lines_of.adds, a.lines_of.removes)
                self.names.update(a.lines_of.introduced)
        self.in_changes: dict[str, list[int]] = defaultdict(list)
        self.in_files: dict[str, list[int]] = defaultdict(list)
        self.docs: list[int] = []  # the landing of each change read
        self.files_of: Counter[int] = Counter()  # landing -> files its changes touched
        self._before: list[int] = []

    def add(self, landing: int, files: list[set[str]]) -> set[str]:
        """Count one change (the normalised changed lines of each file); the attempts' introduced
        identifiers it holds."""
        self.docs.append(landing)
        self.files_of[landing] += len(files)
        change: set[str] = set()
        said: set[str] = set()
        for lines in files:
            terms = lines & self.lines
            if self.names:
                names = set(IDENT.findall("\n".join(lines))) & self.names
                said |= names
                terms |= names
            for t in terms:
                self.in_files[t].append(landing)
            change |= terms
        for t in change:
            self.in_changes[t].append(landing)
        return said

    def done(self) -> None:
        """Sorted, oldest first (the stream is newest first)."""
        for table in (self.in_changes, self.in_files):
            for occurrences in table.values():
                occurrences.sort()
        self.docs.sort()
        self._before = sorted(self.files_of)
        total = 0
        self._cumulative: list[int] = []
        for i in self._before:
            total += self.files_of[i]
            self._cumulative.append(total)

    def files_before(self, landing: int) -> int:
        k = bisect.bisect_left(self._before, landing)
        return self._cumulative[k - 1] if k else 0

    def at(self, landing: int) -> Weights:
        return _AsOf(self, landing)


def _prefilter(
    history: History, landings: dict[int, Landing], index: _Index, progress: Progress | None, weights: _Seen
) -> tuple[set[int], str]:
    """The landings whose raw patch holds a line of an attempt active there; and how it was read.
    On the way, `weights` learns where the attempts' terms occur."""
    hide = [history.chain[i - 1] for i in landings if i > 0 and i - 1 not in landings]
    chosen: set[int] = set()
    seen: set[int] = set()
    by_name: dict[int, set[str]] = {}  # landing -> the attempts' introduced identifiers its commits hold
    try:
        for n, (sha, keys, files) in enumerate(_logged_keys(history.repo, history.tip, hide)):
            i = history.landing.get(sha)
            if i is None or i not in landings:
                continue
            said = weights.add(i, files)
            if said and index.names:
                by_name.setdefault(i, set()).update(said)
            if history.chain[i] == sha:
                seen.add(i)
            elif i not in history.base:  # a merged branch's commit: its merge's own patch counts
                continue
            if index.may_match(keys, i):  # (a run: the keys of its commits hold those of its change)
                chosen.add(i)
            if progress and n % PROGRESS_EVERY == 0:
                progress("reading patches", n, len(landings))
    except OSError:  # no git, or an object missing from a partial copy: libgit2 reads the rest
        pass
    weights.done()
    for i, said in by_name.items():  # rare names only: their weights at a landing are known now
        if i not in chosen and index.saying(said, i, weights.at(i)):
            chosen.add(i)
    rest = landings.keys() - seen
    how = f"git log: {len(seen)}, libgit2: {len(rest)}"
    for i in rest:  # not in git's output: one libgit2 diff each
        found = _patch_keys(history.repo, landings[i].commit, history.base.get(i))
        if found is None or index.may_match(found, i):
            chosen.add(i)
    return chosen, how


def _change(repo: pygit2.Repository, commit: CommitInfo, base: str | None, rules: RuleBook) -> Approach | None:
    try:
        return approach(repo, commit.sha, base, rules)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _not_brought(repo: pygit2.Repository, landing: Landing, base: str | None, rules: RuleBook) -> str | None:
    """Why the landing does not bring the reland it announces, if it does not: it is a merge whose
    diff touches none of the announcing side commit's files (a release branch merged for its
    changelog only: its redone bump reached the branch otherwise). Files are compared by name, so that
    a history merged in under another folder (an adapter's history imported) still brings its
    commits. Or the tree had what it relands already (`_had_already`)."""
    side = landing.announcer
    before = base or (landing.commit.parents[0] if landing.commit.parents else None)
    if landing.commit.is_merge and side is not None and side is not landing.commit and side.parents and before:
        try:
            mine = _names(repo, landing.commit.sha, before)
            theirs = _names(repo, side.sha, side.parents[0])
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if not rules.get(Brought).judge(mine, theirs):
            return (
                f"the merge does not bring {side.sha[:10]}, which announced it: its diff touches none of that "
                "commit's files"
            )
    if before is None or (why := _had_already(repo, landing, before, rules.get(HadAlready))) is None:
        return None
    return None if _exact_reapply(repo, landing, before, rules) else why


def _exact_reapply(repo: pygit2.Repository, landing: Landing, before: str, rules: RuleBook) -> bool:
    """Does the landing re-add every informative line of an attempt it relands (rule E6)? Then it
    is a positive whatever the tree held: lines repeated within the same files (test cases written
    alike) make the tree look as if it had them."""
    try:
        change = approach(repo, landing.commit.sha, before, rules)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    lines = ChangeLines(change, rules)
    rule = rules.get(ExactReapply)
    return any(a.lines_of is not None and rule.judge(match_lines(a.lines_of, lines, rules)) for a in landing.expected)


def _is_back(history: History, landing: Landing, attempt: Attempt, rules: RuleBook, weights: Weights) -> Verdict | None:
    """Rules D15 and D17, as `comind check` applies them, against the tree before the landing."""
    commit = landing.commit
    base = history.base.get(landing.index) or (commit.parents[0] if commit.parents else None)
    approach_ = fingerprint_of(attempt.record)
    if base is None or approach_ is None or attempt.lines_of is None:
        return None
    return is_back(history.repo, base, attempt.record, approach_, attempt.lines_of, rules, weights)


def _had_already(repo: pygit2.Repository, landing: Landing, before: str, rule: HadAlready) -> str | None:
    """The tree before the landing held (nearly, `HAD_SHARE`) all the added lines of every attempt it relands,
    in the files those attempts touched: someone brought them back before, under a title of its own
    (docs written again on main, then a release branch merged with its own reland of the same
    docs). No landing re-applies what the tree has. This reads the tree, not the
    matcher's judgement of the landing."""
    shares = []
    for attempt in landing.expected:
        change = fingerprint_of(attempt.record)
        if attempt.lines_of is None or change is None:
            return None
        held = held_at(repo, before, change, attempt.lines_of, rule.count("lines"))
        if held is None:
            return None  # too few lines to tell
        shares.append(held)
    if not rule.judge(shares):
        return None
    return f"the tree had {min(shares):.0%} of what it relands already, before it landed"


def _names(repo: pygit2.Repository, sha: str, base: str) -> set[str]:
    """The names of the files a change from `base` to `sha` touches (no patch, no rename detection)."""
    return {
        p.rsplit("/", 1)[-1] for path, old, _ in changed_paths(repo, base, sha, renames=False) for p in (path, old) if p
    }


def _undone_in_landing(history: History) -> set[str]:
    """The commits reverted in the landing that brought them (a release branch merged with a
    backport and its revert): they never landed, so they announce nothing."""
    return {a.reverted for a in history.attempts if a.reverted is not None and a.inside}


def _copies(history: History) -> set[str]:
    """The commits a merge brought in that copy one the branch landed before and kept (same author,
    author time and subject; the message may be rewritten): an imported history carrying the project's
    own past (a package split off with it and merged back years later), a release branch's
    cherry-picks merged back. They land nothing new, so they announce no reland."""

    def key(c: CommitInfo) -> tuple[str, int, str]:
        return c.author_email, c.author_time, c.subject

    reverted = {a.reverted for a in history.attempts if a.reverted}
    first: dict[tuple[str, int, str], int] = {}  # each key's first landing
    for c in history.commits:
        if c.sha not in reverted:
            first[key(c)] = min(first.get(key(c), history.landing[c.sha]), history.landing[c.sha])
    return {
        c.sha
        for brought in history.side.values()
        for c in brought
        if first.get(key(c), history.landing[c.sha]) < history.landing[c.sha]
    }


def _subject_keys(history: History, undone: set[str]) -> dict[str, list[tuple[int, str]]]:
    """Normalised subject -> (landing, commit) of the commits carrying it (reverts and relands, and
    the `undone` commits, reverted in their own landing, left out)."""
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for commit in history.commits:
        if commit.sha in undone:
            continue
        for subject in (commit.subject, *_squashed(commit)):
            if revert_markers(subject, "") or reland_of(subject):
                continue
            if key := subject_key(subject):
                out[key].append((history.landing[commit.sha], commit.sha))
    return out


def _named(by_subject: Mapping[str, list[Attempt]], reland: Reland) -> list[Attempt]:
    """The attempts whose reverted subject a reland names: that subject; for `x again` / `x, take 2`,
    which shorten it, the one reverted subject that starts with x (none when several do)."""
    found = by_subject.get(reland.relanded, [])
    if found or reland.form != "again" or len(reland.relanded) < 8:
        return list(found)
    keys = [k for k in by_subject if k.startswith(reland.relanded + " ")]
    return list(by_subject[keys[0]]) if len(keys) == 1 else []


def _relands(history: History, landings: dict[int, Landing], rules: RuleBook) -> None:
    """Mark the landings that reland something, and the attempts each is expected to match."""
    by_subject: dict[str, list[Attempt]] = defaultdict(list)
    for a in history.attempts:
        by_subject[subject_key(a.subject)].append(a)
    retired_by: dict[str, list[Attempt]] = defaultdict(list)
    attempts_by_id = {a.record.id: a for a in history.attempts}
    for n, record in history.records:
        retired = attempts_by_id.get(str(record.fields.get("target"))) if record.kind == "relation" else None
        if retired is not None and record.fields.get("relation") == "retracts":
            retired_by[history.commits[n].sha].append(retired)
    undone = _undone_in_landing(history)
    copies = _copies(history)
    announces = rules.get(Undone)
    silent = {c for c in undone | copies if not announces.judge(c in undone, c in copies)}
    for index, landing in landings.items():
        announced = [landing.commit, *(c for c in history.side.get(index, []) if c.sha not in silent)]
        title = _pr_title(landing.commit)
        subjects = [(c.subject, c) for c in announced] + ([(title, landing.commit)] if title else [])
        subjects += [(bullet, landing.commit) for bullet in _squashed(landing.commit)]
        for subject, commit in subjects:
            reland = reland_of(subject)
            if reland is None or (commit is not landing.commit and _REVERT_REVERT_BRANCH.match(subject)):
                continue  # (a merge inside a merged branch: an imported history's merges)
            expected = list(retired_by.get(commit.sha, ()))
            if not expected and reland.relanded:
                earlier = [a for a in _named(by_subject, reland) if a.start <= index]
                expected = earlier[-1:]
            if not reland.named and not expected:
                continue
            landing.reland, landing.reland_subject, landing.expected = reland, subject, expected
            landing.announcer = commit
            break
    # the same subject again after its revert: the first landing carrying it, if it was not common
    # before (`Update dependencies`); earlier landings of it that were themselves reverted are the
    # same change tried before, not a sign of a common subject. One word (`fmt`, `typo`) names no
    # change: a second `fmt` shares none of the reverted one's lines.
    keys = _subject_keys(history, undone)
    reverted = {a.reverted for a in history.attempts if a.reverted}
    same = rules.get(SameSubject)
    for a in history.attempts:
        key = subject_key(a.subject)
        seen = keys.get(key, [])
        if not key or not same.judge(
            len(a.subject.split()),
            sum(1 for i, sha in seen if i < a.start and sha not in reverted),
            a.reverted is not None,
        ):
            continue
        # the first landing after the revert, by landing, not by commit date: a merged branch's commit
        # can be older than the landing that carried the subject first (an imported history)
        later = min((i for i, _ in seen if i > a.start), default=None)
        if later is None or later not in landings:
            continue
        landing = landings[later]
        if landing.reland is None:
            landing.reland = Reland("same-subject", key)
            carried = [(c.subject, c) for c in (landing.commit, *history.side.get(later, []))]
            carried += [(bullet, landing.commit) for bullet in _squashed(landing.commit)]
            landing.reland_subject, landing.announcer = next(
                ((s, c) for s, c in carried if subject_key(s) == key), (landing.commit.subject, landing.commit)
            )
        if a not in landing.expected and landing.reland.relanded == key:
            landing.expected.append(a)
    # said in the body only, as the harvester reads it: a revert of a revert ("This reverts CL 682715.
    # Second attempt.") or a reland by reference ("Reland of #33118")
    for index, landing in landings.items():
        announced = [landing.commit, *(c for c in history.side.get(index, []) if c.sha not in silent)]
        relanded = [a for c in announced for a in retired_by.get(c.sha, ())]
        if landing.reland is None and relanded:
            landing.reland = Reland("in-body", subject_key(relanded[0].subject))
            landing.reland_subject, landing.expected = landing.commit.subject, relanded
            landing.announcer = next(c for c in announced if retired_by.get(c.sha))


_PR_REF = re.compile(r"#\d+")
_REVERT_WORDS = re.compile(r"\brevert|\broll(?:ed|s|ing)?[ -]?back\b|\bback(?:ed|s|ing)?[ -]?out\b", re.I)


def _revert_mentions(history: History) -> Callable[[str, int], bool]:
    """`(ref, landing) -> bool`: does a message landed before `landing` speak of reverting and
    name `ref` (`#N`)? Independent of the harvesters, and lenient on purpose: a reland whose revert
    the harvesters missed still counts (as a miss); only a "reapply #5930" of a change that was
    removed otherwise, never reverted, is not a positive. (A reland naming a subject is always one:
    its revert may word it differently, `reland JsRuntime/Worker is not a Future`.)"""
    mentions = [
        (history.landing[c.sha], " ".join(c.message.lower().split()))
        for c in history.commits
        if _REVERT_WORDS.search(c.message)
    ]

    def before(text: str, landing: int) -> bool:
        needle = " ".join(text.lower().split())
        return any(i < landing and needle in message for i, message in mentions)

    return before


def replay(
    ws: Workspace, *, since: str | None = None, progress: Progress | None = None, history: History | None = None
) -> ReplayResult:
    """Replay the matcher over the history (see the module docstring)."""
    started = time.perf_counter()
    given = history is not None
    rev = since_commit(open_repo(ws.root), since) if since else None  # before the long walk
    history = history or harvest_history(ws, progress=progress)
    config = ws.config
    rules = history.rules = rules_of(config)
    threshold, min_lines = rules.threshold, rules.min_lines
    result = ReplayResult(ws.repo_name, history.tip, threshold, min_lines, path=str(ws.root))
    result.seconds["harvest"] = history.seconds
    result.commits_walked = len(history.commits)
    result.attempts = len(history.attempts)
    result.attempts_with_lines = sum(1 for a in history.attempts if a.lines)
    skip: set[str] = set()
    if rev:
        skip = {c.sha for c in walk(history.repo, [rev])}
    by_sha = {c.sha: c for c in history.commits}
    landings = {
        i: Landing(i, by_sha[sha], run=[c.sha for c in history.side[i]] if i in history.base else [])
        for i, sha in enumerate(history.chain)
        if sha not in skip
    }
    _relands(history, landings, rules)
    reverted_before = _revert_mentions(history)
    names = rules.get(KeptNames)
    index = _Index(
        (a for a in history.attempts if a.lines or a.deps or (a.lines_of and any(a.lines_of.edit))),
        names.count("names"),  # 0: D14 off, no candidates by name
        names.value("rare"),
    )
    scan_started = time.perf_counter()
    seen_terms = _Seen(history.attempts)
    chosen, result.patches_from = _prefilter(history, landings, index, progress, seen_terms)
    result.seconds["patches"] = time.perf_counter() - scan_started
    total = len(landings)
    for done, (i, landing) in enumerate(sorted(landings.items())):
        if progress and done % PROGRESS_EVERY == 0:
            progress("replaying", done, total)
        result.commits_scanned += 1
        result.merges_scanned += landing.commit.is_merge
        reland = landing.reland
        if reland and landing.expected and not rules.get(RevertFirst).judge((a.first for a in landing.expected), i):
            # (a branch can redo a fix the default branch reverted, and take the revert in a later merge)
            landing.note = (
                "its revert landed in the same change, of a commit the base had: nothing is brought back"
                if all(a.start == i for a in landing.expected)
                else "its revert landed later, from another branch: no check saw the attempt before it"
            )
            result.relands_skipped.append(landing)
            continue
        if reland and not landing.expected and _squashed_cycle(landing, rules):
            landing.note = "what it relands and its revert were squashed into the same change"
            result.relands_skipped.append(landing)
            continue
        if reland and rules.get(RelandedBefore).judge((a.end for a in landing.expected), i):
            # `sync stubs again` after an earlier reland: what it names is no longer reverted
            before = max(a.end or 0 for a in landing.expected)
            landing.note = f"what it relands was relanded before, at landing {before}"
            result.relands_skipped.append(landing)
            continue
        if reland and (why := _not_brought(history.repo, landing, history.base.get(i), rules)):
            landing.note = why
            result.relands_skipped.append(landing)
            continue
        if (
            reland
            and not landing.expected
            and _PR_REF.fullmatch(reland.relanded)
            and not rules.get(RevertedRef).judge(reverted_before(reland.relanded, i))
        ):
            # "reapply #5930" of a change removed otherwise, never reverted: an ordinary commit
            landing.note = f"no earlier message speaks of reverting {reland.relanded!r}: scanned as ordinary"
            result.not_relands.append(landing)
            landing.reland = reland = None
        if reland:
            result.relands.append(landing)
        if i not in chosen:
            _explain(landing, None, rules)
            continue
        change = _change(history.repo, landing.commit, history.base.get(i), rules)
        result.diffs += 1
        if change is None:
            landing.note = "its change could not be read"
            continue
        lines = ChangeLines(change, rules)
        expected = {id(a) for a in landing.expected}
        weights = seen_terms.at(i)
        for attempt in index.candidates(lines, i, weights):
            assert attempt.lines_of is not None
            m = match_lines(attempt.lines_of, lines, rules, weights)
            verdict = judge(m, rules)
            if verdict.kind == "lines":
                verdict = _is_back(history, landing, attempt, rules, weights) or verdict
            if id(attempt) in expected:
                landing.judged[id(attempt)] = verdict
            if verdict.kind:
                landing.hits.append(Hit(attempt, m, id(attempt) in expected, verdict.kind, verdict.rule))
            if m.matched >= NEAR_MISS or verdict.kind or m.kept:
                result.near_misses.append(_near_miss(landing, attempt, m, verdict, id(attempt) in expected))
        moving = [a for a in index.moving_at(i) if all(h.attempt is not a for h in landing.hits)]
        if moving and any(is_manifest(f.path) for f in change.files):
            for attempt, moved in _dependency_hits(history, landing, change, moving, rules):
                hit = Hit(attempt, Match(0, 0, None), id(attempt) in expected, "dependency", DependencyMove.id, moved)
                landing.hits.append(hit)
        if landing.hits:
            result.flagged.append(landing)
        _explain(landing, lines, rules)
    if progress:
        progress("replaying", total, total)
    result.seconds["replay"] = time.perf_counter() - scan_started
    result.seconds["total"] = time.perf_counter() - started + (history.seconds if given else 0.0)
    return result


def _near_miss(landing: Landing, attempt: Attempt, m: Match, verdict: Verdict, expected: bool) -> dict[str, Any]:
    """One pair's figures, as `deadends.Match` holds them, and the rule that decided (for a pair that
    is no match: the rule it falls short of): enough to judge it again by another rule."""
    return {
        "commit": landing.commit.sha,
        "subject": landing.commit.subject[:200],
        "reland": landing.reland is not None,
        "expected": expected,
        "attempt": attempt.record.id,
        "title": attempt.subject[:200],
        "kind": verdict.kind,
        "rule": verdict.rule,
        "matched": m.matched,
        "total": m.total,
        "local": m.local,
        "own": m.own,
        "added": m.added,
        "added_total": m.added_total,
        "recreated": list(m.recreated),
        "score": round(m.score, 4),
        "weight": round(m.weight, 3),
        "evidence": m.evidence,
        "names": [round(w, 3) for w in m.names],
        "kept": [round(w, 3) for w in m.kept],
    }


def _dependency_hits(
    history: History, landing: Landing, change: Approach, moving: list[Attempt], rules: RuleBook
) -> list[tuple[Attempt, str]]:
    """The attempts whose dependency move the landing makes again, as `comind check` finds them
    (`deadends.moves_into`), each with what moved."""
    commit = landing.commit
    base = history.base.get(landing.index) or (commit.parents[0] if commit.parents else None)
    if base is None:
        return []
    try:
        changed = [p for f in change.files for p in (f.path, f.old_path) if p]
        moves = dependency_moves(
            history.repo[base].peel(pygit2.Commit), history.repo[commit.sha].peel(pygit2.Commit), changed
        )
    except (KeyError, ValueError, pygit2.GitError):
        return []
    out = []
    for attempt in moving:
        if found := moves_into(attempt.record.anchors, moves, rules):
            dep, before, version, _path = found[0]
            out.append((attempt, f"{dep['package']} {before or '(none)'} -> {version}"))
    return out


def _explain(landing: Landing, change: ChangeLines | None, rules: RuleBook) -> None:
    """Why a reland was not flagged, for the `missed` list."""
    if landing.reland is None or landing.hits:
        return
    if not landing.expected:
        landing.note = "no harvested attempt for what it relands (its revert was not found or not resolved)"
        return
    best = landing.expected[-1]
    if best.end is not None and best.end < landing.index:
        landing.note = f"the attempt was already retired by a reland at landing {best.end}"
    elif best.deps and not best.lines:
        moved = ", ".join(f"{d['package']} {d['version_range']}" for d in best.deps[:3])
        landing.note = f"it moves no dependency where the attempt moved it ({moved})"
    elif best.lines_of is None or not best.lines:
        landing.note = "the attempt has no informative lines (binary, over the size limit, or trivial only)"
    elif change is None:
        landing.note = "it re-adds none of the attempt's informative lines"
    else:
        verdict = landing.judged.get(id(best)) or judge(match_lines(best.lines_of, change, rules), rules)
        landing.note = f"{verdict.shortfall} ({rule_label(verdict.rule)})"
