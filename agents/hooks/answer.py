"""One hook call, whichever the agent: a session digest, or the records on what an edit touches
(and a deny when a `must` constraint's compiled check fails on the edited text).

Everything comes from the hooks' view (`view`), so a warm call reads one JSON file and, only
for files that records or `must` checks are on, parses the edited file. The block is rendered as
`preflight --format agent` renders it: quoted, attributed data, at most 500 tokens, T2 and above,
each record once per session.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..render import Entry, clean, notice, render, run_hint, verify_line
from . import edits as editing
from . import view as views
from .interface import AFTER_EDIT, BEFORE_EDIT, SESSION, Edit, HookInputError, Reply, Request
from .session import Session, prune

if TYPE_CHECKING:
    from comind.workspace import Workspace


# where the digest's records left out are: every constraint and dead end, with its status
DIGEST_MORE = run_hint("comind", "log", "--kind", "constraint", "--kind", "attempt")


class Shown(NamedTuple):
    """Why a record is shown on an edit and what to read there ("": its entry's own), and the code
    of it the edit is on, as `entry_of` names code (`on`, `anchored`, `verified_at`; "": its subject)."""

    why: str
    verify: str = ""
    on: str = ""
    anchored: str = ""
    verified_at: str = ""


class EditedFile(NamedTuple):
    path: str  # relative to the work tree, with /
    before: str
    after: str


def edited_file(ws: Workspace, request: Request) -> EditedFile | None:
    """The file the request edits, before and after; None when there is nothing to say (a file
    comind cannot read as text, an edit that will not apply or changes nothing). A path outside
    the work tree is an input error."""
    if not request.edits:
        return None
    raw = request.edits[0].path
    base = Path(request.cwd) if request.cwd else ws.root
    target = (base / raw).resolve() if not Path(raw).is_absolute() else Path(raw).resolve()
    root = ws.root.resolve()
    if not target.is_relative_to(root):
        raise HookInputError(f"tool_input.file_path: {raw} is outside the repository {root}")
    rel = target.relative_to(root).as_posix()
    if rel == ".git" or rel.startswith(".git/") or any(e.path != raw for e in request.edits):
        return None
    try:
        before = target.read_text(encoding="utf-8") if target.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return None
    try:
        if request.kind == AFTER_EDIT:  # the edit is on disk: undo it to see what it changed
            after = before
            before = editing.apply(after, [_reversed(e) for e in reversed(request.edits)])
        else:
            after = editing.apply(before, request.edits)
    except editing.NotApplicable:
        return None
    if after == before:  # it changes nothing (the Edit tool refuses an old_string equal to new_string)
        return None
    return EditedFile(rel, before, after)


def _reversed(edit: Edit) -> Edit:
    if edit.old is None:
        raise editing.NotApplicable  # a whole file written: what was there before is gone
    return Edit(edit.path, edit.old, edit.new, edit.replace_all)


def respond(ws: Workspace, request: Request) -> Reply:
    if request.kind not in (SESSION, BEFORE_EDIT, AFTER_EDIT):
        return Reply()
    edited = edited_file(ws, request) if request.kind != SESSION else None  # input errors before any write
    if request.kind != SESSION and edited is None and not (request.kind == AFTER_EDIT and request.call):
        return Reply()
    view, behind, failed = current_view(ws)
    folder = views.hooks_dir(ws.git_dir)
    session = Session.load(folder, request.session)
    if request.kind == SESSION:
        prune(folder)
    if view is None:
        return _building(session, request, failed)
    if request.kind == SESSION:
        return _show(ws, session, view, view.digest, behind, "session start", more=DIGEST_MORE, failed=failed)
    assert edited is not None or request.call
    more = run_hint("comind", "why", edited.path) if edited else ""  # the records on the file edited
    if request.kind == AFTER_EDIT:
        pending = session.pending.pop(request.call, None)
        found = on_edit(view, edited) if edited else {}
        if pending is None:
            return _show(ws, session, view, found, behind, "edit", more=more, failed=failed)
        # the whys found before the edit; the code it is on and its lines, found again on the edited file
        ids = {
            i: found[i]._replace(why=why) if i in found else Shown(why)
            for i, why in zip(pending[::2], pending[1::2], strict=True)
        }
        return _show(ws, session, view, ids, behind, "edit", dirty=True, more=more, failed=failed)
    assert edited is not None
    ids = on_edit(view, edited)
    deny = must_failures(ws, view, edited)
    if request.call:  # the agent takes context only after the edit: keep them for it
        if ids:
            session.pending[request.call] = [x for record_id, shown in ids.items() for x in (record_id, shown.why)]
            session.save()
        return Reply(deny=deny)
    reply = _show(ws, session, view, ids, behind, "edit", more=more, failed=failed)
    return Reply(reply.context, deny)


def current_view(ws: Workspace) -> tuple[views.View | None, str, str]:
    """The view, why it may be behind ("" when current), and why the refresh failed ("" unless that
    stands: `views.failure`). None made yet: made in the background, waited for a moment (None if it
    takes longer); behind: used as it is while a refresh runs. While a failure stands none is started."""
    view = views.load(ws)
    if view is None and not ws.head():  # nothing committed: an empty view, made now
        view = views.build(ws)
        views.save(ws, view)
    elif view is None:
        if failed := views.failure(ws):
            return None, "", failed
        view = views.building(ws)
        return view, "", "" if view is not None else views.failure(ws)  # (a refresh that failed at once)
    behind = views.staleness(ws, view)
    failed = ""
    if behind and (failed := views.failure(ws)):
        behind += "; comind could not refresh it"
    elif behind and views.refresh_in_background(ws):
        behind += "; a refresh is running"
    elif behind and (failed := views.failure(ws)):  # (the last refresh found killed just now)
        behind += "; comind could not refresh it"
    elif behind:
        behind += "; a refresh is already running"
    return view, behind, failed


BUILDING = (
    "note: comind is making its view of this repository's records in the background (none made here yet,"
    " or one of an older comind); its records and `must` checks apply from a later call on"
)
BUILDING_ID = "note:building"  # in the session's shown ids: the note is given once per session
FAILED = (
    "note: comind could not make its view of this repository's records, so none of its records or `must`"
    " checks apply; it tries again in a few minutes, or when HEAD, the ledger or the store changes"
)
FAILED_ID = "note:failed"


def failed_lines(reason: str) -> list[str]:
    """The refresh's error, quoted as data, and where to see it whole."""
    return [f'note: `comind hook refresh` shows the error the refresh failed with, quoted here: "{reason}"']


def _building(session: Session, request: Request, failed: str) -> Reply:
    """The answer while there is no view: a short note, once per session, that it is being made, or
    that it could not be made and why (a before-edit of an agent that takes context only after the
    edit keeps it for then)."""
    note = FAILED_ID if failed else BUILDING_ID
    if note in session.seen() or (request.kind == BEFORE_EDIT and request.call):
        return Reply()
    session.mark([note])
    session.save()
    on = "session start" if request.kind == SESSION else "edit"
    lines = [FAILED, *failed_lines(failed)] if failed else [BUILDING]
    return Reply(notice(lines, attributes={"on": on}))


def _show(
    ws: Workspace,
    session: Session,
    view: views.View,
    ids: Mapping[str, Shown] | list[str],
    behind: str,
    on: str,
    *,
    dirty: bool = False,
    more: str = "",
    failed: str = "",
) -> Reply:
    """`ids`: the records to show, each with what it says of the edit (`Shown`; none: the entry as it is)."""
    seen = session.seen()
    shown = ids if isinstance(ids, Mapping) else dict.fromkeys(ids, Shown(""))
    entries = []
    for record_id, said in shown.items():
        if record_id in view.entries and record_id not in seen:
            entry = Entry.from_json(view.entries[record_id])
            entry = entry._replace(why=said.why or entry.why, verify=said.verify or entry.verify)
            if said.on:  # the code the edit is on, named as it is now: what `verify` reads
                entry = entry._replace(on=said.on, anchored=said.anchored, verified_at=said.verified_at)
            entries.append(entry)
    if not entries:
        if dirty:
            session.save()
        return Reply()
    footer = [f"note: as of {view.head[:7]}: {behind}"] if behind else []
    footer += failed_lines(failed) if failed else []
    block = render(entries, attributes={"on": on}, footer=footer, more=more)
    session.mark(block.shown)
    session.save()
    return Reply(block.text)


def on_edit(view: views.View, edited: EditedFile) -> dict[str, Shown]:
    """The view's records on the file the edit changes: on a symbol it touches, or on the file (or a
    folder holding it) as a whole. Each is on that code, named as it is at HEAD (`anchored` as it was
    anchored where that differs; a record on several is shown by the one edited, not its subject), and
    what to read is the code edited, as `preflight --diff` names it: that symbol's lines after the
    edit, else the file."""
    folders = [edited.path[: i + 1] for i, c in enumerate(edited.path) if c == "/"]
    places = [(p, pair) for p in (edited.path, *folders) for pair in view.places.get(p, [])]
    if not places:
        return {}
    symbols = touched(view, edited) if any(symbol for _, (_, symbol, *_) in places) else {}
    out: dict[str, tuple[str, int, str, list[str]]] = {}  # id -> (why, nearness, symbol, the place)
    for path, (record_id, symbol, *named) in places:
        on = f"{path}::{symbol}" if symbol else path
        if path.endswith("/") or not symbol:  # nearness: on a symbol 0, the file 1, a folder 2
            how, nearness = f"on {path}, which this edit changes", 2 if path.endswith("/") else 1
        elif members := _members(symbols, symbol):
            how, nearness = f"on {on}, {members} this edit touches", 0
        elif symbol in symbols:
            how, nearness = f"on {on}, which this edit touches", 0
        else:
            continue
        if record_id not in out or nearness < out[record_id][1]:  # (the nearest of its anchors)
            out[record_id] = (how, nearness, symbol, [on, *named])
    ranked = sorted(out.items(), key=lambda item: views.edit_order(view.entries.get(item[0], {}), item[1][1]))
    from comind.languages import keeping_trees

    with keeping_trees():  # (the edited text parsed once for all the symbols)
        return {record_id: Shown(why, _read(edited, symbol), *place) for record_id, (why, _, symbol, place) in ranked}


def _read(edited: EditedFile, symbol: str) -> str:
    """What to read of the edited code: the symbol's lines after the edit, else the file."""
    from comind.languages import span_of

    span = span_of(edited.path, edited.after.encode("utf-8", "surrogatepass"), symbol) if symbol else None
    return verify_line(edited.path, span)


def _members(symbols: Mapping[str, int], symbol: str, named: int = 3) -> str:
    """`whose member A.x` or `whose members A.x, A.y and 2 more`: the members of `symbol` the edit
    touches, in the order they come in the file, a member's own members left to it; "" for none."""
    inside = sorted((line, q) for q, line in symbols.items() if q.startswith(symbol + "."))
    names = [q for _, q in inside if not any(q.startswith(other + ".") for _, other in inside)]
    if not names:
        return ""
    if len(names) == 1:
        return f"whose member {names[0]}"
    shown = names[:-1] if len(names) <= named else names[: named - 1]
    rest = names[-1] if len(names) <= named else f"{len(names) - len(shown)} more"
    return f"whose members {', '.join(shown)} and {rest}"


def touched(view: views.View, edited: EditedFile) -> dict[str, int]:
    """The symbols the edit touches, with their first lines: from the spans at HEAD when the file is
    as it is at HEAD, else by parsing the text before and after the edit."""
    known = view.spans.get(edited.path)
    if known:
        from blake3 import blake3

        if blake3(edited.before.encode("utf-8", "surrogatepass")).hexdigest() == known[0]:
            return editing.touched_by_spans([(q, a, b) for q, a, b in known[1]], edited.before, edited.after)
    return editing.touched_symbols(edited.path, edited.before, edited.after)


def must_failures(ws: Workspace, view: views.View, edited: EditedFile) -> str:
    """The deny reason when a `must` constraint's compiled check fails on the edited text and
    not on the text before it; "" otherwise. Only the checks that read the file are run."""
    if not view.checks:
        return ""
    wanted = view.checked.get(edited.path)
    if wanted is None and edited.before == "":  # a new file: ask each check whether it reads it
        wanted = list(view.checks)
    if not wanted:
        return ""
    violations = _run_checks(ws, view, edited, wanted)
    if not violations:
        return ""
    lines = ["comind: this edit breaks a `must` constraint (recorded data, quoted; verify before relying):"]
    for record_id, message, where in violations[:3]:
        entry = view.entries.get(record_id, {})
        title = clean(str(entry.get("title") or record_id), 120)
        lines.append(f'- [constraint · T{entry.get("trust", "?")} · must] "{title}" — {clean(message, 200)}')
        if where:
            lines.append(f"  verify: read {clean(where, 160)}")
        lines.append(f"  record: {record_id[-8:]} (comind show {record_id[-8:]})")
    return "\n".join(lines)


def _run_checks(ws: Workspace, view: views.View, edited: EditedFile, wanted: list[str]) -> list[tuple[str, str, str]]:
    from comind.checks.context import CheckContext
    from comind.checks.evaluate import evaluate
    from comind.checks.interface import CheckError
    from comind.query import current_time
    from comind.records import Record

    ctx = CheckContext(ws.index, work_tree=ws.root)
    checks: list[tuple[Record, Any]] = []
    for record_id in wanted:
        record = Record(view.checks[record_id])
        try:
            check = views.compiled(record)
        except CheckError:
            continue
        if edited.path in view.checked or views.applies(check, ctx, edited.path):
            checks.append((record, check))
    head = ws.head()
    if not checks or head is None:
        return []
    base = _commit_with(ws, head, edited.path, edited.before)
    after = _commit_with(ws, base, edited.path, edited.after)
    suppressions = [Record(d) for d in view.suppressions]
    result = evaluate(  # an edit's answer shows no warnings: never look for unmatched selectors
        checks, ctx, base=base, head=after, suppressions=suppressions, today=current_time().date(), unmatched=False
    )
    out = []
    for v in result.violations:
        where = f"{edited.path}:{v.line}" + (f"-{v.end_line}" if v.end_line and v.end_line != v.line else "")
        out.append((v.record_id, v.message, where if v.line else edited.path))
    return out


def _commit_with(ws: Workspace, parent: str, path: str, text: str) -> str:
    """A commit on no ref: `parent`'s tree with `path` holding `text` (what the checks read)."""
    import pygit2

    repo = ws.index.repo
    commit = repo[parent]
    assert isinstance(commit, pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(commit.tree)
    blob = repo.create_blob(text.encode("utf-8", "surrogatepass"))
    index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    who = pygit2.Signature("comind hook", "hook@comind.invalid", commit.commit_time, 0)
    return str(repo.create_commit(None, who, who, "comind hook: an edit", tree, [commit.id]))
