"""Posting ``comind check``'s report on a merge request (ci-conventions §4, §5).

* One summary comment per merge request, found by ``<!-- comind:report -->`` and the bot's own
  login (``Forge.upsert_summary``) and edited in place on every run. It carries the whole
  report (so nothing is ever dropped); a clean report turns an existing summary into one
  all-clear line, and posts nothing when there was no summary yet.
* Inline comments only on lines of the diff (``MergeRequestFile.diff_lines``), each with a hidden
  ``<!-- comind:finding <fingerprint> -->``: a finding already commented (in an unresolved
  thread) is not commented again, and the thread of a finding that disappeared is resolved.
  Findings off the diff, past ``max_inline``, or refused by the forge stay in the summary only.
* Bodies stay under the forge's limit; a cut summary points to the job summary.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from comind.bot.forge import Forge, ForgeError
from comind.checks.findings import LEVELS, RULE_IDS, TYPES, Finding, Report
from comind.checks.formats import FormatContext, markdown
from comind.errors import ComindError
from comind.mergerequests import MergeRequest, MergeRequestFile, Note

log = logging.getLogger(__name__)

REPORT_MARKER = "<!-- comind:report -->"
FINDING_MARKER = "<!-- comind:finding {fingerprint} -->"
_FINDING = re.compile(r"<!-- comind:finding ([^\s>]{1,200}) -->")
MAX_INLINE = 25  # new inline comments per run; the rest stay in the summary
MARGIN = 512  # characters kept free under the forge's body limit


@dataclass
class Posted:
    summary: str | None = None  # the summary comment's id, when one was written
    inline: int = 0  # inline comments posted now
    kept: int = 0  # findings already commented inline
    resolved: int = 0  # threads of findings that disappeared
    folded: int = 0  # findings in the summary only


def finding_fingerprint(note: Note) -> str | None:
    found = _FINDING.search(note.body)
    return found.group(1) if found else None


def summary_body(report: Report, context: FormatContext, limit: int, *, inline: int = 0) -> str:
    """The summary comment (marker, headline, every finding) within ``limit`` characters.

    The one place the summary is worded: ``comind.checks.formats.markdown`` renders the report.
    """

    note = ""
    if inline:
        note = (
            f"\n_{inline} of these {'finding is' if inline == 1 else 'findings are'} also commented "
            "on the lines they concern._\n"
        )
    body = markdown.body(
        report, context, limit=max(markdown.MIN_BYTES, limit - len(note.encode())), pointer_link=context.summary_link
    )
    return body.rstrip("\n") + "\n" + note


def inline_body(finding: Finding, context: FormatContext, limit: int) -> str:
    """An inline comment: the fingerprint marker, then the finding's title, message, evidence and
    the commands to run about it."""

    marker = FINDING_MARKER.format(fingerprint=finding.fingerprint)
    text = f"{marker}\n{markdown.finding_block(finding, context)}\n"
    return text if len(text) <= limit else text[: limit - 2] + "…\n"


def _targets(report: Report, files: dict[str, MergeRequestFile]) -> dict[str, Finding]:
    """fingerprint -> finding, for findings on a line an inline comment may target."""
    lines = {path: changed.diff_lines() for path, changed in files.items()}
    out: dict[str, Finding] = {}
    for finding in report.sorted():
        if finding.path and finding.line and finding.line in lines.get(finding.path, ()):
            out.setdefault(finding.fingerprint, finding)
    return out


def has_summary(notes: Iterable[Note], bot_login: str) -> bool:
    return any(n.author == bot_login and REPORT_MARKER in n.body and not n.is_inline for n in notes)


def post_report(
    forge: Forge,
    number: int,
    report: Report,
    *,
    context: FormatContext | None = None,
    mr: MergeRequest | None = None,
    notes: list[Note] | None = None,
    max_inline: int = MAX_INLINE,
) -> Posted:
    """Post ``report`` on merge request ``number`` (see the module docstring).

    A ForgeError from a write is raised as is: a 403 means the token cannot write (a fork's pull
    request), which the caller turns into annotations and the job summary.
    """
    context = context or FormatContext()
    mr = mr or forge.merge_request(number)
    posted = Posted()
    files = {f.path: f for f in forge.changed_files(number)}
    targets = _targets(report, files)
    current = {f.fingerprint for f in report.findings}

    existing: dict[str, list[Note]] = {}
    for note in forge.bot_inline_notes(number):
        fingerprint = finding_fingerprint(note)
        if fingerprint and note.in_reply_to is None:
            existing.setdefault(fingerprint, []).append(note)

    limit = forge.max_body - MARGIN
    for fingerprint, finding in targets.items():
        if any(n.resolved is not True for n in existing.get(fingerprint, [])):
            posted.kept += 1
            continue
        if posted.inline >= max_inline:
            continue
        assert finding.path is not None and finding.line is not None
        try:
            forge.post_inline(number, finding.path, finding.line, inline_body(finding, context, limit), mr.head_sha)
        except ForgeError as exc:
            if exc.status in (400, 404, 422):  # the forge would not place it: it stays in the summary
                log.info("comind bot: %s:%s kept in the summary: %s", finding.path, finding.line, exc)
                continue
            raise
        posted.inline += 1
    posted.folded = len(report.findings) - posted.inline - posted.kept

    for fingerprint, thread_notes in sorted(existing.items()):
        if fingerprint in current:
            continue
        for note in thread_notes:
            if note.thread_id and note.resolved is not True:
                forge.resolve_thread(number, note.thread_id)
                posted.resolved += 1

    on_diff = posted.inline + posted.kept
    if report.findings or report.warnings:
        posted.summary = forge.upsert_summary(
            number, REPORT_MARKER, summary_body(report, context, limit, inline=on_diff)
        )
    else:
        if notes is None:
            notes = forge.notes(number)
        if has_summary(notes, forge.bot_login()):  # edit the old report down to the all-clear line
            posted.summary = forge.upsert_summary(number, REPORT_MARKER, summary_body(report, context, limit))
    return posted


def load_report(path: Path) -> Report:
    """A report written by ``comind check --format json``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ComindError(f"--report {path}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise ComindError(f"--report {path}: not JSON ({exc})") from None
    try:
        return report_from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ComindError(f"--report {path}: not a comind check report ({exc})") from None


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def report_from_json(data: dict[str, Any]) -> Report:
    """The inverse of ``Report.to_json``."""
    if data.get("version") != 1:
        raise ValueError(f"unknown report version {data.get('version')!r}")
    findings = []
    for item in data["findings"]:
        kind, level = str(item["type"]), str(item["level"])
        if kind not in TYPES or level not in LEVELS:
            raise ValueError(f"unknown finding type or level {kind!r}/{level!r}")
        rule = str(item.get("rule") or "")
        findings.append(
            Finding(
                type=kind,
                level=level,
                title=str(item["title"]),
                message=str(item.get("message") or ""),
                fingerprint=str(item["fingerprint"]),
                record_id=item.get("record_id"),
                rule="" if rule == RULE_IDS[kind] else rule,
                path=item.get("path"),
                line=_optional_int(item.get("line")),
                end_line=_optional_int(item.get("end_line")),
                evidence=tuple(dict(e) for e in item.get("evidence") or ()),
                in_diff=bool(item.get("in_diff")),
                commands=tuple(str(c) for c in item.get("commands") or ()),
                snippet=tuple((int(s["line"]), str(s["text"])) for s in item.get("snippet") or ()),
            )
        )
    return Report(
        base=data.get("base"),
        head=str(data["head"]),
        findings=findings,
        warnings=[str(w) for w in data.get("warnings") or ()],
        stats=dict(data.get("stats") or {}),
        repo=str(data.get("repo") or ""),
        unread=[str(p) for p in data.get("unread") or ()],
    )


__all__ = [
    "FINDING_MARKER",
    "MAX_INLINE",
    "REPORT_MARKER",
    "Posted",
    "finding_fingerprint",
    "has_summary",
    "inline_body",
    "load_report",
    "post_report",
    "report_from_json",
    "summary_body",
]
