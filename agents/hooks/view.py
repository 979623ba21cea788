"""The hooks' view of the ledger: what an agent may be shown, made once per HEAD and ledger state
and read by every hook call as one JSON file (`.git/comind/hooks/view.json`).

A hook answers within a tool call, so it never derives status itself: re-anchoring at a new HEAD
can take seconds on a long history. When HEAD or the ledger moved since the view was made, a
hook answers from the view it has, says so, and a refresh runs in the background; when there is
no view, it waits for the refresh at most WAIT seconds, then says the view is being made. A refresh
that fails says why in `refresh.failed`; while that stands (same HEAD, ledger and store, less than
RETRY_AFTER seconds ago) hook calls start none and say that, not that a view is being made. A
refresh that ended without finishing (killed, or out of time) counts as one that failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from comind.git import all_paths, head_commit

from .session import write_atomic

if TYPE_CHECKING:
    import pygit2

    from comind.records import Record
    from comind.workspace import Workspace

VERSION = 6  # 2: an entry is verified at head only where its subject was found there; 3: `anchored`; 4: `confirmed`
# 5: an entry is on a subject found at head before one gone; 6: a place says how it was anchored, if found at head
DIGEST_KINDS = ("constraint", "attempt")  # the session digest: what holds, and what was tried and undone
REMOTE_FRESH = 300  # seconds a view over a remote store is trusted (it has no cheap change mark)
LOCK_STALE = 3600  # seconds a background refresh may run: then it ends itself (Windows: it is taken over)
LOCK_UNWRITTEN = 60  # (Windows) seconds a refresh lock without its pid yet is taken to be held
RETRY_AFTER = 300  # seconds a failed refresh is not started again for the state it failed on (it may pass)
UNFINISHED = "the last refresh ended without finishing (killed?)"
WAIT = 2.0  # seconds a hook waits for a view being made, then answers without it (agents allow 10 s)
LEDGER_SUBDIRS = ("_ledger/inbox", "_ledger/snapshots", "_ledger/erased")


def hooks_dir(git_dir: Path) -> Path:
    return git_dir / "comind" / "hooks"


class View:
    """(A plain class: the hooks read it, and `dataclasses` costs a hook call ~10 ms to import.)"""

    def __init__(
        self,
        head: str,
        marks: list[str],
        built: float,
        entries: dict[str, dict[str, Any]] | None = None,
        places: dict[str, list[list[str]]] | None = None,
        digest: list[str] | None = None,
        checks: dict[str, dict[str, Any]] | None = None,
        checked: dict[str, list[str]] | None = None,
        spans: dict[str, list[Any]] | None = None,
        suppressions: list[dict[str, Any]] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.head = head
        self.marks = marks
        self.built = built
        self.entries: dict[str, dict[str, Any]] = entries or {}  # id -> Entry.to_json()
        # path -> [[id, symbol or "", its anchor as written where that differs, head where found there, else ""]]
        self.places: dict[str, list[list[str]]] = places or {}
        self.digest: list[str] = digest or []
        self.checks: dict[str, dict[str, Any]] = checks or {}  # id -> record data: must, compiled
        self.checked: dict[str, list[str]] = checked or {}  # path at head -> ids of checks reading it
        # path -> [blake3 of its text at HEAD, [[qualname, start, end], …]]: an edit of a file as it
        # is at HEAD finds what it touches without parsing it (no tree-sitter import, 0.1 s)
        self.spans: dict[str, list[Any]] = spans or {}
        self.suppressions: list[dict[str, Any]] = suppressions or []
        self.warnings: list[str] = warnings or []

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, **self.__dict__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> View:
        data = dict(data)
        data.pop("version", None)
        return cls(**data)


def ledger_marks(ws: Workspace) -> list[str]:
    """A cheap mark of each ledger source's state: the mtimes of a local store's folders (as the
    store's change token, read without importing the store: 0.13 s), "remote" for others."""
    roots = [
        _local_root(str(ws.config.store), ws.root),
        ws.git_dir / "comind/harvest",
        ws.git_dir / "comind/harvest-branch",
    ]
    marks = []
    for root in roots:
        if root is None:
            marks.append("remote")
            continue
        parts = []
        for sub in LEDGER_SUBDIRS:
            try:
                parts.append(str(os.stat(root / sub).st_mtime_ns))
            except OSError:
                parts.append("-")
        marks.append(":".join(parts))
    return marks


def _local_root(url: str, base: Path) -> Path | None:
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in ("", "file"):
        return None
    path = Path(url[len("file://") :] if scheme else url)
    return path if path.is_absolute() else base / path


def load(ws: Workspace) -> View | None:
    try:
        data = json.loads((hooks_dir(ws.git_dir) / "view.json").read_text(encoding="utf-8"))
        return View.from_json(data) if data.get("version") == VERSION else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None  # missing or unreadable: it is a cache, made again


def staleness(ws: Workspace, view: View) -> str:
    """Why the view may be behind ("" when it is not)."""
    head = head_commit(ws.head_dir, ws.git_dir) or ""
    if head and not ws.harvest_state.exists():  # (the refresh harvests first; no commit, no history)
        return "nothing harvested here yet: the history is read into records"
    if head != view.head:
        return f"HEAD moved to {head[:7]} since this view was made at {view.head[:7]}"
    marks = ledger_marks(ws)
    if marks != view.marks:
        return "the ledger changed since this view was made"
    if "remote" in marks and time.time() - view.built > REMOTE_FRESH:
        return "the shared store may have changed since this view was made"
    return ""


def save(ws: Workspace, view: View) -> None:
    """Write the view; a refresh's failure mark goes with it (the refresh it told of succeeded)."""
    folder = hooks_dir(ws.git_dir)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "view.json", json.dumps(view.to_json(), separators=(",", ":")))
    (folder / "refresh.failed").unlink(missing_ok=True)


def refresh_in_background(ws: Workspace) -> bool:
    """Start `comind hook refresh` detached, unless one is running or a failure stands; whether one
    was started. A lock left by a refresh that ended without finishing is that refresh's failure."""
    lock = hooks_dir(ws.git_dir) / "refresh.lock"
    held = take_lock(lock)
    return held is not None and start_refresh(ws, lock, held)


def take_lock(lock: Path) -> tuple[int, str] | None:
    """Hold the refresh lock: (its descriptor, what a refresh that held it before left in it, "" when
    none); None while a refresh holds it. POSIX: a kernel lock (flock) on `refresh.lock`, which the
    refresh holds for its life and the kernel lets go however it ends: no pid to judge, and of two
    calls only one can hold it. Windows, or a file system without flock: the file created
    exclusively, taken over after LOCK_STALE."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    if os.name == "nt":
        return _take_by_age(lock)
    import errno
    import fcntl

    for _ in range(3):
        try:
            fd, made = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            fd, made = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644), False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            held = e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)  # a refresh holds it; else no flock here
            if not held and made:
                return fd, ""  # (ENOLCK, EOPNOTSUPP…: held as on Windows, the file made exclusively)
            os.close(fd)
            return None if held else _take_by_age(lock)
        if _same_file(fd, lock):
            return fd, os.read(fd, 4096).decode("utf-8", "replace").strip()
        os.close(fd)  # removed meanwhile by the refresh that held it, which ended: take the one there now
    return None


def _take_by_age(lock: Path) -> tuple[int, str] | None:
    left = ""
    try:
        left = lock.read_text(encoding="utf-8").strip()
        if time.time() - lock.stat().st_mtime > (LOCK_STALE if left else LOCK_UNWRITTEN):
            lock.unlink()
        else:
            left = ""
    except (OSError, UnicodeDecodeError):
        left = ""
    try:
        return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644), left
    except OSError:
        return None


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def start_refresh(ws: Workspace, lock: Path, held: tuple[int, str]) -> bool:
    """Given the lock `take_lock` holds: count a refresh that left it as failed, then start one
    unless a failure stands; whether one was started. The lock then holds `pid head`, and the
    refresh holds the lock (POSIX: passed to it, ended with it)."""
    fd, left = held
    started = False
    try:
        if was_for := left.partition(" ")[2]:  # a refresh started for that HEAD never removed it: killed?
            record_failure(ws, was_for, UNFINISHED)
        if not failure(ws):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            head = head_commit(ws.head_dir, ws.git_dir) or ""
            started = _spawn(ws, fd, head)
    finally:
        if not started:
            release(lock, fd)
        else:
            os.close(fd)
    return started


def _spawn(ws: Workspace, fd: int, head: str) -> bool:
    import subprocess  # here: 20 ms to import, and only a view that is behind needs it
    import sys

    code = "import sys\nfrom comind.cli import main\nsys.exit(main(sys.argv[1:]))"
    posix = os.name != "nt"
    command = [sys.executable, "-c", code, "-q", "-C", str(ws.root), "hook", "refresh"]
    try:
        child = subprocess.Popen(
            [*command, *(["--lock-fd", str(fd)] if posix else ["--release-lock"])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            pass_fds=(fd,) if posix else (),
        )
    except OSError:
        return False
    os.write(fd, f"{child.pid} {head}".encode())  # (at 0: truncated, and read before)
    return True


def keep_from_forks(fd: int) -> None:
    """A process forked from this one (the harvest's anchor worker) closes the lock `fd` at once: the
    lock goes when the refresh does, not when a worker it left behind ends."""

    def close() -> None:
        with contextlib.suppress(OSError):
            os.close(fd)

    os.register_at_fork(after_in_child=close)


def release(lock: Path, fd: int | None = None) -> None:
    """Remove the refresh lock if it is this process's, then let it go: the file `fd` holds (POSIX),
    else the one holding this pid (or none yet); never one another refresh made meanwhile."""
    try:
        if fd is None:
            mine = lock.read_text(encoding="utf-8").partition(" ")[0].strip() in (str(os.getpid()), "")
        else:
            mine = _same_file(fd, lock)
            if os.name == "nt":
                os.close(fd)
                fd = None
        if mine:  # (POSIX: removed while held, so a call that opened it meanwhile finds it gone)
            lock.unlink()
    except (OSError, UnicodeDecodeError):
        pass
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _state(ws: Workspace) -> list[str]:
    """What a refresh's outcome depends on besides HEAD: the ledger's marks, the store and the
    configuration file's mtime (a store fixed there, or in COMIND_STORE, is tried at once). The
    store as a digest: a URL refused for the credentials it carries is kept nowhere."""
    from blake3 import blake3

    from comind.config import CONFIG_FILE

    try:
        config = str(os.stat(ws.root / CONFIG_FILE).st_mtime_ns)
    except OSError:
        config = "-"
    store = blake3(str(ws.config.store).encode("utf-8", "surrogatepass")).hexdigest(length=16)
    return [*ledger_marks(ws), store, config]


def record_failure(ws: Workspace, head: str, reason: str) -> None:
    """Keep why the refresh for `head` failed (one line, as the command printed it), with the state
    it left: what `failure` reads, and what a refresh that succeeds removes (`save`)."""
    folder = hooks_dir(ws.git_dir)
    folder.mkdir(parents=True, exist_ok=True)
    data = {"head": head, "state": _state(ws), "at": time.time(), "reason": reason}
    write_atomic(folder / "refresh.failed", json.dumps(data))


def failure(ws: Workspace) -> str:
    """Why the last refresh failed, while that stands: for this HEAD and state, less than
    RETRY_AFTER seconds ago; "" otherwise (the next hook call starts a refresh)."""
    try:
        data = json.loads((hooks_dir(ws.git_dir) / "refresh.failed").read_text(encoding="utf-8"))
        age = time.time() - float(data["at"])
        reason = str(data["reason"]) or "no reason given"
        if not 0 <= age < RETRY_AFTER or data["head"] != (head_commit(ws.head_dir, ws.git_dir) or ""):
            return ""
    except (OSError, ValueError, TypeError, KeyError):
        return ""  # none, or unreadable: try again
    return reason if data.get("state") == _state(ws) else ""


def building(ws: Workspace) -> View | None:
    """No view yet (a first use, a new view format): start a refresh and wait for its view at most
    WAIT seconds; None when it is still being made (or failed). A call that finds a refresh running
    waits for none: the one that started it waited already."""
    if not refresh_in_background(ws):
        return None
    lock = hooks_dir(ws.git_dir) / "refresh.lock"
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        time.sleep(0.05)
        view = load(ws)
        if view is not None or not lock.exists():  # made, or the refresh ended without one
            return view if view is not None else load(ws)
    return None


# -- building ----------------------------------------------------------------------------------


def refreshed(ws: Workspace) -> View:
    """Harvest what git has new (nothing to read costs ~30 ms; a first harvest, seconds), then
    `build`: a revert the agent just committed is shown from its next edit on."""
    from comind.harvest.run import harvest

    if ws.head():
        harvest(ws)
    return build(ws)


def build(ws: Workspace) -> View:
    """Derive every record's status at HEAD (the slow part) and keep what hooks may show: T2 and
    above, active or stale, each with where its anchors are now."""
    from comind.anchoring import Anchorer
    from comind.query import open_ledger, statuses

    from ..entries import MIN_TRUST, SURFACED, agent_trust, entry_of, person_confirmed

    marks = ledger_marks(ws)  # before reading: a write meanwhile makes the next call refresh again
    head = ws.head() or ""
    view = View(head=head, marks=marks, built=time.time())
    if not head:
        return view
    ledger = open_ledger(ws)
    records = [r for r in ledger.all() if r.kind != "relation"]
    derived = statuses(ws, ledger, records)
    confirmed = person_confirmed(ledger.relations())
    index = ws.index
    snapshot = index.snapshot(head)
    anchorer = Anchorer(index, ws.config.drift_threshold)
    digest = []
    for record in records:
        status = derived[record.id]
        if record.kind == "suppression":
            if status.state not in ("retracted", "superseded", "quarantined"):
                view.suppressions.append(record.data)
            continue
        trust = agent_trust(record, status, record.id in confirmed)
        if status.state not in SURFACED or trust < MIN_TRUST:
            continue
        for place, *named in _places(record, anchorer, snapshot):
            view.places.setdefault(place, []).append([record.id, *named])
        entry = entry_of(
            record,
            status,
            confirmed=record.id in confirmed,
            why=_digest_why(record),
            snapshot=snapshot,
            anchorer=anchorer,
        )
        view.entries[record.id] = entry.to_json()
        if record.kind in DIGEST_KINDS:
            digest.append(record)
        if record.kind == "constraint" and record.fields.get("severity") == "must" and "check" in record.fields:
            view.checks[record.id] = record.data
    anchorer.flush()
    _spans(view, snapshot)
    view.digest = [r.id for r in sorted(digest, key=lambda r: _digest_order(r, view.entries[r.id], head))]
    tree = cast("pygit2.Tree", ws.index.repo[snapshot.tree])
    _checked_paths(ws, view, all_paths(tree))  # every file: a manifest is none the index reads
    return view


def _spans(view: View, snapshot: Any) -> None:
    from blake3 import blake3

    for path, pairs in view.places.items():
        if path.endswith("/") or path not in snapshot.files or not any(symbol for _, symbol, *_ in pairs):
            continue
        try:
            data = snapshot.blob_data(path)
        except KeyError:
            continue
        spans = [[d.qualname, d.start_line, d.end_line] for d in snapshot.definitions(path)]
        view.spans[path] = [blake3(data).hexdigest(), spans]


def _places(record: Record, anchorer: Any, snapshot: Any) -> list[tuple[str, str, str, str]]:
    """(path, symbol or "", its name as anchored where that differs, the commit it is found at) of
    each anchor with a path: where it is at HEAD when it can be followed there, else as written; an
    edit there is said to be on it under that name (`answer.on_edit`)."""
    from ..entries import exists, folder_exists, followed, name_of

    out: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for anchor in record.anchors:
        if not anchor.get("path"):
            continue
        path, symbol = followed(anchor, snapshot, anchorer)
        was = name_of(anchor)
        if path.endswith("/"):
            found = folder_exists(snapshot, path)
        else:
            found = exists(snapshot, path) and (not symbol or snapshot.find(path, symbol) is not None)
        now = f"{path}::{symbol}" if symbol else path
        out.setdefault((path, symbol), (path, symbol, "" if was == now else was, snapshot.commit if found else ""))
    return list(out.values())


def _digest_why(record: Record) -> str:
    if record.kind == "attempt":
        return f"a dead end in this repository ({record.fields.get('outcome', 'undone')})"
    if record.kind == "constraint":
        return f"a {record.fields.get('severity', 'should')} constraint in this repository"
    return ""


def _digest_order(record: Record, entry: dict[str, Any], head: str) -> tuple[bool, int, int, bool, int, str]:
    from datetime import UTC, datetime

    from ..entries import tooling_only

    kind = DIGEST_KINDS.index(record.kind)
    must = 0 if record.fields.get("severity") == "must" else 1
    newest = -int(datetime.fromisoformat(record.created_at.replace("Z", "+00:00")).astimezone(UTC).timestamp())
    # A dead end only in dependencies, manifests or CI and hook configuration (a reverted bot bump)
    # tells an agent little about the code it edits, nor does a record shown by code gone from HEAD
    # (its subject not found there): after the others, so they cannot crowd them out.
    tooling = record.kind == "attempt" and tooling_only(record)  # (as `preflight --plan` ranks them)
    gone = entry.get("verified_at") != head
    return (tooling or gone, -int(entry["trust"]), kind * 2 + must, entry.get("status") != "active", newest, record.id)


# An edit's records, what it can break or re-propose first: `must` constraints, other constraints,
# dead ends, then what explains the code; within a kind the higher trust, the live code, the nearer anchor.
EDIT_ORDER = ("must", "constraint", "attempt", "decision", "gotcha", "intent", "question")


def edit_order(entry: dict[str, Any], nearness: int) -> tuple[int, int, bool, int]:
    """The sort key of a record shown on an edit; `nearness`: 0 on a symbol it touches, 1 on its
    file, 2 on a folder holding it."""
    kind = str(entry.get("kind", ""))
    kind = "must" if kind == "constraint" and entry.get("severity") == "must" else kind
    rank = EDIT_ORDER.index(kind) if kind in EDIT_ORDER else len(EDIT_ORDER)
    return (rank, -int(entry.get("trust", 0)), entry.get("status") != "active", nearness)


def _checked_paths(ws: Workspace, view: View, files: Iterable[str]) -> None:
    """Which files at HEAD each `must` check reads, so an edit elsewhere runs none of them."""
    if not view.checks:
        return
    from comind.checks.context import CheckContext
    from comind.checks.interface import CheckError
    from comind.records import Record

    ctx = CheckContext(ws.index, work_tree=ws.root)
    paths = list(files)
    for record_id, data in list(view.checks.items()):
        try:
            check = compiled(Record(data))
        except CheckError as exc:
            view.warnings.append(str(exc))
            del view.checks[record_id]
            continue
        for path in paths:
            if applies(check, ctx, path):
                view.checked.setdefault(path, []).append(record_id)


def compiled(record: Record) -> Any:
    from comind.checks.types import check_of

    return check_of(record)


def applies(check: Any, ctx: Any, path: str) -> bool:
    """Whether an edit of `path` can change the check's result: the files a file-local check
    reads (`wants`), else what the check type says changes it."""
    wants = getattr(check, "wants", None)
    if callable(wants):
        return bool(wants(path))
    return bool(check.affected_by(ctx, [path]))
