"""Diff-aware evaluation of compiled checks, and governed suppressions (DESIGN §7).

:func:`evaluate` runs every check at head and, when a base is given, at the base (the merge base
of base and head, so commits that landed on the target branch since the change forked are not
mistaken for the change's). A violation is **new** when it is at head and not at the base,
matched on (constraint, rule, path, normalised text) as multisets, never on line numbers, with
paths followed through renames. File-local checks (ast-grep, semgrep) look only at the files the
change touched; the others (graph, dependency, test) look at the whole revision, and skip the
base when the change touched nothing they read. With ``base=None`` (``--all``) every violation
at head is reported.

Suppressions are records (kind ``suppression``: ``constraint`` — a constraint record id, its short
id, or a rule id —, ``reason``, ``owner``, optional ``expires``), anchored to where they apply
(a file or directory, ``path:line``, a symbol, a module, a dependency, or nothing: everywhere).
An active suppression silences the violations it matches; an expired one silences nothing and is
a finding; an unused one (it matches nothing at head, where that is known) is a finding.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from blake3 import blake3

from comind.checks.context import CheckContext
from comind.checks.findings import Finding
from comind.checks.globs import module_matches
from comind.checks.interface import Check, Outcome, Violation, names_check
from comind.records import Record, short_id


@dataclass(frozen=True, slots=True)
class Suppressed:
    violation: Violation
    suppression_id: str


@dataclass
class Evaluation:
    """What the checks found for one change."""

    base: str | None  # the commit compared against (merge base), None with --all
    head: str  # commit id
    violations: list[Violation] = field(default_factory=list)  # new (all with --all), not suppressed
    suppressed: list[Suppressed] = field(default_factory=list)  # new, silenced by a suppression
    passing: list[str] = field(default_factory=list)  # constraint ids whose check passes at head (T4)
    failing: list[str] = field(default_factory=list)  # constraint ids with unsuppressed violations at head
    unknown: list[str] = field(default_factory=list)  # not run, or only the change's files were looked at
    warnings: list[str] = field(default_factory=list)  # e.g. "semgrep timed out"
    findings: list[Finding] = field(default_factory=list)  # suppression findings: expired, unused
    baseline: int = 0  # violations at head already present at the base (not reported)


def evaluate(
    checks: Sequence[tuple[Record, Check]],
    ctx: CheckContext,
    *,
    base: str | None,
    head: str,
    suppressions: Sequence[Record] = (),
    today: date,
    unmatched: bool = True,
) -> Evaluation:
    """Evaluate ``checks`` for the change base..head (or all of head when ``base`` is None).

    With ``unmatched``, a check that ran and reports nothing new warns of each selector matching
    nothing at head (:func:`unmatched_warnings`): silent, it would pass (or fail in the baseline)
    without anyone knowing why.

    Raises CheckError (exit 2) for a check that cannot run as written (a rule semgrep rejects).
    """
    head_commit = ctx.commit(head)
    base_commit = None
    if base is not None:
        base_commit = ctx.commit(base)
        merge_base = ctx.repo.merge_base(base_commit, head_commit)
        if merge_base is not None:
            base_commit = str(merge_base)
    ctx.set_change(base_commit, head_commit)
    result = Evaluation(base=base_commit, head=head_commit)
    by_check = {check: record for record, check in checks}
    groups: dict[type[Check], list[Check]] = {}
    for _, check in checks:
        groups.setdefault(type(check), []).append(check)

    at_head: dict[Check, Outcome] = {}
    for cls, group in groups.items():
        at_head.update(cls.evaluate_many(group, ctx, head_commit))
    at_base: dict[Check, Outcome] = {}
    change = ctx.change
    if change is not None and base_commit is not None and base_commit != head_commit:
        touched = change.all_paths
        for cls, group in groups.items():
            needed = []
            for c in group:
                if at_head[c].not_run is not None:
                    continue
                if c.local(ctx) and not change.base_paths:
                    at_base[c] = Outcome([], complete=False)  # every file it reads is new: nothing at base
                elif (c.local(ctx) and change.base_paths) or (not c.local(ctx) and c.affected_by(ctx, touched)):
                    needed.append(c)
            if needed:
                at_base.update(cls.evaluate_many(needed, ctx, base_commit))

    active, findings = _suppressions(suppressions, today)
    result.findings.extend(findings)
    used: set[str] = set()
    for record, check in checks:
        outcome = at_head[check]
        label = f"constraint {short_id(record.id)}"
        if outcome.not_run is not None:
            result.findings.append(not_run_finding(record, check, outcome.not_run))
        result.warnings.extend(f"{label}: {w}" for w in outcome.warnings)
        new = _new(outcome.violations, at_base.get(check), change.renames if change else {}, result, label)
        if unmatched and outcome.not_run is None and not new:
            result.warnings.extend(unmatched_warnings(record.id, check, ctx, head_commit))
        unsuppressed_at_head = 0
        new_ids = {id(v) for v in new}
        applicable = [s for s in active if s.names(check)]
        for v in outcome.violations:
            silencer = next((s for s in applicable if s.matches(v, check, ctx, head_commit)), None)
            if silencer is not None:
                used.add(silencer.record.id)
            else:
                unsuppressed_at_head += 1
            if id(v) in new_ids:
                if silencer is not None:
                    result.suppressed.append(Suppressed(v, silencer.record.id))
                else:
                    result.violations.append(v)
        if unsuppressed_at_head:
            result.failing.append(record.id)
        elif outcome.complete and outcome.not_run is None:
            result.passing.append(record.id)
        else:
            result.unknown.append(record.id)

    complete = {check: at_head[check].complete and at_head[check].not_run is None for _, check in checks}
    for s in active:
        if s.record.id in used:
            continue
        targets = [c for c in by_check if s.names(c)]
        if not targets:
            result.findings.append(
                s.finding("unused", f"names {s.constraint!r}, which is no checked constraint or rule")
            )
        elif all(complete[c] for c in targets):
            result.findings.append(s.finding("unused", "matches no violation at head; remove it"))
    result.violations.sort(key=Violation.sort_key)
    result.suppressed.sort(key=lambda s: s.violation.sort_key())
    result.warnings = list(dict.fromkeys(result.warnings))
    return result


def unmatched_warnings(record_id: str, check: Check, ctx: CheckContext, revision: str) -> list[str]:
    """The check's selectors that match nothing at the revision, one warning line each, as
    ``constraint 1a2b3c4d (graph): forbid glob 'app.legacy.*' matches no module …``."""
    return [f"constraint {short_id(record_id)} ({check.type}): {line}" for line in check.unmatched(ctx, revision)]


def _new(
    head: list[Violation], base: Outcome | None, renames: dict[str, str], result: Evaluation, label: str
) -> list[Violation]:
    """The head violations the base does not have (multiset match, paths through renames)."""
    if result.base is None:
        return list(head)
    if base is None:  # the base was not needed: nothing the check reads changed
        fresh = [v for v in head if v.head_only]
        result.baseline += len(head) - len(fresh)
        return fresh
    if base.not_run is not None:
        result.warnings.append(f"{label}: not run at the base ({base.not_run}); every violation at head is reported")
        return list(head)
    counts = Counter(
        (v.record_id, v.rule, renames.get(v.path, v.path) if v.path else "", v.key[3])
        for v in base.violations
        if not v.head_only
    )
    out = []
    for v in head:
        if not v.head_only and counts[v.key] > 0:
            counts[v.key] -= 1
            result.baseline += 1
        else:
            out.append(v)
    return out


# --- suppressions --------------------------------------------------------------------------------


def _expiry(text: str) -> date | None:
    """The last day a suppression holds: YYYY-MM-DD, or the last day of YYYY-MM."""
    m = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", text.strip())
    if not m:
        raise ValueError(text)
    year, month = int(m[1]), int(m[2])
    day = int(m[3]) if m[3] else calendar.monthrange(year, month)[1] if 1 <= month <= 12 else 0
    return date(year, month, day)


@dataclass
class _Suppression:
    record: Record
    constraint: str
    anchors: list[dict[str, Any]]

    def names(self, check: Check) -> bool:
        return names_check(self.constraint, check.record_id, check.rule)

    def matches(self, v: Violation, check: Check, ctx: CheckContext, head: str) -> bool:
        if not self.names(check):
            return False
        subjects = [a for a in self.anchors if a.get("role", "subject") == "subject"]
        return not subjects or any(_anchor_holds(a, v, check, ctx, head) for a in subjects)

    def finding(self, kind: str, why: str) -> Finding:
        f = self.record.fields
        owner, reason = f.get("owner", "?"), f.get("reason", "")
        first = next((a for a in self.anchors if a.get("path")), {})
        title = {
            "expired": "Suppression expired",
            "unused": "Suppression unused",
            "invalid": "Suppression with an unreadable expiry",
        }[kind]
        return Finding(
            type="suppression",
            level="warning",
            title=f"{title}: {self.record.title}",
            message=f"suppression {short_id(self.record.id)} of {self.constraint} (owner {owner}, reason: "
            f"{reason}) {why}",
            fingerprint=str(blake3(f"suppression\0{kind}\0{self.record.id}".encode()).hexdigest(length=16)),
            record_id=self.record.id,
            rule=f"comind/suppression-{kind}",
            path=first.get("path"),
            line=first.get("line"),
            evidence=({"type": "record", "ref": self.record.id},),
        )


def _suppressions(records: Iterable[Record], today: date) -> tuple[list[_Suppression], list[Finding]]:
    active: list[_Suppression] = []
    findings: list[Finding] = []
    for record in sorted(records, key=lambda r: r.id):
        if record.kind != "suppression":
            continue
        fields = record.fields
        s = _Suppression(record, str(fields.get("constraint", "")).strip(), record.anchors)
        expires = fields.get("expires")
        if expires:
            try:
                until = _expiry(str(expires))
            except ValueError:
                findings.append(
                    s.finding(
                        "invalid",
                        f"has expires {expires!r}, not a date like 2026-06-30; it applies until that is fixed",
                    )
                )
            else:
                if until is not None and until < today:
                    findings.append(
                        s.finding("expired", f"expired on {expires}; the violations it silenced are reported again")
                    )
                    continue
        active.append(s)
    return active, findings


def _anchor_holds(anchor: dict[str, Any], v: Violation, check: Check, ctx: CheckContext, head: str) -> bool:
    scope = anchor.get("scope")
    if scope == "repo":
        return True
    if scope == "dependency":
        from comind.checks.types.dependency import DependencyCheck  # only a dependency anchor needs it

        dep = anchor.get("dep") or {}
        return (
            isinstance(check, DependencyCheck)
            and dep.get("ecosystem") == check.ecosystem
            and (dep.get("package") in (check.package, check.spec.get("package")))
        )
    if v.path is None:
        return False
    if scope == "module":
        module = ctx.graph(head).module_of(v.path)
        return module is not None and module_matches(str(anchor.get("module", "")), module)
    path = str(anchor.get("path", ""))
    if scope == "symbol":
        if v.path != path or v.line is None:
            return False
        found = ctx.snapshot(head).find(path, str(anchor.get("symbol", "")))
        return found is not None and found.start_line <= v.line <= found.end_line
    if scope == "file":
        if not (v.path == path or v.path.startswith(path.rstrip("/") + "/")):
            return False
        if "line" in anchor:
            if v.line is None:
                return False
            first, last = int(anchor["line"]), int(anchor.get("end_line", anchor["line"]))
            return first <= v.line <= last or (v.end_line is not None and v.line <= first <= v.end_line)
        return True
    return False


def not_run_finding(record: Record, check: Check, why: str) -> Finding:
    """A check that did not run is a finding, never a pass: an error for a ``must`` constraint, a
    warning for a ``should``; at the constraint's subject file, or the repository."""
    severity = record.fields.get("severity")
    where = next(
        (
            a
            for a in record.anchors
            if a.get("role", "subject") == "subject" and a.get("path") and not str(a["path"]).endswith("/")
        ),
        {},
    )
    return Finding(
        type="not_run",
        level="error" if severity == "must" else "warning",
        title=f"Not checked: {record.title}",
        message=f"The {check.type} check of constraint {short_id(record.id)} ({severity}) did not run: {why}. "
        "Until it runs, nothing says the change keeps to it.",
        fingerprint=str(blake3(f"not_run\0{record.id}\0{check.rule}".encode()).hexdigest(length=16)),
        record_id=record.id,
        path=where.get("path"),
        evidence=({"type": "record", "ref": record.id},),
        commands=(f"comind show {short_id(record.id)}",),
    )


def violation_finding(record: Record, v: Violation, *, in_diff: bool = False) -> Finding:
    """A violation as a report finding: error for a ``must`` constraint, warning for ``should``."""
    fields = record.fields
    level = "error" if fields.get("severity") == "must" else "warning"
    rule_text = str(fields.get("rule", ""))
    message = v.message if not rule_text or rule_text in v.message else f"{v.message}\nConstraint: {rule_text}"
    return Finding(
        type="violation",
        level=level,
        title=record.title,
        message=message,
        fingerprint=v.fingerprint,
        record_id=record.id,
        rule=v.rule,
        path=v.path,
        line=v.line,
        end_line=v.end_line,
        evidence=({"type": "record", "ref": record.id},),
        in_diff=in_diff,
    )
