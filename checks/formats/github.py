"""``github``: GitHub Actions workflow commands (annotations), plus the job summary.

:func:`render` returns one ``::error``/``::warning``/``::notice`` command per line:
``::error file=src/app.py,line=42,endLine=44,title=comind/dead-end: Retry with backoff::message``.
Properties are escaped with the Actions toolkit's ``escapeProperty`` (``%`` ``\\r`` ``\\n`` ``:``
``,``) and the message with ``escapeData`` (``%`` ``\\r`` ``\\n``), so a record's text can never
end a command early or start another one. Levels: error → ``::error``, warning → ``::warning``,
note → ``::notice``.

GitHub keeps at most 10 annotations of each level per step (50 per job) and drops the rest
silently. Slots go to in-diff findings first, then to the rest (each in report order); the run's
own warnings take at most 3 warning slots ahead of them. Whatever does not fit is counted in one
``::notice`` (which takes the last notice slot) that points to the job summary, so nothing is
dropped silently. One step therefore emits at most 30 annotations.

:func:`write_summary` appends the GitHub-flavoured Markdown report to ``$GITHUB_STEP_SUMMARY``
(``context.job_summary``): it appends, never truncates, and keeps the file under 1 MiB
(GitHub refuses larger summaries), cutting whole findings and saying so when it must.
"""

from __future__ import annotations

import os
from collections import Counter

from comind.checks.findings import LEVELS, Finding, Report

from . import markdown
from ._base import FormatContext, evidence_line, plural

NAME = "github"
DESCRIPTION = "GitHub Actions annotations (and the job summary)"

COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}
PER_LEVEL_CAP = 10  # per step and level
PER_JOB_CAP = 50
MAX_TOOL_WARNINGS = 3
SUMMARY_LIMIT = 1024 * 1024  # GitHub aborts the upload of a larger step summary
SUMMARY_MARGIN = 4 * 1024
SUMMARY_MIN = 2 * 1024  # with less room than this left, no summary is written


def escape_data(value: str) -> str:
    """actions/toolkit ``escapeData``: ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """actions/toolkit ``escapeProperty``: ``escapeData`` plus ``:`` → ``%3A``, ``,`` → ``%2C``."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, properties: dict[str, str | int | None], message: str) -> str:
    """One workflow command line, as the toolkit's ``issueCommand`` writes it."""
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None and value != ""
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(f: Finding) -> str:
    props: dict[str, str | int | None] = {}
    if f.path:
        props["file"] = f.path
        if f.line and f.line > 0:
            props["line"] = f.line
            if f.end_line and f.end_line >= f.line:
                props["endLine"] = f.end_line
    title = " ".join(f.title.split())
    props["title"] = f"{f.rule_id}: {title}" if title else f.rule_id
    lines = [f.message.strip() or title]
    lines += [f"evidence: {evidence_line(item)}" for item in f.evidence]
    if f.commands:
        lines.append("run: " + " | ".join(" ".join(c.split()) for c in f.commands))
    return command(COMMANDS.get(f.level, "warning"), props, "\n".join(lines))


def _order(report: Report) -> list[Finding]:
    """In-diff findings first, then the rest; within each, report order."""
    ranked = report.sorted()
    return [f for f in ranked if f.in_diff] + [f for f in ranked if not f.in_diff]


def _allocate(findings: list[Finding], caps: dict[str, int]) -> tuple[list[Finding], list[Finding]]:
    left = dict(caps)
    shown: list[Finding] = []
    dropped: list[Finding] = []
    for f in findings:
        cmd = COMMANDS.get(f.level, "warning")
        if left.get(cmd, 0) > 0:
            left[cmd] -= 1
            shown.append(f)
        else:
            dropped.append(f)
    return shown, dropped


def render(report: Report, context: FormatContext) -> str:
    tool_warnings = report.warnings[:MAX_TOOL_WARNINGS]
    caps = {"error": PER_LEVEL_CAP, "warning": PER_LEVEL_CAP - len(tool_warnings), "notice": PER_LEVEL_CAP}
    ordered = _order(report)
    shown, dropped = _allocate(ordered, caps)
    more_warnings = len(report.warnings) - len(tool_warnings)
    if dropped or more_warnings:
        caps["notice"] -= 1  # the aggregate notice takes one
        shown, dropped = _allocate(ordered, caps)
    lines = [command("warning", {"title": "comind"}, w) for w in tool_warnings]
    lines += [annotation(f) for f in shown]
    if dropped or more_warnings:
        lines.append(command("notice", {"title": "comind: more findings"}, _overflow(dropped, more_warnings, context)))
    return "".join(line + "\n" for line in lines)


def _overflow(dropped: list[Finding], more_warnings: int, context: FormatContext) -> str:
    counts = Counter(f.level for f in dropped)
    parts = [plural(counts[level], level) for level in reversed(LEVELS) if counts[level]]
    what = []
    if dropped:
        what.append(f"{plural(len(dropped), 'more finding')} ({', '.join(parts)})")
    if more_warnings:
        what.append(plural(more_warnings, "more run warning"))
    where = f"the job summary: {context.summary_link}" if context.summary_link else "the job summary"
    return (
        f"{' and '.join(what)} not annotated: GitHub shows at most {PER_LEVEL_CAP} annotations of each "
        f"level per step. Every finding is listed in {where}"
    )


def summary(report: Report, context: FormatContext, limit: int) -> str:
    """The job-summary Markdown (no comment marker, a count table) within ``limit`` bytes."""
    return markdown.body(
        report,
        context,
        limit=limit,
        marker=False,
        title_level=2,
        table=True,
        pointer_to="json or SARIF output of this run",
    )


def write_summary(report: Report, context: FormatContext) -> str | None:
    """Append the report to ``context.job_summary``, if set, keeping the file under 1 MiB. Returns
    the warning to print when the file cannot be written: the summary is extra, so a bad path must
    neither change the check's exit code nor pass unnoticed."""
    path = context.job_summary
    if path is None:
        return None
    try:
        used = os.path.getsize(path)
    except OSError:
        used = 0
    room = SUMMARY_LIMIT - SUMMARY_MARGIN - used
    if room < SUMMARY_MIN:
        return None
    text = summary(report, context, room - 1)
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as out:
            out.write(("\n" if used else "") + text)
    except OSError as exc:
        return f"the job summary was not written: $GITHUB_STEP_SUMMARY {str(path)!r}: {exc.strerror or exc}"
    return None
