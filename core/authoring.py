"""Writing records by hand: the kind-specific flags and how their values become record fields.

Shared by ``comind remember`` (the CLI), the bot's ``/comind remember`` command and the MCP
``remember`` tool, so all take the same flags with the same meaning and the same error messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.records import Record
    from comind.workspace import Workspace

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from comind.anchors import AnchorError, repository_path
from comind.errors import ComindError
from comind.records import KIND_FIELDS, new_record

# flag -> (field, kinds it applies to); --alternative and --exception collect lists.
KIND_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "need": ("need", ("intent",)),
    "chosen": ("chosen", ("decision",)),
    "alternative": ("alternatives", ("decision",)),
    "approach": ("approach", ("attempt",)),
    "outcome": ("outcome", ("attempt",)),
    "retry_when": ("retry_when", ("attempt",)),
    "conditions": ("conditions", ("attempt",)),
    "rule": ("rule", ("constraint",)),
    "severity": ("severity", ("constraint",)),
    "exception": ("exceptions", ("constraint",)),
    "symptom": ("symptom", ("gotcha",)),
    "cause": ("cause", ("gotcha",)),
    "workaround": ("workaround", ("gotcha",)),
    "question": ("question", ("question",)),
    "constraint": ("constraint", ("suppression",)),
    "reason": ("reason", ("suppression", "attempt")),
    "owner": ("owner", ("suppression",)),
    "expires": ("expires", ("suppression",)),
}
LIST_FLAGS = frozenset({"alternative", "exception"})


def flag_name(flag: str) -> str:
    """``retry_when`` -> ``--retry-when``."""
    return "--" + flag.replace("_", "-")


def kind_fields(kind: str, values: Mapping[str, Any], today: date | None = None) -> dict[str, Any]:
    """The kind-specific fields from flag values (flag name -> value, or a list for LIST_FLAGS).

    Flags that do not apply to ``kind`` are an error naming the kind's fields. Given `today` (the
    day the record is written), an ``--expires`` before it is an error too.
    """
    fields: dict[str, Any] = {}
    for flag, (field, kinds) in KIND_FLAGS.items():
        value = values.get(flag)
        if value in (None, []):
            continue
        if kind not in kinds:
            raise ComindError(
                f"{flag_name(flag)} does not apply to a {kind} "
                f"(its fields: {', '.join(f.name for f in KIND_FIELDS[kind])})"
            )
        if flag == "alternative":
            value = [alternative(v) for v in value]
        if flag == "expires":
            value = expires(str(value), today)
        fields[field] = value
    return fields


def alternative(text: str) -> dict[str, str]:
    """``"option | why not"`` -> ``{"option": …, "why_not": …}``."""
    option, _, why_not = text.partition("|")
    if not option.strip():
        raise ComindError(f'--alternative {text!r}: expected "option | why not"')
    return {"option": option.strip(), "why_not": why_not.strip()}


def expires(text: str, today: date | None = None) -> str:
    """A suppression's end, checked when it is written: a date that is none would otherwise be
    kept, and `comind check` applies such a suppression until someone fixes the date; one before
    `today` would suppress nothing from the start (it holds through its last day, as in `check`)."""
    from comind.records import until_date

    value = str(text).strip()
    try:
        last_day = until_date(value)
    except ValueError:
        raise ComindError(f"--expires {value[:40]!r}: expected a date YYYY-MM-DD (or YYYY-MM)") from None
    if today is not None and last_day < today:
        raise ComindError(f"--expires {value}: the date has passed (today is {today.isoformat()})")
    return value


def until_flag(text: str) -> tuple[str, date]:
    """`--until`: the date as given, and the last day it holds (YYYY-MM: the month's last day);
    checked before anything is written, with the flag's name and the formats it takes."""
    from comind.records import until_date

    value = str(text).strip()
    try:
        return value, until_date(value)
    except ValueError:
        raise ComindError(
            f"--until {value[:40]!r}: expected a date YYYY-MM-DD, or YYYY-MM for the end of that month"
        ) from None


def parse_evidence(ws: Workspace, text: str, cwd: Path | None = None) -> dict[str, str]:
    """Classify one --evidence value; commits must exist, records must be known. A file is named
    relative to `cwd` (where it was typed; the repository root by default) and kept from the root."""
    value = text.strip()
    if not value:
        raise ComindError("--evidence: empty")
    if re.fullmatch(r"[0-9a-fA-F]{7,40}|HEAD(?:[~^]\d*)*|@(?:[~^]\d*)*", value):
        try:
            sha = ws.git("rev-parse", "--verify", "--quiet", f"{value}^{{commit}}").strip()
        except ComindError:
            raise ComindError(f"--evidence {value}: no such commit in this repository") from None
        return {"type": "commit", "ref": sha}
    if re.match(r"https?://", value):
        return {"type": "url", "ref": value}
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value):
        return {"type": "record", "ref": value}
    if value.startswith("test:"):
        return {"type": "test", "ref": value[len("test:") :]}
    try:
        path = repository_path(value, ws.root, cwd or ws.root)
    except (AnchorError, ValueError):  # outside the repository, or a NUL in it: text
        path = ""
    try:
        if path and (ws.root / path).is_file():
            return {"type": "file", "ref": path}
    except OSError:  # a name too long for the file system: text
        pass
    return {"type": "text", "ref": value}


def authored_record(
    ws: Workspace,
    kind: str,
    *,
    title: str,
    body: str,
    trigger: str,
    on: Sequence[str],
    context: Sequence[str],
    evidence: Sequence[str],
    fields: dict[str, Any],
    provenance: Callable[[bool], dict[str, Any]],
    until: str | None,
    cwd: Path | None = None,
) -> Record:
    """A record written by hand (the CLI's ``remember``, an agent's through MCP): its anchors parsed
    and resolved at HEAD (as written in a repository without commits), its evidence checked (a file
    named relative to `cwd`, the repository root by default). `provenance(create)` says who writes;
    it is asked to make the store's actor key (`create`) only for a record found valid, so that a
    refused one leaves nothing behind."""
    from comind.anchoring import resolve_anchor  # on use: the code index is not needed to parse flags
    from comind.anchors import parse_anchor

    anchors = [parse_anchor(a, "subject") for a in on] + [parse_anchor(a, "context") for a in context]
    if anchors and ws.head() is not None:
        anchors = [resolve_anchor(ws.index, a, "HEAD") for a in anchors]
    made = partial(
        new_record,
        kind,
        title=title,
        body=body,
        trigger=trigger,
        anchors=anchors,
        evidence=[parse_evidence(ws, e, cwd) for e in evidence],
        fields=fields,
        valid_from=ws.head(),
        until=until,
    )
    made(provenance=provenance(False))  # raises for a record refused, before the key is made
    return made(provenance=provenance(True))
