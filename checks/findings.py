"""What `comind check` reports: findings, and the report that carries them to every format.

A finding's fingerprint is stable across runs and line moves (rule, path and normalised content,
never line numbers), so SARIF alerts, GitLab Code Quality entries and the bot's inline comments
are matched from one run to the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from blake3 import blake3

from comind.sanitize import redact_secrets, shown

TYPES = ("dead_end", "violation", "not_run", "stale", "orphaned", "retry", "reland", "suppression", "context")
LEVELS = ("note", "warning", "error")  # in increasing order
FAIL_LEVELS = ("none", *LEVELS)

# The rule id each finding type reports under when no constraint names its own (SARIF ruleId,
# GitLab check_name, GitHub annotation title).
RULE_IDS = {
    "dead_end": "comind/dead-end",
    "violation": "comind/constraint",
    "not_run": "comind/check-not-run",
    "stale": "comind/stale-record",
    "orphaned": "comind/orphaned-record",
    "retry": "comind/retry-condition-met",
    "reland": "comind/reland",
    "suppression": "comind/suppression",
    "context": "comind/context",
}


def fingerprint(*parts: str) -> str:
    """A finding's stable id across runs: blake3 of its parts."""
    return str(blake3("\x1f".join(parts).encode()).hexdigest(length=16))


@dataclass(frozen=True)
class Finding:
    type: str  # one of TYPES
    level: str  # one of LEVELS
    title: str  # one line: what the record says
    message: str  # the full explanation, quoting the record's evidence and reason
    fingerprint: str  # stable: rule + path + normalised content, no line numbers
    record_id: str | None = None
    rule: str = ""  # e.g. the constraint's check id; defaults to RULE_IDS[type]
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    evidence: tuple[dict[str, Any], ...] = ()  # {"type": "commit"|"url"|…, "ref": …, "note": …, "path", "line"}
    in_diff: bool = False  # the location is on a line the change adds or modifies
    commands: tuple[str, ...] = ()  # what a person can run about it (confirm, retract…)
    snippet: tuple[tuple[int, str], ...] = ()  # (line number, text) at head: the lines and a few around

    def __post_init__(self) -> None:
        # Record text reaches terminals, CI logs and comments through every format: no control
        # of any kind survives into a finding (a store written by an older version holds raw text).
        fix = object.__setattr__
        fix(self, "title", shown(redact_secrets(self.title)))
        fix(self, "message", shown(redact_secrets(self.message), multiline=True))
        if self.path is not None:
            fix(self, "path", shown(self.path))
        fix(
            self,
            "evidence",
            tuple({k: shown(v) if isinstance(v, str) else v for k, v in e.items()} for e in self.evidence),
        )
        fix(self, "commands", tuple(shown(c) for c in self.commands))
        fix(self, "snippet", tuple((n, shown(t, multiline=True)) for n, t in self.snippet))

    @property
    def rule_id(self) -> str:
        return self.rule or RULE_IDS[self.type]

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "level": self.level,
            "record_id": self.record_id,
            "rule": self.rule_id,
            "title": self.title,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "evidence": [dict(e) for e in self.evidence],
            "fingerprint": self.fingerprint,
            "in_diff": self.in_diff,
            "commands": list(self.commands),
            "snippet": [{"line": n, "text": t} for n, t in self.snippet],
        }


SNIPPET_CONTEXT = 2  # lines shown around a finding's own, as semgrep and ruff do
SNIPPET_MAX = 12  # a finding's own lines shown at most (a long region is cut)


def snippet_of(
    text: str, line: int, end_line: int | None, context: int = SNIPPET_CONTEXT
) -> tuple[tuple[int, str], ...]:
    """The numbered lines ``line..end_line`` of ``text`` with ``context`` lines either side."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ()
    last = min(max(end_line or line, line), line + SNIPPET_MAX - 1, len(lines))
    first, stop = max(1, line - context), min(len(lines), last + context)
    return tuple((n, lines[n - 1]) for n in range(first, stop + 1))


@dataclass
class Report:
    """The outcome of one `comind check` run."""

    base: str | None  # commit id of the baseline, None with --all
    head: str  # commit id checked
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. "semgrep not installed: 2 checks not run"
    stats: dict[str, Any] = field(default_factory=dict)  # files changed, records considered, timings…
    repo: str = ""
    unread: list[str] = field(default_factory=list)  # changed files the clone lacks: a partial report

    def at_or_above(self, fail_level: str) -> list[Finding]:
        if fail_level == "none":
            return []
        threshold = LEVELS.index(fail_level)
        return [f for f in self.findings if LEVELS.index(f.level) >= threshold]

    def exit_code(self, fail_level: str) -> int:
        return 1 if self.at_or_above(fail_level) else 0

    def sorted(self) -> list[Finding]:
        """Errors first, then warnings, then notes; in-diff before the rest; then by place."""
        return sorted(
            self.findings,
            key=lambda f: (-LEVELS.index(f.level), not f.in_diff, f.path or "", f.line or 0, f.type, f.fingerprint),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "repo": self.repo,
            "base": self.base,
            "head": self.head,
            "findings": [f.to_json() for f in self.sorted()],
            "warnings": list(self.warnings),
            "partial": bool(self.unread),
            "unread": list(self.unread),
            "stats": dict(self.stats),
        }
