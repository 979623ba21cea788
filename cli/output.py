"""Printing records and statuses: text for people, one JSON object per line for programs."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from comind.agents.entries import subject_anchor
from comind.anchoring import moved_to
from comind.anchors import format_anchor
from comind.cli import colour, note
from comind.git import has_no_commit
from comind.records import KIND_FIELDS, Record, beyond_title, gave_no_reason, quoted, restates, short_id, told_in
from comind.sanitize import FORMAT_CHARACTERS, printed
from comind.status import TRUST_NAMES, Status, by_agent

AGENT_MARK = "[agent]"  # a record an agent wrote, in a line of text (the agents' block says it in words)


def use_colour(stream: TextIO | None = None) -> bool:
    """--color, NO_COLOR, FORCE_COLOR, then whether `stream` is a terminal (comind.cli.colour)."""
    return colour(stream)


_COLOURS = {
    "active": "32",
    "stale": "33",
    "orphaned": "31",
    "dormant": "2",
    "superseded": "2",
    "retracted": "2",
    "quarantined": "35",
}


def paint(text: str, state: str, colour: bool) -> str:
    return f"\033[{_COLOURS.get(state, '0')}m{text}\033[0m" if colour else text


def record_json(record: Record, status: Status | None) -> dict[str, Any]:
    """The record with its status (`Status.to_json`); its own trust, if any, as asserted_trust."""
    if status is None:
        return dict(record.data)
    # One dict built in one go: this runs for every line `log --json` prints.
    data = {
        **record.data,
        "status": status.state,
        "status_reason": status.reason,
        "trust": status.trust,
        "marks": list(status.marks),
        "notes": list(status.notes),
    }
    if "trust" in record.data:
        data["asserted_trust"] = record.data["trust"]
    return data


def print_written(record: Record, as_json: bool, confirmation: str = "") -> None:
    """What a command that wrote a record prints: its id (or the record itself) on standard output,
    for scripts, and a sentence saying what was written on standard error, for people (not with -q)."""
    if as_json:
        print_json_lines([record.data])
    else:
        print(record.id)
    if confirmation:
        note(confirmation)


def hint_if_unharvested(ws: Any, ledger: Any = None) -> bool:
    """An answer in a repository never harvested says why it is empty (of `ledger`, when given),
    and what fills it: a check's dead ends are the history's reverted attempts. Whether it did."""
    if not ws.harvest_state.exists() and (ledger is None or ledger.count() == 0):
        if has_no_commit(ws.index.repo):  # (a harvest there reads nothing and keeps no state: no use to suggest it)
            note("comind: the repository has no commit yet: there is no history to harvest")
        else:
            note("comind: nothing harvested here yet: `comind harvest` reads this repository's history into records")
        return True
    return False


def stored_where(ws: Any) -> str:
    """Where a written record went, and, for a store in the work tree, what to do next so that
    others see it. A store outside it (`--store ../x`, or inside .git) is in no commit: named,
    with no `git add` (which would add the parent folder, or nothing)."""
    import os
    from pathlib import Path

    root = ws.store.local_root
    if root is None:
        return f"in {ws.config.store}"
    where = Path(os.path.realpath(root))  # `..` and links resolved: `../x` is not in the tree
    try:
        shown = where.relative_to(os.path.realpath(ws.root)).as_posix()
    except ValueError:
        return f"in {where} (outside the work tree)"
    if shown == ".git" or shown.startswith(".git/"):
        return f"in {shown} (outside the work tree)"
    return f"in {shown}/: commit it (git add {shown.split('/')[0]}) so that others and CI see it"


# json.dumps(item, ensure_ascii=False, sort_keys=True), built once (dumps builds one per call) and
# without its check for circular references: what we print is decoded JSON or built fresh, a tree.
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, check_circular=False)


def print_json_lines(items: Iterable[dict[str, Any]], out: TextIO | None = None) -> None:
    write = (out or sys.stdout).write
    for item in items:
        write(json_safe(_ENCODER.encode(item)) + "\n")


# What JSON may carry raw but a terminal would act on (DEL, C1, format characters): escaped as
# \uXXXX, so the data is the same (a record's hash still holds) and a terminal reads only text.
@functools.cache
def _raw_controls() -> re.Pattern[str]:
    return re.compile(f"[\x7f-\x9f]|{FORMAT_CHARACTERS}")


def json_safe(encoded: str) -> str:
    """Encoded JSON with DEL, C1 controls and format characters written as ``\\uXXXX`` escapes."""
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded
    return _raw_controls().sub(_escape_char, encoded)


def _escape_char(match: re.Match[str]) -> str:
    data = match.group().encode("utf-16-be")
    return "".join(f"\\u{data[i]:02x}{data[i + 1]:02x}" for i in range(0, len(data), 2))


def subject(record: Record, status: Status | None = None) -> str:
    """The anchor a record is listed by, as agents are shown it (`subject_anchor`: its code before
    a README or a CI file): where its status followed it (a rename, a move), then `anchored as` what
    was written, as the agents' block says it; then how many other subjects it has."""
    anchors = [a for a in record.anchors if a.get("role", "subject") == "subject"] or record.anchors
    shown = subject_anchor(record)
    if shown is None:
        target = record.fields.get("target")
        return f"-> {short_id(target)}" if target else ""
    more = f" (+{len(anchors) - 1})" if len(anchors) > 1 else ""
    written = format_anchor(shown)
    now = moved_to(written, status.notes) if status else None
    return f"{now} (anchored as {written}){more}" if now else written + more


def brief(reason: str, record_id: str, keep: int = 2, width: int = 240) -> str:
    """A status reason for a listing: its first `keep` parts (anchors gone, drifted…), each cut at
    `width` (a landing's dozen gone files), then how many more; `comind show ID` has them all."""
    return "; ".join(brief_lines(reason, record_id, keep, width))


def brief_lines(reason: str, record_id: str, keep: int = 2, width: int = 240) -> list[str]:
    """`brief`, a part a line (`why` prints them so: several long parts read down, not off the screen)."""
    parts = reason.split("; ")
    shown = [p if len(p) <= width else p[: width - 1] + "…" for p in parts[: keep if len(parts) > keep + 1 else None]]
    show = f"(comind show {short_id(record_id)})"
    if len(shown) < len(parts):
        return [*shown, f"and {len(parts) - keep} more {show}"]
    return [*shown[:-1], f"{shown[-1]} {show}"] if shown != parts else shown


def asked_first(reason: str, notes: list[str], asked: set[str]) -> tuple[str, list[str], int]:
    """(the reason with its parts on the code asked about first, the notes on it, how many notes
    are on the record's other code): `why FILE` answers about FILE before the rest of the record."""
    parts = reason.split("; ")
    said = [p for p in parts if any(a in p for a in asked)]
    mine = [n for n in notes if any(a in n for a in asked)]
    return "; ".join(said + [p for p in parts if p not in said]), mine, len(notes) - len(mine)


def line(record: Record, status: Status | None, colour: bool = False) -> str:
    state = status.state if status else record.fields.get("relation", "")
    label = paint(f"{state:<11}", state, colour)
    text = f"{record.title}{'  ' + AGENT_MARK if by_agent(record) else ''}  {subject(record, status)}"
    return f"{short_id(record.id)}  {printed(record.kind):<10}  {label}  {printed(text)}".rstrip()


def detail(
    record: Record, status: Status | None, colour: bool = False, moved_from: Mapping[tuple[str, str], str] | None = None
) -> str:
    """The record in full, each line of its text through `shown` (the body keeps its lines).
    `moved_from`: the versions its change moved dependencies from (`read.moved_from`), when known."""
    lines = _detail_lines(record, status, moved_from or {})
    if status:  # the one line with colour in it, painted after its text was cleaned
        first = status.reason.split("; ")[0]
        lines[2] = f"  status:   {paint(status.state, status.state, colour)} — {printed(first)}"
    return "\n".join(lines)


def _fingerprinted(fingerprint: dict[str, Any], moves: Sequence[str] = ()) -> str:
    """`2 files, 14 lines added and 3 removed`: what a change's fingerprint holds, counted; a change
    with no line kept (a lockfile's are not) names its files instead; then the dependencies it moved,
    `moves 2 dependencies (regex 1.5.4 → 1.5.5, …)`."""
    from comind.checks.formats._base import plural

    files = [f for f in fingerprint.get("files", []) if isinstance(f, dict)]
    added = sum(len(f.get("added") or ()) for f in files)
    removed = sum(len(f.get("removed") or ()) for f in files)
    text = f"{plural(len(files), 'file')}"
    if added or removed or not files:
        text += f", {plural(added, 'line')} added and {removed} removed (--json has them)"
    else:
        paths = [str(f.get("path")) for f in files]
        text += f" ({_listed(paths)})"
        text += "" if moves else f", no line kept: {_why_no_line(files)}"
    if moves:
        shown = ", ".join(moves[:4]) + (f" and {len(moves) - 4} more" if len(moves) > 4 else "")
        text += f"{';' if added or removed else ':'} moves {plural(len(moves), 'dependency', 'dependencies')} ({shown})"
    return text


def _listed(paths: Sequence[str]) -> str:
    return ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")


# Why a file of a change has no line in its fingerprint (harvest keeps only the lines a re-proposal
# is matched by), in words: each, of the files it holds.
_NO_LINE_WHY = {
    "binary": "a binary file",
    "skipped": "too large to read, or its contents are not in this clone",
    "bookkeeping": "a lockfile or changelog, whose lines no check compares",
    "trivial": "the lines changed are ones no check compares (comments, imports, blank lines, brackets, "
    "generated or copied code)",
}


def _why_no_line(files: Sequence[Mapping[str, Any]]) -> str:
    """Why the files of a fingerprint that kept no line have none: `only comments … changed, which no
    check compares`; where the reasons differ, each names its files."""
    from comind.harvest.approach import bookkeeping

    by_reason: dict[str, list[str]] = {}
    for f in files:
        path = str(f.get("path"))
        reason = "binary" if f.get("binary") else "skipped" if f.get("skipped") else None
        reason = reason or ("bookkeeping" if bookkeeping(path) else "trivial")
        by_reason.setdefault(reason, []).append(path)
    if len(by_reason) == 1:
        return _NO_LINE_WHY[next(iter(by_reason))]
    return "; ".join(f"{_listed(paths)}: {_NO_LINE_WHY[reason]}" for reason, paths in by_reason.items())


def dependency_moves(record: Record, moved_from: Mapping[tuple[str, str], str]) -> list[str]:
    """`regex 1.5.4 → 1.5.5` for each dependency an attempt's anchors say its change moved (to the
    version in the anchor's exact range), from the version in `moved_from` where it is known."""
    from comind.deps import exact_pin

    out = []
    for anchor in record.anchors:
        dep = anchor.get("dep") if anchor.get("scope") == "dependency" else None
        if not isinstance(dep, dict) or not dep.get("package"):
            continue
        key = (str(dep.get("ecosystem", "")), str(dep["package"]))
        to = exact_pin(str(dep.get("version_range") or "")) or str(dep.get("version_range") or "?")
        was = moved_from.get(key)
        out.append(f"{key[1]} {was} → {to}" if was else f"{key[1]} → {to}")
    return out


def _inline(value: Any, width: int = 200) -> str:
    """A structured field on one line, as flow-style JSON, cut at `width` (--json has it whole)."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= width else text[: width - 1] + "… (--json has it whole)"


def _detail_lines(record: Record, status: Status | None, moved_from: Mapping[tuple[str, str], str]) -> list[str]:
    out = [f"{record.kind} {record.id}", f"  {record.title}"]
    if status:  # a part of its reason a line (a landing's gone files, drift…), as `why` prints them
        first, *rest = status.reason.split("; ")
        out.append(f"  status:   {status.state} — {first}")
        out += [f"            {part}" for part in rest]
        out.append(f"  trust:    {TRUST_NAMES[status.trust]}")
        out += [f"  mark:     {m}" for m in status.marks]
        out += [f"  note:     {n}" for n in status.notes]
    if record.trigger and beyond_title(record.title, record.trigger) is not None:  # (not `re-doing: <title>`)
        out.append(f"  relevant when: {record.trigger}")
    free_text = {f.name for f in KIND_FIELDS.get(record.kind, ()) if f.shape == "text"}
    silent = gave_no_reason(record)  # (its body is our sentence saying so, naming the title again)
    if silent:
        out.append("  reason: none given")
    for name, value in record.fields.items():
        if name in free_text and isinstance(value, str) and value.strip():  # the title is said: only what is more
            if (more := beyond_title(record.title, value)) is None:
                continue
            value = more if more == value else f"as titled{more}"
        if name == "reason" and told_in(record.body, value):  # (a revert's reason: the body below says it whole)
            continue
        if name == "fingerprint" and isinstance(value, dict):
            moves = dependency_moves(record, moved_from)
            out.append(f"  {name}: {_fingerprinted(value, moves)}")
        elif name in ("fingerprint", "pattern", "check"):
            out.append(f"  {name}: {_inline(value)}")
        elif name == "alternatives":
            out += [f"  rejected: {a['option']}" + (f" — {a['why_not']}" if a.get("why_not") else "") for a in value]
        elif isinstance(value, list):
            out += [f"  {name}: {v}" for v in value]
        else:
            out.append(f"  {name}: {value}")
    for anchor in record.anchors:
        extra = f" @ {anchor['commit'][:10]}" if anchor.get("commit") else ""
        out.append(f"  anchor:   {format_anchor(anchor)} ({anchor.get('role', 'subject')}){extra}")
    for item in record.shown_evidence:
        role = str(item.get("role") or "")
        kind = "" if item["type"] == "mr" and role.endswith((" pr", " mr")) else f"{item['type']} "  # not "pr mr"
        note = f" — {item['note']}" if item.get("note") else ""
        ref = str(item["ref"])
        if item["type"] == "text" and ref.startswith("unresolved: "):  # not "reverted text unresolved: …"
            said = ref.removeprefix("unresolved: ")
            out.append(f"  evidence: {role or 'named'}: no commit here matches {quoted(said)}{note}")
            continue
        out.append(f"  evidence: {role + ' ' if role else ''}{kind}{ref}{note}")
    prov = record.provenance
    origin = prov.get("harvester", {}).get("name") if prov.get("harvester") else prov.get("source")
    out.append(f"  by {prov.get('actor')} ({prov.get('author_kind')}, {origin}) on {record.created_at[:10]}")
    out = [printed(text) for text in out]
    if record.body and not silent and not restates(record.title, record.body):  # (a Lore constraint's: its title)
        out.append("")
        body = [printed(body_line, multiline=True) for body_line in record.body.splitlines()]
        out += [f"  {line}" if line.strip() else "" for line in body]  # a blank line stays blank
    return out
