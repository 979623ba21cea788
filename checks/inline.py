"""Inline suppressions: ``comind: ignore[<record id>] <reason>`` in a comment of any syntax.

The comment sits on the finding's first line or on the line above it (as semgrep's ``nosemgrep``
and ast-grep's ``ast-grep-ignore``), after ``#``, ``//``, ``--``, ``/*`` or ``<!--``. The bracket
names the record (its id, its short id, a prefix of 8 or more of its last digits) or the rule
(``comind/dead-end``, a constraint's check id); several are separated by commas. A suppression
needs a reason: without one it silences nothing and is itself a finding. A suppression that
silences nothing in a file the run looked at is a finding too, like an unused suppression record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from blake3 import blake3

from comind.checks.findings import Finding

_MARK = re.compile(
    r"(?:#|//|--|/\*|<!--)\s*comind:\s*ignore\[(?P<names>[^\]]*)\](?P<reason>.*?)\s*(?:\*/|-->)?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Inline:
    path: str
    line: int  # the comment's line
    names: tuple[str, ...]
    reason: str

    def names_finding(self, f: Finding) -> bool:
        for name in self.names:
            if name == f.rule_id or (
                f.record_id and (name == f.record_id or (len(name) >= 8 and f.record_id.endswith(name)))
            ):
                return True
        return False


def parse(path: str, text: str) -> list[Inline]:
    """Every inline suppression in ``text`` (a file's content)."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if "comind" not in line:
            continue
        if m := _MARK.search(line):
            names = tuple(n.strip() for n in m["names"].split(",") if n.strip())
            reason = m["reason"].strip().lstrip(":-—").strip()
            out.append(Inline(path, number, names, reason))
    return out


@dataclass
class Outcome:
    kept: list[Finding]
    suppressed: list[tuple[Finding, Inline]]
    findings: list[Finding]  # suppressions without a reason, or unused


def apply(findings: Iterable[Finding], read: Callable[[str], str | None], scanned: Iterable[str] = ()) -> Outcome:
    """Silence the findings an inline suppression with a reason names, on their line or the one above.

    ``read(path)`` is a file's text at head (None when absent); ``scanned`` adds the files whose
    unused suppressions are reported even when no finding is in them (the change's files)."""
    findings = list(findings)
    paths = sorted({f.path for f in findings if f.path} | set(scanned))
    marks: dict[str, list[Inline]] = {}
    for path in paths:
        text = read(path)
        if text is not None and "comind" in text:
            marks[path] = parse(path, text)
    result = Outcome([], [], [])
    used: set[Inline] = set()
    for f in findings:
        here = [
            m for m in marks.get(f.path or "", ()) if f.line and m.line in (f.line, f.line - 1) and m.names_finding(f)
        ]
        silencer = next((m for m in here if m.reason), None)
        used.update(here)
        if silencer is None:
            result.kept.append(f)
        else:
            result.suppressed.append((f, silencer))
    for path in sorted(marks):
        for m in marks[path]:
            if not m.reason or not m.names:
                result.findings.append(
                    _finding(m, "no-reason", "gives no reason, so it silences nothing: add why after the bracket")
                )
            elif m not in used:
                result.findings.append(_finding(m, "unused", "matches no finding on its line or the next; remove it"))
    return result


def _finding(m: Inline, kind: str, why: str) -> Finding:
    names = ", ".join(m.names) or "nothing"
    return Finding(
        type="suppression",
        level="warning",
        title=f"Inline suppression {'without a reason' if kind == 'no-reason' else 'unused'}: ignore[{names}]",
        message=f"The inline suppression of {names} at {m.path}:{m.line} {why}.",
        fingerprint=str(blake3(f"inline\0{kind}\0{m.path}\0{names}\0{m.reason}".encode()).hexdigest(length=16)),
        rule=f"comind/suppression-{kind}",
        path=m.path,
        line=m.line,
    )
