"""Dead ends: does the change re-propose an approach that already failed?

An attempt carries its approach fingerprint (the normalised lines its change added and removed,
per file). The rules of `comind.rulebook` (the D rules, and L1-L3 for which lines count) decide when a
change re-proposes it: by its lines, the files it created, its whole edit, a dependency move or a
compiled pattern. Titles and commit messages that name a rejected alternative anchored to the
touched code are a note. An attempt whose retry condition is met reports a note, not a failure; a
relanded (retracted) or superseded attempt reports nothing, nor one the base holds again (D15).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pygit2

from comind.checks.context import CheckContext
from comind.checks.findings import Finding, Report, fingerprint
from comind.deps import (
    NEWEST_OF_FILES,
    dependencies,
    exact_pin,
    is_manifest,
    manifest_ecosystems,
    normalize_name,
    resolved_versions,
    version_in_range,
)
from comind.harvest.approach import Approach, FileChange, Line, bookkeeping, file_lines
from comind.harvest.walker import decode_message, walk
from comind.records import Record, gave_no_reason, quoted, short_id
from comind.rule import Match
from comind.rulebook import (
    BY_ID,
    DEFAULT,
    BackAlready,
    BaseRule,
    DependencyMove,
    EditedLine,
    InformativeLine,
    KeptNames,
    LandedAgain,
    Pattern,
    RuleBook,
    Verdict,
    judge_match,
    rules_of,
    words,
)
from comind.weights import IDENT, WeightIndex, Weights

if TYPE_CHECKING:
    from comind.checks.run import CheckRun

__all__ = ["ChangeLines", "Match", "Verdict", "informative", "is_match", "judge", "match_lines"]

IGNORED_STATES = ("retracted", "superseded", "quarantined")
MAX_LANDED = 20  # landings scored in full for rule D17, newest first: enough for any one history


def informative(text: str, rules: RuleBook = DEFAULT) -> bool:
    """Can the normalised line say something about an approach (rule L1)?"""
    return rules.get(InformativeLine).judge(text)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


class ChangeLines:
    """A change's informative lines as multisets, computed once for matching against many attempts.

    A line the change both removes and adds (code moved within or between files, a file moved or
    re-indented, whatever rename detection made of it) is neither re-added nor re-removed: only the
    net difference counts. Moving code is not proposing it; and a reland re-adds lines that its
    revert took out of the tree, so it never removes them too. `files` keeps, per line, the names
    of the files it was added to or removed from (the file name, so that a moved file still counts).
    `created` holds the paths of the files it creates; `only_creates` says it does nothing else.
    `edit` holds every line that is not trivial, informative or not, per file name: the whole edit of
    a change too small to have informative lines (a CI matrix's `- '17'`), which only that edit
    alone can make again."""

    def __init__(self, change: Approach, rules: RuleBook = DEFAULT) -> None:
        line_rule = rules.get(InformativeLine)
        adds: Counter[str] = Counter()
        removes: Counter[str] = Counter()
        self.first_at: dict[str, tuple[str, int]] = {}
        self.files: dict[tuple[bool, str], set[str]] = {}
        self.by_name: dict[tuple[bool, str], list[str]] = {}  # (added, file name) -> its informative lines
        made: list[FileChange] = []  # the files that are not bookkeeping
        for f in change.files:
            name = _name(f.path)
            if bookkeeping(f.path):
                continue
            made.append(f)
            for added, lines, pool in ((True, f.added, adds), (False, f.removed, removes)):
                for ln in lines:
                    if not ln.trivial and line_rule.judge(ln.text):
                        pool[ln.text] += 1
                        self.files.setdefault((added, ln.text), set()).add(name)
                        self.by_name.setdefault((added, name), []).append(ln.text)
                        if added:
                            self.first_at.setdefault(ln.text, (f.path, ln.lineno))
        moved = adds & removes
        self.adds = adds - moved
        self.removes = removes - moved
        self._made = made
        self.created = frozenset(f.path for f in made if f.status == "A")
        self.only_creates = bool(made) and len(self.created) == len(made)

    @property
    def total(self) -> int:
        return sum(self.adds.values()) + sum(self.removes.values())

    @cached_property
    def edit(self) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
        """(added, removed): its non-trivial lines by (file name, line), a line both added and removed
        in a file (re-indented, moved within it) left out; computed only when an attempt asks."""
        plus: Counter[tuple[str, str]] = Counter()
        minus: Counter[tuple[str, str]] = Counter()
        for f in self._made:
            name = _name(f.path)
            plus.update((name, ln.text) for ln in f.added if not ln.trivial)
            minus.update((name, ln.text) for ln in f.removed if not ln.trivial)
        both = plus & minus
        return plus - both, minus - both

    @cached_property
    def introduced(self) -> frozenset[str]:
        """The identifiers its informative added lines bring that its removed lines did not have: the
        names an attempt introduced, which a rewritten reland keeps."""
        removed = {w for text in self.removes for w in IDENT.findall(text)}
        return frozenset(w for text in self.adds for w in IDENT.findall(text) if w not in removed)

    @cached_property
    def said_in(self) -> dict[str, frozenset[str]]:
        """File name -> the identifiers on any line it adds there (informative or not, moved or not)."""
        found: dict[str, set[str]] = {}
        for f in self._made:
            names = found.setdefault(_name(f.path), set())
            for ln in f.added:
                if not ln.trivial:
                    names.update(IDENT.findall(ln.text))
        return {name: frozenset(ids) for name, ids in found.items()}

    @cached_property
    def new_in(self) -> dict[str, frozenset[str]]:
        """File name -> the identifiers its added lines there hold that no line it removes held: the
        names it brings, not those of the code it edits."""
        gone = {w for f in self._made for ln in f.removed if not ln.trivial for w in IDENT.findall(ln.text)}
        return {name: ids - gone for name, ids in self.said_in.items()}

    @cached_property
    def said(self) -> frozenset[str]:
        """The identifiers on any line it adds (informative or not, moved or not)."""
        return frozenset().union(*self.said_in.values())

    def name_weight(self, name: str, weights: Weights) -> float:
        """The weight of an identifier it introduced, this change and its revert apart: a name no
        other change says weighs 1 (`comind.weights`)."""
        files = len(self.names_at.get(name, ())) or 1
        return weights.weight(name, (2, 2 * files))

    def first_saying(self, names: set[str]) -> tuple[str, int] | None:
        """(path, line at head) of the first non-trivial line it adds that holds one of `names`."""
        for f in self._made:
            for ln in f.added:
                if not ln.trivial and names.intersection(IDENT.findall(ln.text)):
                    return f.path, ln.lineno
        return None

    @cached_property
    def names_at(self) -> dict[str, frozenset[str]]:
        """Each identifier it introduced -> the names of the files whose added lines hold it."""
        where: dict[str, set[str]] = {}
        for (added, name), lines in self.by_name.items():
            if added:
                for text in lines:
                    for w in IDENT.findall(text):
                        if w in self.introduced:
                            where.setdefault(w, set()).add(name)
        return {w: frozenset(names) for w, names in where.items()}

    @cached_property
    def edit_at(self) -> tuple[str, int] | None:
        """Its first non-trivial added line: (path, line at head)."""
        return next(((f.path, ln.lineno) for f in self._made for ln in f.added if not ln.trivial), None)


def _tokens(text: str) -> Counter[str]:
    return Counter(words(text))


def _edited_again(mine: Counter[str], theirs: Counter[str], candidates: list[str], rule: EditedLine) -> int:
    """How many of the attempt's unmatched lines `mine` come back *extended* among `candidates` (the
    change's unmatched lines in files of the same name): every word of the attempt's line is in
    one change line (`len(x.Files) == 0` → `x.Path != "unsafe" && len(x.Files) == 0`). One change
    line stands for one attempt line; shorter lines are left to exact matching (rule L2)."""
    pool = [(text, _tokens(text)) for text in candidates if theirs[text] > 0]
    if not pool or len(pool) * sum(mine.values()) > rule.count("work"):
        return 0
    found = 0
    for text, n in mine.items():
        needed = _tokens(text)
        if not rule.judge(sum(needed.values())):
            continue
        for _ in range(n):
            hit = next((k for k, (_, theirs_words) in enumerate(pool) if not needed - theirs_words), None)
            if hit is None:
                break
            pool.pop(hit)
            found += 1
    return found


def resemblance(
    tried: ChangeLines, again: Counter[str], change: ChangeLines, weights: Weights
) -> tuple[float, float, str]:
    """(score, weight, strongest evidence): of the attempt's evidence — its informative lines and the
    identifiers it introduced, each weighing what `weights` measured — the share by weight the change
    brings back (`again`: the lines it re-adds or re-removes; an identifier: on a line it adds), the
    weight of what it brings back, and its heaviest piece in one line."""
    lines = Counter(tried.adds) + Counter(tried.removes)
    weights.prefetch([*lines, *tried.introduced])
    total = found = 0.0
    best, best_term, best_weight = "", "", -1.0
    for text, n in lines.items():
        w = weights.weight(text)
        total += n * w
        if again[text]:
            found += again[text] * w
            if w > best_weight:
                best, best_term, best_weight = f"the line `{_clipped(text, 80)}`", text, w
    names = sorted(tried.introduced)
    for name in names:
        w = weights.weight(name)
        total += w
        if name in change.said:
            found += w
            if w > best_weight:
                best, best_term, best_weight = f"the identifier `{name}` it introduced", name, w
    if not total or best_weight < 0:
        return 0.0, 0.0, ""
    rarity = weights.said(best_term, "the attempt's")
    evidence = (
        f"{best}, {rarity} (weight {best_weight:.2f}); it brings back {found / total:.0%} of the attempt by weight"
    )
    return found / total, found, evidence


def match_lines(
    attempt: Approach | ChangeLines,
    change: Approach | ChangeLines,
    rules: RuleBook = DEFAULT,
    weights: Weights | None = None,
) -> Match:
    """How many of the attempt's informative added/removed lines the change adds/removes again
    (net multisets on both sides, in any file: a moved file still re-proposes the approach; lines
    the attempt itself only moved or re-indented are not part of it; see `ChangeLines`), and how
    many of those the change adds or removes in a file named like one where the attempt did.
    An attempt line the change adds back with more words in a file of the same name counts too
    (`_edited_again`). With `weights`, the match is also scored (`resemblance`, rule D13)."""
    tried = attempt if isinstance(attempt, ChangeLines) else ChangeLines(attempt, rules)
    lines_of = change if isinstance(change, ChangeLines) else ChangeLines(change, rules)
    fuzzy = rules.get(EditedLine)
    matched = total = local = 0
    where = None
    re_added = added_total = 0
    again_lines: Counter[str] = Counter()
    for added, mine, theirs in ((True, tried.adds, lines_of.adds), (False, tried.removes, lines_of.removes)):
        left_mine: dict[str, Counter[str]] = {}
        left_theirs = Counter(theirs)
        for text, n in mine.items():
            total += n
            again = min(n, theirs[text])
            if again:
                matched += again
                again_lines[text] += again
                left_theirs[text] -= again
                if tried.files.get((added, text), set()) & lines_of.files.get((added, text), set()):
                    local += again
                if added:
                    where = where or lines_of.first_at.get(text)
            if again < n and added:
                for name in tried.files.get((added, text), ()):
                    left_mine.setdefault(name, Counter())[text] = n - again
        for name, rest in left_mine.items():
            edited = _edited_again(rest, left_theirs, lines_of.by_name.get((added, name), []), fuzzy)
            matched += edited
            local += edited
        if added:
            re_added, added_total = matched, total
    recreated: tuple[str, ...] = ()
    if tried.only_creates and tried.created <= lines_of.created:
        recreated = tuple(sorted(tried.created))
    alone = 0
    # an attempt with no informative line, its whole edit made again alone (which has none either)
    if not total and not lines_of.total and any(tried.edit) and tried.edit == lines_of.edit:
        alone, where = sum(sum(side.values()) for side in tried.edit), lines_of.edit_at
    score = weight = 0.0
    evidence = ""
    names: tuple[float, ...] = ()
    kept: tuple[float, ...] = ()
    names_evidence = ""
    if weights is not None and again_lines:
        score, weight, evidence = resemblance(tried, again_lines, lines_of, weights)
        if not weights.files:  # nothing measured (no harvest cache, a partial clone): no score, D13 silent
            score = weight = 0.0
    # D14's figures, only when it is on (unmeasured, every name would be rare: D14 silent)
    if weights is not None and weights.files and rules.get(KeptNames).count("names"):
        names, kept, names_evidence, at = kept_names(tried, lines_of, weights)
        where = where or at
    return Match(
        matched,
        total,
        where,
        local,
        own=lines_of.total,
        recreated=recreated,
        added=re_added,
        added_total=added_total,
        edited=alone,
        score=score,
        weight=weight,
        evidence=evidence,
        names=names,
        kept=kept,
        names_evidence=names_evidence,
    )


def kept_names(
    tried: ChangeLines, change: ChangeLines, weights: Weights
) -> tuple[tuple[float, ...], tuple[float, ...], str, tuple[str, int] | None]:
    """(the weights of the identifiers the attempt introduced, heaviest first; those of the ones the
    change says again in a file named like one where the attempt introduced them; the rarest of
    those in one line; where the change first says one): a rewritten reland keeps its names and
    places when its lines change."""
    if not tried.introduced or not (tried.introduced & change.said):
        return (), (), "", None
    weights.prefetch(tried.introduced)
    ranked = sorted(((tried.name_weight(w, weights), w) for w in tried.introduced), key=lambda p: (-p[0], p[1]))
    kept = [
        (w, name) for w, name in ranked if any(name in change.new_in.get(f, ()) for f in tried.names_at.get(name, ()))
    ]
    if not kept:
        return tuple(w for w, _ in ranked), (), "", None
    shown = ", ".join(f"`{name}`" for _, name in kept[:3])
    rarest = "said by no other change" if kept[0][0] >= 1 else f"weight {kept[0][0]:.2f}"
    evidence = (
        f"it says again {len(kept)} of the {len(ranked)} identifiers the attempt introduced, in its files "
        f"({shown}; the rarest {rarest})"
    )
    return tuple(w for w, _ in ranked), tuple(w for w, _ in kept), evidence, change.first_saying({n for _, n in kept})


def judge(m: Match, rules: RuleBook = DEFAULT) -> Verdict:
    """Does the change re-propose the attempt, by which rule; else the rule it falls short of."""
    return judge_match(m, rules)


def lines_at(repo: pygit2.Repository, commit: str, paths: Iterable[str]) -> Counter[str]:
    """The normalised lines of these files at `commit` (those it has)."""
    tree = repo[commit].peel(pygit2.Tree)
    found: Counter[str] = Counter()
    for path in paths:
        try:
            found.update(file_lines(repo, tree, path) or ())
        except (KeyError, ValueError, pygit2.GitError):
            continue  # not readable (a partial clone): as if absent
    return found


def held_at(
    repo: pygit2.Repository, commit: str, attempt: Approach, tried: ChangeLines, lines: int, beyond: bool = False
) -> float | None:
    """The share of the attempt's informative added lines that the tree at `commit` holds in the
    files the attempt touched; None when it added under `lines` of them (too few to tell). With
    `beyond`, only the copies its files hold beyond those they held without it: lines it repeated
    from its own files (a test written like the one beside it) are not brought back."""
    wanted = tried.adds
    if sum(wanted.values()) < lines:
        return None
    have = lines_at(repo, commit, [f.path for f in attempt.files if f.status != "D"])
    if beyond and attempt.base and attempt.head:
        # Without it is the side of its own diff holding fewer of its lines: its base, or, for an
        # attempt read backwards from its revert, the revert itself.
        paths = sorted({p for f in attempt.files for p in (f.path, f.old_path) if p})
        before, after = (lines_at(repo, side, paths) for side in (attempt.base, attempt.head))
        have -= before if _held(wanted, before) <= _held(wanted, after) else after
    return _held(wanted, have) / sum(wanted.values())


def _held(wanted: Counter[str], have: Counter[str]) -> int:
    """How many of the `wanted` lines `have` holds, each at most as often as wanted."""
    return sum(min(n, have[text]) for text, n in wanted.items())


def back_already(
    repo: pygit2.Repository,
    base: str,
    attempt: Approach,
    rules: RuleBook = DEFAULT,
    tried: ChangeLines | None = None,
) -> str | None:
    """Why a line match re-proposes nothing, if it does not (rule D15): the base holds the attempt's
    added lines in its files again, beyond what they held without it (brought back under another
    title), so the change copies what is there. An attempt whose own two trees are not both known
    (a merge request read without its commits) is not judged: what its files held is unknown."""
    rule = rules.get(BackAlready)
    if not (attempt.base and attempt.head) or not rule.value("share"):
        return None
    try:
        held = held_at(repo, base, attempt, tried or ChangeLines(attempt, rules), rule.count("lines"), beyond=True)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if not rule.judge(held):
        return None
    return f"the base holds {held:.0%} of the attempt's added lines in its files again: it is back"


def landed_again(
    repo: pygit2.Repository,
    base: str,
    record: Record,
    attempt: Approach,
    tried: ChangeLines,
    rules: RuleBook = DEFAULT,
    weights: Weights | None = None,
) -> str | None:
    """Why a line match re-proposes nothing, if it does not (rule D17): a landing between the
    attempt's revert and `base` brought it back (as D13 scores a change; D1's share unmeasured), so
    the dead end was tried again and stayed, and a later change repeating it (the next release's copy
    of it, a test repeating its setup) is no retry. Were that landing reverted in turn, its revert is
    an attempt of its own. The landings are the base's first-parent changes to the attempt's files
    since the revert landed (a revert made on a branch lands with its merge), read by `git log -p`;
    only those changing half of its added lines are scored in full."""
    from comind.harvest.approach import approach
    from comind.harvest.weights import changes
    from comind.promisor import promisor_remote

    rule = rules.get(LandedAgain)
    revert = commit_of(record, "revert")
    paths = sorted({f.path for f in attempt.files if f.added})
    added = set(tried.adds)
    if not (rule.value("score") and revert and paths) or sum(tried.adds.values()) < rule.count("lines"):
        return None
    try:
        if promisor_remote(repo) is not None or not repo.descendant_of(base, revert):
            return None  # (a partial clone would fetch each landing's blobs to read them)
        candidates = [
            sha
            for sha, files in changes(repo.path, base, [revert], paths=paths)
            if 2 * len(added & set().union(*files)) >= len(added)  # (half its added lines changed)
        ]
        for sha in candidates[:MAX_LANDED]:
            parents = repo[sha].peel(pygit2.Commit).parent_ids
            if not parents or (str(parents[0]) != revert and not repo.descendant_of(parents[0], revert)):
                break  # landed before the revert did (a branch's revert merged later): older ones too
            m = match_lines(tried, ChangeLines(approach(repo, sha, rules=rules), rules), rules, weights)
            brought = m.score if weights is not None and weights.files else (m.matched / m.total if m.total else 0.0)
            if rule.judge(brought):
                subject = _clipped(decode_message(repo[sha].peel(pygit2.Commit)).split("\n", 1)[0], 60)
                return f"{sha[:12]} ({subject}) brought back {brought:.0%} of it since its revert: it is back"
    except (KeyError, ValueError, OSError, pygit2.GitError):
        return None
    return None


def is_back(
    repo: pygit2.Repository,
    base: str,
    record: Record,
    attempt: Approach,
    tried: ChangeLines,
    rules: RuleBook = DEFAULT,
    weights: Weights | None = None,
) -> Verdict | None:
    """Rules D15 and D17: a line match that re-proposes nothing (the attempt is back), as a verdict
    naming the rule and why; None when the attempt is not back."""
    if why := back_already(repo, base, attempt, rules, tried):
        return Verdict(None, BackAlready.id, why)
    if why := landed_again(repo, base, record, attempt, tried, rules, weights):
        return Verdict(None, LandedAgain.id, why)
    return None


def commit_of(record: Record, role: str) -> str | None:
    """The commit an attempt's evidence names in `role`: "revert" (none: read from a merge request),
    "reverted" (none: a revert whose target was not found)."""
    return next((e.get("ref") for e in record.evidence if e.get("type") == "commit" and e.get("role") == role), None)


def is_match(m: Match, rules: RuleBook = DEFAULT) -> bool:
    return judge_match(m, rules).kind is not None


def rule_label(rule: type[BaseRule] | BaseRule | str) -> str:
    """`rule D1 share`: how a finding names the rule that raised it."""
    cls = BY_ID[rule] if isinstance(rule, str) else rule
    return f"rule {cls.id} {cls.name}"


def describe(m: Match, kind: str) -> str:
    """How the change re-proposes the attempt, for a finding's message (`…of <attempt>`)."""
    if kind == "files":
        return f"This creates again {', '.join(m.recreated)}, the files"
    if kind == "edit":
        return f"This makes again, alone, the {m.edited}-line edit"
    if kind == "names":
        return f"This says again, in the same files, {len(m.kept)} of the {len(m.names)} names"
    return f"This {m.again} of {m.total} lines"


def strongest(m: Match, kind: str) -> str:
    """A match's strongest evidence, in one line."""
    if kind == "files":
        return f"it creates again {', '.join(f'`{p}`' for p in m.recreated[:3])}, which only the attempt created"
    if kind == "edit":
        return f"it makes again, alone, the attempt's whole {m.edited}-line edit"
    if kind == "names":
        return (
            m.names_evidence or f"it says again {len(m.kept)} of the {len(m.names)} identifiers the attempt introduced"
        )
    if m.evidence:
        return m.evidence
    return f"it {m.again} of the attempt's {m.total} informative lines"


def fingerprint_of(record: Record) -> Approach | None:
    data = record.fields.get("fingerprint")
    if not isinstance(data, dict) or not data.get("files"):
        return None
    if "head" not in data:  # the merge-request form: lines without numbers
        files = tuple(
            FileChange(
                str(f.get("path", "")),
                None,
                "M",
                added=tuple(Line(0, str(t), False) for t in f.get("added", ())),
                removed=tuple(Line(0, str(t), False) for t in f.get("removed", ())),
            )
            for f in data["files"]
        )
        return Approach(None, "", files)
    try:
        return Approach.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None


def _one_line(reason: str, limit: int = 300) -> str:
    """A record's reason inside a finding's sentence: its paragraphs on one line, a long one cut at a
    word (`comind show` has it whole)."""
    return _clipped(" ".join(reason.split()), limit)


def _clipped(text: str, limit: int) -> str:
    """`text`, or as much of it as fits in `limit` characters cut at a space, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip() + " …"


def _evidence_text(record: Record) -> str:
    """ "abc1234 “subject”, reverted in def5678", as far as the evidence knows."""
    reverted, revert = commit_of(record, "reverted"), commit_of(record, "revert")
    if revert and not reverted:  # a revert whose target was not found: by the subject it quotes, else its own
        if subject := record.data.get("attributes", {}).get("revert_subject"):
            return f"what {revert[:7]} {quoted(subject)} took out"
        return f"the change {revert[:7]} {quoted(record.title)} reverted"
    what = f"{reverted[:7]} {quoted(record.title)}" if reverted else quoted(record.title)
    outcome = record.fields.get("outcome", "failed")
    how = (
        f"reverted in {revert[:7]}"
        if revert
        else {"abandoned": "abandoned", "failed": "it failed", "partial": "partly failed"}.get(outcome, outcome)
    )
    if not revert:
        mr = next((e["ref"] for e in record.shown_evidence if e["type"] in ("mr", "url")), None)
        how += f" ({mr})" if mr else ""
    return f"{what}, {how}"


def _weights(run: CheckRun, report: Report) -> WeightIndex:
    """The term weights, up to the default branch: a plain harvest leaves them to the first check."""
    from comind.harvest.weights import current

    weights, problem = current(run.ws.index.repo, run.ws.cache_dir, run.ws.default_tip())
    if problem:
        report.warnings.append(f"the term weights could not be counted ({problem}): every line weighs alike")
    return weights


def report_dead_ends(run: CheckRun, report: Report) -> None:
    if run.change is None:
        return  # nothing is being proposed: --all checks the code, not a change
    rules = rules_of(run.ws.config)
    attempts = [r for r in run.records if r.kind == "attempt"]
    if not attempts:
        return
    derived = run.statuses(attempts)
    change = ChangeLines(run.change.approach, rules)
    weights = _weights(run, report)
    dep_moves = _dependency_moves(run)
    patterns = _pattern_hits(run, [r for r in attempts if derived[r.id].state not in IGNORED_STATES])
    relanded = _relanded_here(run, [r for r in attempts if derived[r.id].state == "retracted"])
    for record in attempts:
        status = derived[record.id]
        if record.id in relanded:
            _report_reland(run, record, relanded[record.id], change, report)
            continue
        if status.state in IGNORED_STATES:
            continue
        tried_here = _tried_here(run, record)
        if tried_here is False:
            continue  # the change reverts it: it cannot also propose it
        retry = next((n for n in status.notes if n.startswith("retry condition met")), None)
        reason = record.fields.get("reason") or record.body or ""
        what = _evidence_text(record)
        found: list[tuple[str, str | None, int | None, str, str]] = []  # (message, path, line, rule, evidence)
        attempt_approach = fingerprint_of(record)
        if attempt_approach is not None:
            tried = ChangeLines(attempt_approach, rules)
            m = match_lines(tried, change, rules, weights)
            verdict = judge(m, rules)
            if verdict.kind == "lines":
                repo, base = run.ws.index.repo, run.change.base
                verdict = is_back(repo, base, record, attempt_approach, tried, rules, weights) or verdict
            if verdict.kind:
                path, line = m.where or ((m.recreated[0], None) if m.recreated else (None, None))
                message = f"{describe(m, verdict.kind)} of {what}"
                found.append((message, path, line, rule_label(verdict.rule), strongest(m, verdict.kind)))
        for dep, before, version, path in moves_into(record.anchors, dep_moves, rules):
            found.append(
                (
                    f"This moves {dep['package']} to {version}, inside {dep['version_range']}, the range of {what}",
                    path,
                    None,
                    rule_label(DependencyMove),
                    f"it moves {dep['package']} from {before or '(none)'} to {version}, as the attempt did",
                )
            )
        if record.id in patterns and rules.get(Pattern).judge(1):
            path, line = patterns[record.id]
            found.append(
                (
                    f"This matches the pattern of {what}",
                    path,
                    line,
                    rule_label(Pattern),
                    "a line it adds matches its pattern",
                )
            )
        if not found:
            continue
        message, path, line, rule, said = found[0]
        if gave_no_reason(record):  # (its body is our sentence saying so, naming the title again)
            message += " (no reason given)"
        elif reason.strip():
            message += f": {_one_line(reason)}"
        if retry:
            message += f". Its retry condition is met ({retry.removeprefix('retry condition met: ')}), so this "
            message += "may be the time to try again."
        if tried_here:
            message += "" if message.endswith((".", "!", "?")) else "."
            message += " It was tried and reverted in this change's own commits."
        message += f"\nStrongest evidence: {said}."
        evidence = tuple(record.shown_evidence)
        report.findings.append(
            Finding(
                type="retry" if retry else "dead_end",
                level="note" if retry else "warning" if tried_here else "error",
                title=f"{'Retry of' if retry else 'Re-proposes'} a dead end ({rule}): {record.title}",
                message=message,
                fingerprint=fingerprint("dead_end", record.id),
                record_id=record.id,
                path=path,
                line=line,
                in_diff=run.in_diff(path, line),
                evidence=evidence,
                commands=(
                    f"comind show {short_id(record.id)}",
                    f'comind review retract {short_id(record.id)} --reason "the cause is fixed"',
                ),
            )
        )
    _rejected_alternatives(run, report)


def _tried_here(run: CheckRun, record: Record) -> bool | None:
    """None: the attempt's revert is no commit of the change. True: the change tried it and reverted it
    (its author knows; a reviewer may not). False: the change reverts what its base had."""
    reverted = commit_of(record, "reverted")  # (unresolved: the revert's own diff is the attempt, matched as ever)
    if commit_of(record, "revert") not in run.commits or reverted is None:
        return None
    return reverted in run.commits


def _relanded_here(run: CheckRun, retracted: list[Record]) -> dict[str, Record]:
    """attempt id -> the commit record (a `retracts` relation) by which a commit of this change relands it."""
    ids = {r.id for r in retracted}
    if not ids:
        return {}
    found: dict[str, Record] = {}
    for relation in run.ledger.relations():
        target = relation.fields.get("target")
        by = relation.provenance
        if (
            target in ids
            and relation.fields.get("relation") == "retracts"
            and by.get("source") == "git"
            and by.get("head_commit") in run.commits
        ):
            found[str(target)] = relation
    return found


def _report_reland(run: CheckRun, record: Record, relation: Record, change: ChangeLines, report: Report) -> None:
    """A note: the change relands the attempt on purpose (its own commit says so); here is why it was reverted."""
    what = _evidence_text(record)
    stated = str(
        record.fields.get("reason") or ""
    ).strip()  # what the revert said; the body may only say it said nothing
    silent = gave_no_reason(record)  # (its body is our sentence saying so, naming the title again)
    reason = "" if silent else (stated or record.body or "").strip()
    sha = str(relation.provenance.get("head_commit", ""))
    attempt_approach = fingerprint_of(record)
    path = line = None
    if attempt_approach is not None and (m := match_lines(attempt_approach, change, rules_of(run.ws.config))).where:
        path, line = m.where
    message = f"{sha[:7]} relands {what}" + (f": {reason}" if reason else " (no reason given)" if silent else "")
    message += "" if message.endswith((".", "!", "?")) else "."
    message += (
        " Check that it no longer fails that way." if stated else " Read the revert to learn why it was taken out."
    )
    report.findings.append(
        Finding(
            type="reland",
            level="note",
            title=f"Relands a dead end: {record.title}",
            message=message,
            fingerprint=fingerprint("reland", record.id),
            record_id=record.id,
            path=path,
            line=line,
            in_diff=run.in_diff(path, line),
            evidence=tuple(record.shown_evidence),
            commands=(f"comind show {short_id(record.id)}",),
        )
    )


def _pattern_hits(run: CheckRun, attempts: list[Record]) -> dict[str, tuple[str | None, int | None]]:
    """attempt id -> where its compiled pattern (an ast-grep rule) matches a line the change adds."""
    with_pattern = [r for r in attempts if isinstance(r.fields.get("pattern"), dict)]
    if not with_pattern or run.change is None:
        return {}
    from comind.checks.interface import CheckError  # on use: most ledgers hold no attempt with a pattern
    from comind.checks.types import compile_check

    ctx = CheckContext(run.ws.index, work_tree=run.ws.root)
    ctx.set_change(run.base, run.head)  # file-local: only the files the change touched
    checks = {}
    for record in with_pattern:
        try:
            checks[compile_check(record.id, {"type": "ast-grep", **record.fields["pattern"]})] = record.id
        except CheckError as exc:
            raise CheckError(f"attempt {short_id(record.id)}: its pattern does not compile: {exc}") from None
    hits: dict[str, tuple[str | None, int | None]] = {}
    for check in checks:
        outcome = type(check).evaluate_many([check], ctx, run.head)[check]
        for v in outcome.violations:
            if run.in_diff(v.path, v.line):
                hits.setdefault(checks[check], (v.path, v.line))
    return hits


def _dep_name(dep: dict[str, Any]) -> str:

    return normalize_name(dep["ecosystem"], str(dep["package"]))


def _in_range(ecosystem: str, version: str, version_range: str) -> bool:

    try:
        return bool(version_in_range(ecosystem, version, version_range))
    except ValueError:
        return False


Moves = dict[tuple[str, str], tuple[str | None, str, str]]


def _dependency_moves(run: CheckRun) -> Moves:
    changed = [p for p in run.change.paths if _is_manifest(p)] if run.change is not None else []
    if run.base_snapshot is None or not changed:
        return {}
    moves = dependency_moves(run.base_snapshot, run.head_snapshot, changed)
    # shown where the change made the move (a lockfile-only bump), not in the manifest declaring it
    return {
        key: (before, after, path if path in changed else _changed_manifest(key[0], changed) or path)
        for key, (before, after, path) in moves.items()
    }


def _changed_manifest(ecosystem: str, changed: list[str]) -> str | None:

    return next((p for p in changed if ecosystem in manifest_ecosystems(p)), None)


def dependency_moves(base: Any, head: Any, changed: list[str] | None = None) -> Moves:
    """(ecosystem, name) -> (version at base, version at head, manifest path) for every package
    whose locked (else declared) version the change from `base` to `head` (snapshots, trees or
    commits) moves. Given the paths the change touched, a toolchain or an action (the newest of
    several files) moves only where the change writes its new version: a literal turned expression
    elsewhere (`node-version: 22` to `${{ inputs.node }}`) lets an older one show through, no move."""

    before = resolved_versions(dependencies(base))
    after = resolved_versions(dependencies(head))
    return {
        key: (before.get(key, (None, ""))[0], version, path)
        for key, (version, path) in after.items()
        if before.get(key, (None, ""))[0] != version
        and (changed is None or key[0] not in NEWEST_OF_FILES or path in changed)
    }


def dependency_ranges(anchors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `dep:` anchors with a version range: the versions an attempt moved its dependencies to."""
    return [a["dep"] for a in anchors if a.get("scope") == "dependency" and (a.get("dep") or {}).get("version_range")]


def moves_into(
    anchors: list[dict[str, Any]], moves: Moves, rules: RuleBook = DEFAULT
) -> list[tuple[dict[str, Any], str | None, str, str]]:
    """(dep, version before, version after, manifest path) for each dependency the moves take into
    an attempt's range from outside it: the attempt's dependency move again.

    A range someone declared (`dep:pypi/lance@<0.8`) counts alone; exact versions (what a harvested
    change moved its dependencies to) count as rule D11 says."""

    declared: list[tuple[dict[str, Any], str | None, str, str]] = []
    exact: list[tuple[dict[str, Any], str | None, str, str]] = []
    pinned = 0
    for dep in dependency_ranges(anchors):
        is_exact = exact_pin(dep["version_range"]) is not None
        pinned += is_exact
        moved = moves.get((dep["ecosystem"], _dep_name(dep)))
        if (
            moved
            and _in_range(dep["ecosystem"], moved[1], dep["version_range"])
            and not (moved[0] and _in_range(dep["ecosystem"], moved[0], dep["version_range"]))
        ):
            (exact if is_exact else declared).append((dep, *moved))
    return declared + (exact if rules.get(DependencyMove).judge(len(exact), pinned, rules) else [])


def _is_manifest(path: str) -> bool:

    return is_manifest(path)


_WORD = re.compile(r"[a-z0-9]+")


def _change_title() -> str:
    """The merge request's title when CI provides it (GitHub's event file, GitLab's variable)."""
    import json
    import os

    if title := os.environ.get("CI_MERGE_REQUEST_TITLE"):
        return title
    try:
        with open(os.environ.get("GITHUB_EVENT_PATH", ""), encoding="utf-8") as event:
            return str(json.load(event).get("pull_request", {}).get("title") or "")
    except (OSError, ValueError, AttributeError):
        return ""


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4}


def _rejected_alternatives(run: CheckRun, report: Report) -> None:
    """Notes for commit messages of the change that name an option a decision on the touched code rejected."""
    if run.change is None or run.base is None:
        return

    messages = " ".join(c.message for c in walk(run.ws.index.repo, [run.head], [run.base]))
    said = _words(f"{_change_title()} {messages}")
    if not said:
        return
    decisions = [r for r in run.ledger.anchored_near(sorted(run.change.paths)) if r.kind == "decision"]
    derived = run.statuses(decisions)
    for record in decisions:
        if derived[record.id].state in IGNORED_STATES:
            continue
        for alt in record.fields.get("alternatives", []):
            words = _words(alt["option"])
            if len(words) >= 2 and len(words & said) >= max(2, int(0.7 * len(words) + 0.5)):
                why = f": {alt['why_not']}" if alt.get("why_not") else ""
                report.findings.append(
                    Finding(
                        type="dead_end",
                        level="note",
                        title=f"Mentions a rejected option: {alt['option']}",
                        message=f"This change's commit messages mention {quoted(alt['option'])}, which the decision "
                        f"{quoted(record.title)} rejected{why}.",
                        fingerprint=fingerprint("rejected", record.id, alt["option"]),
                        record_id=record.id,
                        evidence=tuple(record.shown_evidence),
                        commands=(f"comind show {short_id(record.id)}",),
                    )
                )
                break
