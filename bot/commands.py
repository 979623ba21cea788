"""The bot's side of ``/comind`` commands: carrying them out and wording the answers.

The grammar and the records a command makes live in ``comind.harvest.commands`` (the harvester
re-derives the same records from the forge, and may not import the bot); they are re-exported
here. Each answered comment gets one reply carrying ``<!-- comind:answer <comment> <digest> -->``,
which is how later runs — on fresh CI runners, with no local state — know it was answered, and
which version of it (an edit that changes its commands is answered again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.ledger import Ledger
    from comind.store import Store
    from comind.workspace import Workspace

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from comind.anchors import AnchorError, format_anchor, parse_anchor
from comind.checks.formats import markdown
from comind.errors import ComindError
from comind.harvest.commands import (
    ACTIONS,
    ANSWER_MARKER,
    MAX_COMMANDS,
    USAGE,
    Command,
    CommandError,
    Origin,
    Resolver,
    answer_marker,
    answers,
    command_digest,
    command_lines,
    command_records,
    is_answered,
    parse_command,
    parse_commands,
    revision,
)
from comind.mergerequests import Note
from comind.query import select
from comind.records import Record, short_id
from comind.why import explain

READER_REPLY = "Only people with write access to this repository can use `/comind` commands; nothing was recorded."
WHY_LIMIT = 20


def answered_keys(notes: Iterable[Note], bot_login: str) -> set[str]:
    """The comments the bot has answered (any version), from the markers in its own replies."""
    return set(answers(notes, bot_login))


def usage_block(usage: str = USAGE) -> str:
    return "```\n" + usage + "\n```"


def plain(text: str) -> str:
    """Record text shown in an answer: one line, inert as the report's text is (no controls, no
    HTML, no Markdown image or link, no mention): ``comind.checks.formats.markdown.inline``."""
    return markdown.inline(text)


@dataclass
class CommandAnswer:
    text: str
    ok: bool
    records: list[Record] = field(default_factory=list)
    written: int = 0


def why_answer(ws: Workspace, ledger: Ledger, anchor_text: str) -> str:
    """The answer to ``/comind why ANCHOR``: the records about that code, with their status.

    The one place the bot asks "why"; a richer ``why`` (re-anchoring, one hop away) can replace
    the body of this function without touching the callers.
    """

    anchor = parse_anchor(anchor_text)
    path = anchor.get("path")
    if not path:
        raise CommandError(
            f"why needs a file or symbol anchor, not {format_anchor(anchor)!r}",
            "/comind why path/file.py[::Qual.name | :LINE]",
        )
    shown = markdown.code(format_anchor(anchor))
    try:  # the same answer as `comind why`: re-anchored records, then those one hop away
        results: list[Any] = explain(ws, ledger, anchor_text).items
    except AnchorError:  # not in this checkout (a file the merge request adds): the records as written
        records = ledger.by_path(path)
        if symbol := anchor.get("symbol"):
            records = [
                r
                for r in records
                if any(a.get("path") == path and a.get("symbol") in (None, symbol) for a in r.anchors)
            ]
        results = select(ws, ledger, records)
    if not results:
        return f"No records about {shown}."
    lines = [f"Records about {shown} ({len(results)}):", ""]
    for result in results[:WHY_LIMIT]:
        record, status = result.record, result.status
        relevance = getattr(result, "relevance", "direct")
        hop = f" ({plain(relevance)})" if relevance != "direct" else ""
        lines.append(f"- `{short_id(record.id)}` {record.kind} · {status.state} · {plain(record.title)}{hop}")
    if len(results) > WHY_LIMIT:
        command = markdown.code("comind why " + format_anchor(anchor))
        lines.append(f"- … and {len(results) - WHY_LIMIT} more: run {command}")
    return "\n".join(lines)


def _describe(command: Command, records: list[Record], new: list[bool]) -> str:
    already = "" if any(new) else " (already recorded)"
    first = records[0]
    if command.action == "remember":
        return f"Remembered {first.kind} `{short_id(first.id)}`: {plain(first.title)}{already}"
    if command.action == "supersede":
        target = first.id if len(records) < 2 else records[1].fields["target"]
        return (
            f"Recorded {first.kind} `{short_id(first.id)}` ({plain(first.title)}), superseding "
            f"`{short_id(target)}`{already}"
        )
    verb = {"confirm": "Confirmed", "retract": "Retracted", "dispute": "Disputed"}[command.action]
    return f"{verb} `{short_id(first.fields['target'])}`{already}"


def execute(
    ws: Workspace, ledger: Ledger, command: Command, origin: Origin, resolver: Resolver, store: Store
) -> CommandAnswer:
    """Carry out one command written by someone with write access: records into ``store``."""
    if command.action == "help":
        return CommandAnswer(usage_block(), True)
    try:
        if command.action == "why":
            return CommandAnswer(why_answer(ws, ledger, command.anchor), True)
        records = command_records(ws, command, origin, resolver)
        new = [bool(store.put(record)) for record in records]
    except CommandError as exc:
        return error_answer(exc)
    except ComindError as exc:  # the store refused (an erased id), an anchor did not parse
        return CommandAnswer(f"⚠️ {plain(str(exc))}", False)
    resolver.add(records)
    return CommandAnswer(_describe(command, records, new), True, records, sum(new))


def error_answer(error: CommandError) -> CommandAnswer:
    """The answer to a line that did not parse: the problem and the usage; nothing is written."""
    return CommandAnswer(f"⚠️ {plain(error.problem)}\n\n{usage_block(error.usage)}", False)


def answer_text(answers: list[CommandAnswer]) -> str:
    if len(answers) == 1:
        return answers[0].text
    return "\n\n".join(
        f"{n}. {answer.text}" if "\n" not in answer.text else f"{n}.\n\n{answer.text}"
        for n, answer in enumerate(answers, 1)
    )


__all__ = [
    "ACTIONS",
    "ANSWER_MARKER",
    "MAX_COMMANDS",
    "READER_REPLY",
    "USAGE",
    "Command",
    "CommandAnswer",
    "CommandError",
    "Origin",
    "Resolver",
    "answer_marker",
    "answer_text",
    "answered_keys",
    "answers",
    "command_digest",
    "command_lines",
    "command_records",
    "error_answer",
    "execute",
    "is_answered",
    "parse_command",
    "parse_commands",
    "revision",
    "usage_block",
    "why_answer",
]
