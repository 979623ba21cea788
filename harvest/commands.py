"""``/comind`` commands in merge-request comments: the grammar, and the records a command makes.

The bot answers commands as they are written (``comind.bot.commands``) and the merge-request
harvester re-derives the same records from the forge on a fresh runner (``comind.harvest.mr``),
so both read commands here: the records a command makes are a pure function of the comment
(its author, text, URL, time and position) and of the records it names, with ids from
``mr:<forge>:<project>:<number>:<note>[:<n>]`` — answering and harvesting the same comment
twice writes nothing new.

Each answer carries ``<!-- comind:answer <comment> <digest> -->``, the digest of the comment's
command lines: a comment edited so that its commands changed is answered again, and the records
of that later version get ids of their own (``…:<note>@<digest>``), which the harvester derives
the same way from the answers on the forge (``revision``).

Grammar (one command per line; only lines that start with ``/comind``, outside fenced code
blocks and ``>`` quotes; up to three leading spaces, as Markdown allows)::

    /comind remember KIND "TITLE" [--on ANCHOR] [--because TEXT] [kind flags…]
    /comind confirm|retract|dispute ID [reason…]
    /comind supersede ID "NEW TITLE" [--on ANCHOR] [--because TEXT] [kind flags…]
    /comind why ANCHOR
    /comind help

Words are split like a POSIX shell (``shlex``) after typographic double quotes (“ ” „) are made
plain; a title may be quoted or left as the words before the first flag. Flags take a value as
``--flag VALUE`` or ``--flag=VALUE``; the kind flags are the CLI's (``comind remember --help``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.ledger import Ledger
    from comind.workspace import Workspace

import hashlib
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from typing import Any

from comind.actors import actor_id
from comind.anchors import parse_anchor
from comind.authoring import KIND_FLAGS, LIST_FLAGS, flag_name, kind_fields, parse_evidence
from comind.errors import ComindError
from comind.mergerequests import Note, note_key
from comind.records import KNOWLEDGE_KINDS, TITLE_MAX, Record, harvested_id, new_record

PREFIX = "/comind"
ACTIONS = ("remember", "confirm", "retract", "dispute", "supersede", "why", "help")
RELATIONS = {"confirm": "confirms", "retract": "retracts", "dispute": "disputes"}
MAX_COMMANDS = 20  # per comment: more lines are not read
MAX_LINE = 4000  # characters

# Flags every writing command takes, besides the kind flags: name -> repeatable.
COMMON_FLAGS = {"on": True, "context": True, "because": False, "trigger": False, "until": False, "evidence": True}

USAGE = """\
/comind remember KIND "TITLE" [--on ANCHOR] [--because TEXT] [kind flags]
/comind confirm|retract|dispute ID [reason]
/comind supersede ID "NEW TITLE" [--on ANCHOR] [--because TEXT] [kind flags]
/comind why ANCHOR
/comind help

KIND: intent, decision, attempt, constraint, gotcha, question, suppression
ANCHOR: path/file.py::Class.method, path/file.py, path/file.py:42, module:pkg.sub, dep:pypi/name, repo:
  (on an inline comment, remember anchors to the commented line when --on is not given)
kind flags:
  intent      --need TEXT
  decision    --chosen TEXT --alternative "option | why not" (repeatable)
  attempt     --approach TEXT --outcome failed|reverted|abandoned|partial [--retry-when TEXT]
              [--conditions TEXT] [--reason TEXT]
  constraint  --rule TEXT --severity must|should [--exception TEXT (repeatable)]
  gotcha      --symptom TEXT --cause TEXT [--workaround TEXT]
  question    --question TEXT
  suppression --constraint ID --reason TEXT --owner TEXT [--expires YYYY-MM-DD]
also: --context ANCHOR, --evidence COMMIT|URL|TEXT (repeatable), --trigger TEXT, --until YYYY-MM[-DD]
Quote values with spaces: --because "the cache is per process"."""


class CommandError(ComindError):
    """A command that cannot be carried out: ``str()`` is the problem, ``usage`` the grammar."""

    def __init__(self, problem: str, usage: str = USAGE) -> None:
        super().__init__(problem)
        self.problem = problem
        self.usage = usage


@dataclass(frozen=True)
class Command:
    """One parsed ``/comind`` line. Flag values are kept as written; records are built later."""

    action: str
    text: str
    kind: str = ""
    title: str = ""
    target: str = ""  # the record id (or unique part of it) a review action or supersede names
    reason: str = ""
    anchor: str = ""  # why
    on: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    because: str = ""
    trigger: str = ""
    until: str = ""
    evidence: tuple[str, ...] = ()
    values: tuple[tuple[str, str | tuple[str, ...]], ...] = field(default=())  # kind flags

    @property
    def writes(self) -> bool:
        return self.action not in ("why", "help")

    def kind_values(self) -> dict[str, Any]:
        return {name: list(value) if isinstance(value, tuple) else value for name, value in self.values}


# --- finding command lines ---------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMAND = re.compile(r"^ {0,3}" + re.escape(PREFIX) + r"(?=\s|$)")
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"'})


def command_lines(body: str) -> list[str]:
    """The ``/comind`` lines of a comment, in order, at most MAX_COMMANDS."""
    found: list[str] = []
    fence: str | None = None
    for raw in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        opened = _FENCE.match(raw)
        if fence is not None:
            # a fence closes with the same character, at least as long, and nothing after it
            if (
                opened
                and opened.group(1)[0] == fence[0]
                and len(opened.group(1)) >= len(fence)
                and not raw[opened.end() :].strip()
            ):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if _COMMAND.match(raw):
            found.append(raw.strip())
            if len(found) == MAX_COMMANDS:
                break
    return found


ANSWER_MARKER = "<!-- comind:answer {key} {digest} -->"
_ANSWERED = re.compile(r"<!-- comind:answer ([A-Za-z0-9_-]{1,100})(?: ([0-9a-f]{12}))? -->")


def command_digest(body: str) -> str:
    """The digest an answer is keyed by, besides its comment: the text of the command lines (so
    an edit of the prose around them is not answered again)."""
    return hashlib.sha256("\n".join(command_lines(body)).encode()).hexdigest()[:12]


def answer_marker(note: Note) -> str:
    return ANSWER_MARKER.format(key=note_key(note), digest=command_digest(note.body))


def answers(notes: Iterable[Note], bot_login: str | None) -> dict[str, list[str]]:
    """comment key -> the digests the bot's answers to it carry, oldest first ("" for an answer
    written before answers carried one). Read only from the bot's own comments."""
    found: dict[str, list[str]] = {}
    for note in notes:
        if bot_login is not None and note.author == bot_login:
            for key, digest in _ANSWERED.findall(note.body):
                found.setdefault(key, []).append(digest)
    return found


def is_answered(note: Note, answered: dict[str, list[str]]) -> bool:
    """This version of the comment was answered (an answer without a digest stands for any)."""
    seen = answered.get(note_key(note), [])
    return bool(seen) and ("" in seen or command_digest(note.body) in seen)


def revision(note: Note, answered: dict[str, list[str]]) -> str:
    """ "" for the first version of a comment that was answered (or for one not answered yet),
    else the digest of this version: what tells the records of an edited command apart."""
    seen = answered.get(note_key(note), [])
    digest = command_digest(note.body)
    return "" if not seen or seen[0] in ("", digest) else digest


def parse_commands(body: str) -> list[Command | CommandError]:
    """Every command line of a comment, parsed, or the error that line gets as an answer."""
    parsed: list[Command | CommandError] = []
    for line in command_lines(body):
        try:
            parsed.append(parse_command(line))
        except CommandError as exc:
            parsed.append(exc)
    return parsed


# --- parsing one line --------------------------------------------------------------------------

_FLAG = re.compile(r"--([a-z][a-z-]*)(?:=(.*))?", re.DOTALL)


def _usage_of(action: str) -> str:
    lines = USAGE.split("\n")
    if action in ("remember", "supersede"):
        return USAGE
    picked = [line for line in lines[:5] if line.startswith(f"{PREFIX} ") and action in line.split()[1].split("|")]
    return "\n".join(picked) or USAGE


def parse_command(line: str) -> Command:
    """One ``/comind`` line -> a Command; anything malformed is a CommandError with the usage."""
    text = line.strip().translate(_QUOTES)
    if len(text) > MAX_LINE:
        raise CommandError(f"the command is {len(text)} characters long, at most {MAX_LINE}")
    if not _COMMAND.match(text):
        raise CommandError(f"a command starts with {PREFIX}")
    try:
        words = shlex.split(text[len(PREFIX) :])
    except ValueError as exc:  # unbalanced quotes, a trailing backslash
        raise CommandError(f"cannot split the command into words ({exc}): check the quotes") from None
    if not words:
        raise CommandError("which command? (remember, confirm, retract, dispute, supersede, why, help)")
    action, rest = words[0].lower(), words[1:]
    if action not in ACTIONS:
        raise CommandError(f"unknown command {words[0][:40]!r} (one of {', '.join(ACTIONS)})")
    usage = _usage_of(action)
    if action == "help":
        return Command("help", text)
    if action == "why":
        if len(rest) != 1:
            raise CommandError("why takes one anchor, e.g. /comind why app/auth.py::Session", usage)
        return Command("why", text, anchor=rest[0])
    if action in RELATIONS:
        if not rest or _FLAG.fullmatch(rest[0]):
            raise CommandError(f"{action} needs the id of a record", usage)
        return Command(action, text, target=_record_ref(rest[0], usage), reason=" ".join(rest[1:]).strip())
    if action == "remember":
        if not rest:
            raise CommandError("remember needs a kind and a title", usage)
        kind = rest[0].lower()
        if kind not in KNOWLEDGE_KINDS:
            raise CommandError(f"unknown kind {rest[0][:40]!r} (one of {', '.join(KNOWLEDGE_KINDS)})", usage)
        title, flags = _title_and_flags(rest[1:], usage)
        return _with_flags(Command("remember", text, kind=kind, title=title), flags, kind, usage)
    # supersede ID "NEW TITLE" [flags]
    if not rest or _FLAG.fullmatch(rest[0]):
        raise CommandError("supersede needs the id of the record it replaces and a new title", usage)
    target = _record_ref(rest[0], usage)
    title, flags = _title_and_flags(rest[1:], usage)
    return _with_flags(Command("supersede", text, target=target, title=title), flags, None, usage)


def _record_ref(word: str, usage: str) -> str:
    ref = word.strip().lower()
    if len(ref) < 6 or len(ref) > 36 or not re.fullmatch(r"[0-9a-f-]+", ref):
        raise CommandError(f"{word[:40]!r} is not a record id (give the id or at least 6 of its characters)", usage)
    return ref


def _title_and_flags(words: list[str], usage: str) -> tuple[str, list[tuple[str, str]]]:
    """The title (the words before the first flag) and the (flag, value) pairs after it."""
    title_words: list[str] = []
    i = 0
    while i < len(words) and not _FLAG.fullmatch(words[i]):
        title_words.append(words[i])
        i += 1
    title = " ".join(" ".join(title_words).split())
    if not title:
        raise CommandError('a title is required (quote it: "Sessions live in Redis")', usage)
    if len(title) > TITLE_MAX:
        raise CommandError(
            f"the title is {len(title)} characters long, at most {TITLE_MAX}: put the rest in --because", usage
        )
    flags: list[tuple[str, str]] = []
    while i < len(words):
        match = _FLAG.fullmatch(words[i])
        if not match:
            raise CommandError(f"unexpected {words[i][:40]!r} after the flags (quote values with spaces)", usage)
        name = match.group(1).replace("-", "_")
        if match.group(2) is not None:
            value, i = match.group(2), i + 1
        elif i + 1 < len(words) and not _FLAG.fullmatch(words[i + 1]):
            value, i = words[i + 1], i + 2
        else:
            raise CommandError(f"--{match.group(1)} needs a value", usage)
        flags.append((name, value))
    return title, flags


def _with_flags(command: Command, flags: list[tuple[str, str]], kind: str | None, usage: str) -> Command:
    common: dict[str, list[str]] = {}
    values: dict[str, list[str]] = {}
    for name, value in flags:
        if name in COMMON_FLAGS:
            bucket, repeatable = common, COMMON_FLAGS[name]
        elif name in KIND_FLAGS:
            bucket, repeatable = values, name in LIST_FLAGS
        else:
            raise CommandError(f"unknown flag {flag_name(name)[:40]}", usage)
        if name in bucket and not repeatable:
            raise CommandError(f"{flag_name(name)} is given twice", usage)
        if not value.strip():
            raise CommandError(f"{flag_name(name)} needs a value", usage)
        bucket.setdefault(name, []).append(value.strip())
    kind_values = {name: (tuple(v) if name in LIST_FLAGS else v[0]) for name, v in values.items()}
    if kind is not None:  # remember: check now that the flags fit the kind
        try:
            kind_fields(kind, {n: list(v) if isinstance(v, tuple) else v for n, v in kind_values.items()})
        except ComindError as exc:
            raise CommandError(str(exc), usage) from None
    first = {name: v[0] for name, v in common.items()}
    return Command(
        command.action,
        command.text,
        kind=command.kind,
        title=command.title,
        target=command.target,
        on=tuple(common.get("on", ())),
        context=tuple(common.get("context", ())),
        because=first.get("because", ""),
        trigger=first.get("trigger", ""),
        until=first.get("until", ""),
        evidence=tuple(common.get("evidence", ())),
        values=tuple(sorted(kind_values.items())),
    )


# --- the records a command makes ---------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where a command was written: the forge, project, merge request and comment."""

    forge: str
    project: str
    number: int
    mr_url: str
    note: Note
    index: int = 0  # the command's position among the comment's command lines
    _: KW_ONLY  # (three strings: named, so that none lands in another's place)
    repo: str = ""  # the repository name written into provenance
    salt: str = ""  # the actor pseudonym's key (`Workspace.actor_salt`); the repository name if not given
    revision: str = ""  # an edited comment's later version (`revision`): records of their own

    @property
    def source_key(self) -> str:
        key = f"mr:{self.forge}:{self.project}:{self.number}:{note_key(self.note)}"
        if self.revision:
            key += f"@{self.revision}"
        return f"{key}:{self.index}" if self.index else key

    def evidence(self) -> list[dict[str, str]]:
        items = [{"type": "url", "ref": self.note.url}] if self.note.url else []
        if self.mr_url:
            items.append({"type": "mr", "ref": self.mr_url})
        return items

    def provenance(self) -> dict[str, Any]:

        return {
            "actor": actor_id(self.note.author, self.salt or self.repo),
            "author_kind": "human",
            "source": "mr",
            "repo": self.repo or None,
        }

    def created_at(self) -> str:
        return timestamp(self.note.created_at)


def timestamp(moment: datetime) -> str:
    """A datetime in the records' format (UTC, milliseconds, Z)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


Resolve = Callable[[str], Record]


class Resolver:
    """Finds the record a command names: among records made in this run, then in the ledger
    (synced again once when it does not know the id, since this run may just have written it)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.made: dict[str, Record] = {}
        self._synced_after = -1

    def add(self, records: Iterable[Record]) -> None:
        for record in records:
            self.made[record.id] = record

    def __call__(self, ref: str) -> Record:
        ref = ref.strip().lower()
        here = [r for r in self.made.values() if r.id.startswith(ref) or r.id.endswith(ref)]
        if len(here) == 1:
            return here[0]
        if len(here) > 1:
            raise ComindError(f"record id {ref!r} is ambiguous: give more characters")
        try:
            return self.ledger.get(ref)
        except ComindError:
            if self._synced_after == len(self.made):
                raise
        self._synced_after = len(self.made)
        self.ledger.sync(warn=False)
        return self.ledger.get(ref)


def command_records(ws: Workspace, command: Command, origin: Origin, resolve: Resolve) -> list[Record]:
    """The records a command makes (none for why and help). Raises CommandError with the reason
    when the command cannot be carried out: an unknown record, a missing anchor, a bad field."""
    usage = _usage_of(command.action)
    try:
        if command.action in ("why", "help"):
            return []
        if command.action in RELATIONS:
            return [_relation(command, origin, resolve)]
        if command.action == "remember":
            return [_knowledge(ws, command, origin, command.kind, None)]
        target = resolve(command.target)
        if target.kind == "relation":
            raise CommandError(f"{target.id[-8:]} is a relation record: it cannot be superseded", usage)
        new = _knowledge(ws, command, origin, target.kind, target)
        relation = new_record(
            "relation",
            title=f"{new.title} supersedes {target.title}"[:TITLE_MAX],
            anchors=[],
            fields={"relation": "supersedes", "target": target.id, "source": new.id, "reason": command.because},
            provenance=origin.provenance(),
            evidence=origin.evidence(),
            created_at=origin.created_at(),
            record_id=harvested_id(origin.source_key + ":supersedes"),
            trust=3,
        )
        return [new, relation]
    except CommandError:
        raise
    except ComindError as exc:  # validation, anchors, evidence, unknown records
        raise CommandError(str(exc), usage) from None


def _relation(command: Command, origin: Origin, resolve: Resolve) -> Record:
    relation = RELATIONS[command.action]
    target = resolve(command.target)
    review = target.kind == "relation" and target.provenance.get("author_kind") == "agent"
    if target.kind == "relation" and relation != "retracts" and not (relation == "confirms" and review):
        raise CommandError(  # confirming an agent's review is how it takes effect (comind.status)
            f"{target.id[-8:]} is a relation record: only retract applies to it (and confirm, to an agent's review)",
            _usage_of(command.action),
        )
    return new_record(
        "relation",
        title=f"{relation} {target.title}"[:TITLE_MAX],
        anchors=[],
        fields={"relation": relation, "target": target.id, "reason": command.reason},
        provenance=origin.provenance(),
        evidence=origin.evidence(),
        created_at=origin.created_at(),
        record_id=harvested_id(origin.source_key),
        trust=3,
    )


def _knowledge(ws: Workspace, command: Command, origin: Origin, kind: str, replaces: Record | None) -> Record:

    usage = _usage_of(command.action)
    # an --expires before the day the comment was written is refused; that day, not the clock,
    # keeps the records a pure function of the comment when the harvester derives them again
    fields = kind_fields(kind, command.kind_values(), origin.note.created_at.astimezone(UTC).date())
    if replaces is not None:  # a supersede keeps what it does not restate
        fields = {**replaces.fields, **fields}
    anchors = [parse_anchor(a, "subject") for a in command.on]
    if not anchors:
        note = origin.note
        if note.is_inline and note.path:
            anchors = [parse_anchor(f"{note.path}:{note.line}" if note.line else note.path, "subject")]
        elif replaces is not None:
            anchors = [a for a in replaces.anchors if a.get("role", "subject") == "subject"] or replaces.anchors
        else:
            raise CommandError(
                "say what the record is about with --on ANCHOR (or write the command as a "
                "comment on the line it is about)",
                usage,
            )
    anchors += [parse_anchor(a, "context") for a in command.context]
    evidence = origin.evidence() + [parse_evidence(ws, e) for e in command.evidence]
    return new_record(
        kind,
        title=command.title,
        body=command.because,
        trigger=command.trigger,
        anchors=anchors,
        evidence=evidence,
        fields=fields,
        provenance=origin.provenance(),
        created_at=origin.created_at(),
        record_id=harvested_id(origin.source_key),
        trust=3,
        until=command.until or None,
    )


__all__ = [
    "ACTIONS",
    "ANSWER_MARKER",
    "MAX_COMMANDS",
    "USAGE",
    "Command",
    "CommandError",
    "Origin",
    "Resolver",
    "answer_marker",
    "answers",
    "command_digest",
    "command_lines",
    "command_records",
    "is_answered",
    "parse_command",
    "parse_commands",
    "revision",
    "timestamp",
]
