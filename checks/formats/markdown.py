"""``markdown``: the body of the bot's merge-request comment (GitHub- and GitLab-flavoured).

The body starts with the hidden marker ``<!-- comind:report -->`` by which the bot finds its
comment to edit in place, then a headline ("comind: 1 dead end re-proposed, 2 records now
stale") and one section per finding type; evidence and commands sit in a collapsible
``<details>`` block when there is more than a little of them. A clean report is one line:
"comind: nothing re-proposed, no constraint broken, no record made stale" (plus the run's
warnings, if any, since they say what was not checked).

Size: the body stays under ``context.max_comment_bytes`` UTF-8 bytes. Findings are kept whole
in order of importance (errors first, in-diff first) until the next one would not fit; the body
then ends with a pointer to the job summary (``context.summary_link``). A single message is cut
at 3,000 characters and a finding shows at most 20 evidence items.

Escaping: record text (titles, messages, evidence notes, paths, commands) can neither inject
HTML nor Markdown nor notify anyone. ``& < >`` become entities (so no tag, comment or second
marker can appear), Markdown punctuation is backslash-escaped, ``@`` before a word gets a
zero-width space (U+200B: no mention, no team ping), paths and commands go in code spans sized
to their backticks (or, when they hold ``<`` or ``@``, are escaped like text), and no line of
the body starts with record text (messages are quoted with ``>``), so GitLab quick actions and
``/comind`` commands cannot be smuggled in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from comind.checks.findings import LEVELS, Finding, Report
from comind.sanitize import shown

from ._base import ALL_CLEAR, HEADINGS, FormatContext, count_summary, grouped, headline, one_line

NAME = "markdown"
DESCRIPTION = "the merge-request comment body (hidden marker, headline, sections)"

MARKER = "<!-- comind:report -->"
MAX_MESSAGE_CHARS = 3_000
MAX_EVIDENCE_ITEMS = 20
MIN_BYTES = 1024  # room for the marker, the headline and the pointer

_LEVEL_BADGES = {"error": "🔴 **error**", "warning": "🟠 **warning**", "note": "🔵 **note**"}
_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-!|~])")
_LINE_START = re.compile(r"^(\s*)(=|\d+[.)])")
_MENTION = re.compile(r"@(?=[\w-])")


def escape(text: str) -> str:
    """Record text made inert: no HTML, no Markdown syntax, no mentions. Keeps line breaks."""
    text = shown(text.replace("\r\n", "\n").replace("\r", "\n"), multiline=True)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _PUNCT.sub(r"\\\1", text)
    text = _MENTION.sub("@\u200b", text)
    return "\n".join(_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line) for line in text.split("\n"))


def inline(text: str) -> str:
    """Escaped and on one line."""
    return escape(one_line(text).strip())


def prose(line: str) -> str:
    """One line of record text with its `quoted code` as code spans (`code`: inert, with no `<` or
    `@` in them), the rest escaped: a title's `# fmt: skip` reads as code, not as \\`\\# fmt: skip\\`."""
    parts = _CODE_SPAN.split(line)
    return "".join(
        code(part) if n % 2 and "<" not in part and "@" not in part else escape(f"`{part}`" if n % 2 else part)
        for n, part in enumerate(parts)
    )


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code(text: str) -> str:
    """A code span that holds ``text`` literally, whatever backticks it contains.

    Text with ``<`` or ``@`` is shown escaped instead (see :func:`inline`), so that the only raw
    ``<`` in a body are comind's own tags and no ``@name`` appears anywhere.
    """
    text = shown(one_line(text))
    if "<" in text or "@" in text:
        return inline(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip()):
        text = f" {text} "
    return f"{fence}{text or ' '}{fence}"


def _link(label: str, url: str | None) -> str:
    if not url or not re.match(r"https?://", url):
        return label
    safe = url
    for char, code_ in (("(", "%28"), (")", "%29"), (" ", "%20"), ("<", "%3C"), (">", "%3E"), ("@", "%40")):
        safe = safe.replace(char, code_)
    return f"[{label}]({safe})"


def _place(f: Finding, context: FormatContext) -> str:
    if not f.path:
        return "_repository_"
    where = f.path + (f":{f.line}" if f.line else "")
    if f.line and f.end_line and f.end_line > f.line:
        where += f"-{f.end_line}"
    return _link(code(where), context.file_url(f.path, f.line, f.end_line))


def _evidence(item: Mapping[str, Any], context: FormatContext) -> str:
    kind = inline(str(item.get("type") or "evidence"))
    ref = str(item.get("ref") or "")
    parts = [kind]
    if ref:
        if item.get("type") == "commit" or re.fullmatch(r"[0-9a-fA-F]{12,64}", ref):
            parts.append(
                _link(code(ref[:12] if re.fullmatch(r"[0-9a-fA-F]{12,64}", ref) else ref), context.commit_url(ref))
            )
        elif re.match(r"https?://\S+$", ref):
            parts.append(_link(code(ref), ref))
        else:
            parts.append(code(ref))
    text = " ".join(parts)
    note = str(item.get("note") or "")
    if note:
        text += ": " + inline(note)
    path = item.get("path")
    if path:
        line = item.get("line")
        line = line if isinstance(line, int) and line > 0 else None
        where = str(path) + (f":{line}" if line else "")
        text += " (" + _link(code(where), context.file_url(str(path), line)) + ")"
    return text


def _message(message: str) -> str:
    message = message.strip("\n")
    cut = len(message) > MAX_MESSAGE_CHARS
    if cut:
        message = message[:MAX_MESSAGE_CHARS].rstrip()
    quoted = "\n".join(f"> {prose(line)}".rstrip() for line in message.splitlines())
    return quoted + (" … _(cut)_" if cut else "")


def _snippet(f: Finding) -> str:
    """The numbered lines in a fenced block longer than any backtick run in them: inert there (no
    HTML, no Markdown, no mention), and every line starts with its number, never with code."""
    width = len(str(f.snippet[-1][0]))
    last = max(f.end_line or f.line or 0, f.line or 0)
    rows = []
    for n, text in f.snippet:
        own = f.line is not None and f.line <= n <= last
        rows.append(f"{'>' if own else ' '} {n:>{width}} | {shown(text.expandtabs(4))}".rstrip())
    body = "\n".join(rows)
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    return f"{fence}text\n{body}\n{fence}"


def finding_block(f: Finding, context: FormatContext) -> str:
    """One finding: badge, place, title, the quoted message, evidence and commands."""
    title = prose(one_line(f.title).strip())
    head = f"{_LEVEL_BADGES.get(f.level, inline(f.level))} · {_place(f, context)} · {title or '_untitled_'}"
    if f.in_diff:
        head += " · _in this change_"
    parts = [head]
    if f.message.strip():
        parts.append(_message(f.message))
    if f.snippet:
        parts.append(_snippet(f))
    items = [f"- {_evidence(e, context)}" for e in f.evidence[:MAX_EVIDENCE_ITEMS]]
    if len(f.evidence) > MAX_EVIDENCE_ITEMS:
        items.append(f"- … and {len(f.evidence) - MAX_EVIDENCE_ITEMS} more evidence items")
    if f.commands:
        items.append("- run: " + " · ".join(code(c) for c in f.commands))
    rule = code(f.rule_id) + (f" · record {code(f.record_id)}" if f.record_id else "")
    items.append(f"- rule {rule}")
    if len(items) <= 2 and sum(len(i) for i in items) <= 300:
        parts.append("\n".join(items))
    else:
        label = f"Evidence ({len(f.evidence)})" if f.evidence else "Details"
        if f.commands:
            label += " and commands"
        parts.append(f"<details><summary>{label}</summary>\n\n" + "\n".join(items) + "\n\n</details>")
    return "\n\n".join(parts)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _pointer(omitted: int, where: str, link: str | None) -> str:
    target = _link(where, link) if link else where
    noun = "finding" if omitted == 1 else "findings"
    return f"**… {omitted} more {noun} not shown here** (size limit): the full report is in the {target}."


def body(
    report: Report,
    context: FormatContext,
    *,
    limit: int,
    marker: bool = True,
    title_level: int = 3,
    table: bool = False,
    pointer_to: str = "job summary",
    pointer_link: str | None = None,
) -> str:
    """The Markdown report within ``limit`` UTF-8 bytes (see the module docstring)."""
    if limit < MIN_BYTES:
        raise ValueError(f"a Markdown report needs at least {MIN_BYTES} bytes, not {limit}")
    findings = report.sorted()
    top: list[str] = [MARKER] if marker else []
    if not findings:
        top.append(f"comind: {ALL_CLEAR}")
    else:
        top.append(f"{'#' * title_level} comind: {headline(report)}")
        counts = count_summary(findings)
        span = f"{code(report.base[:12])} → {code(report.head[:12])}" if report.base else code(report.head[:12])
        top.append(f"{counts[0].upper()}{counts[1:]} · {span}")
        if table:
            top.append(_table(findings))
    sep = "\n\n"
    warning_lines: list[str] = []
    budget = limit // 2 - _size(sep.join(top))
    for w in report.warnings:
        text = inline(w[:500] + ("…" if len(w) > 500 else ""))
        line = f"- ⚠️ {text}"
        if _size(line) + 1 > budget:
            break
        warning_lines.append(line)
        budget -= _size(line) + 1
    if len(warning_lines) < len(report.warnings):
        warning_lines.append(f"- ⚠️ … and {len(report.warnings) - len(warning_lines)} more warnings")
    warnings = ("**Warnings**\n\n" + "\n".join(warning_lines)) if warning_lines else ""

    fixed = sep.join(top + ([warnings] if warnings else []))
    reserve = _size(sep + _pointer(len(findings), pointer_to, pointer_link)) + _size(sep) + 8
    room = limit - _size(fixed) - reserve
    headings = {
        kind: f"{'#' * (title_level + 1)} {HEADINGS.get(kind, kind)} ({len(fs)})" for kind, fs in grouped(findings)
    }
    chosen: set[int] = set()
    started: set[str] = set()
    blocks: dict[int, str] = {}
    for i, f in enumerate(findings):
        block = finding_block(f, context)
        cost = _size(block) + _size(sep)
        if f.type not in started:
            cost += _size(headings[f.type]) + _size(sep)
        if cost > room:
            break
        room -= cost
        chosen.add(i)
        started.add(f.type)
        blocks[i] = block
    sections: list[str] = []
    for kind, _ in grouped(findings):
        shown = [blocks[i] for i, f in enumerate(findings) if f.type == kind and i in chosen]
        if shown:
            sections.append(headings[kind])
            sections += shown
    parts = top + sections + ([warnings] if warnings else [])
    omitted = len(findings) - len(chosen)
    if omitted:
        parts.append(_pointer(omitted, pointer_to, pointer_link))
    text = sep.join(parts) + "\n"
    if _size(text) > limit:  # only a pathological headline or warning list gets here
        cut = text.encode("utf-8")[: limit - 1].decode("utf-8", errors="ignore")
        text = cut + "\n"
    return text


def _table(findings: list[Finding]) -> str:
    rows = ["| | " + " | ".join(f"{lv}s" for lv in reversed(LEVELS)) + " |", "|---|" + "---:|" * len(LEVELS)]
    for kind, fs in grouped(findings):
        counts = [sum(1 for f in fs if f.level == lv) for lv in reversed(LEVELS)]
        rows.append(f"| {HEADINGS.get(kind, kind)} | " + " | ".join(str(n) for n in counts) + " |")
    return "\n".join(rows)


def render(report: Report, context: FormatContext) -> str:
    return body(report, context, limit=context.max_comment_bytes, pointer_link=context.summary_link)
