"""``text``: the report for people at a terminal or in a CI log.

Findings are grouped by type (dead ends, violations, stale and orphaned records, retry notes,
suppressions, context); each shows its level, ``path:line``, title, message, evidence and the
commands to run about it. A last line counts findings by level ("no findings" when clean), after
the report's warnings. ANSI colour only when ``context.colour``; control characters in record
text are shown escaped, so a record can never drive the terminal.
"""

from __future__ import annotations

import re

from comind.checks.findings import Finding, Report
from comind.sanitize import no_runner_commands

from ._base import HEADINGS, FormatContext, count_summary, evidence_line, grouped, place

NAME = "text"
DESCRIPTION = "grouped, human-readable report (default)"

_LEVEL_COLOURS = {"error": "1;31", "warning": "33", "note": "36"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _safe(text: str) -> str:
    """Control characters (ESC, CR, BEL, C1…) shown as ``\\xNN`` instead of acted on, and what a CI
    runner would take for a workflow command (``::warning::``, ``##[add-mask]``) with a backslash."""
    return no_runner_commands(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour else text


def _finding(f: Finding, colour: bool) -> list[str]:
    level = _paint(f"{f.level:<7}", _LEVEL_COLOURS.get(f.level, "0"), colour)
    title = _safe(" ".join(f.title.split())) or "(untitled)"
    head = f"  {level}  {_safe(place(f))}  {title}"
    if f.in_diff:
        head += _paint("  [in this change]", "2", colour)
    lines = [head]
    rule = f"rule {f.rule_id}" + (f", record {f.record_id}" if f.record_id else "")
    lines.append("    " + _paint(_safe(rule), "2", colour))
    lines += [f"    {_safe(line)}".rstrip() for line in f.message.splitlines()]
    lines += snippet_lines(f, colour)
    lines += [f"    evidence: {_safe(evidence_line(item))}" for item in f.evidence]
    lines += [f"    run: {_safe(' '.join(cmd.split()))}" for cmd in f.commands]
    return lines


def snippet_lines(f: Finding, colour: bool) -> list[str]:
    """The numbered lines, the finding's own marked with ``>`` (as ruff and semgrep show them)."""
    if not f.snippet:
        return []
    width = len(str(f.snippet[-1][0]))
    last = max(f.end_line or f.line or 0, f.line or 0)
    out = []
    for n, text in f.snippet:
        own = f.line is not None and f.line <= n <= last
        row = f"    {'>' if own else ' '} {n:>{width}} | {_safe(text.expandtabs(4))}".rstrip()
        out.append(row if own else _paint(row, "2", colour))
    return out


def render(report: Report, context: FormatContext) -> str:
    colour = context.colour
    out: list[str] = []
    if report.base:
        out.append(f"comind check {report.base[:12]}..{report.head[:12]}")
    else:
        out.append(f"comind check {report.head[:12]}")
    for kind, findings in grouped(report.sorted()):
        out.append("")
        out.append(_paint(f"{HEADINGS.get(kind, kind)} ({len(findings)})", "1", colour))
        for f in findings:
            out += _finding(f, colour)
    if report.warnings:
        out.append("")
        out += [_paint("warning: ", "33", colour) + _safe(" ".join(w.split())) for w in report.warnings]
    out.append("")
    summary = count_summary(report.findings)
    worst = next((lv for lv in ("error", "warning", "note") if any(f.level == lv for f in report.findings)), None)
    out.append(_paint(summary, _LEVEL_COLOURS[worst] if worst else "32", colour))
    return "\n".join(out) + "\n"
