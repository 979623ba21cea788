"""What one agent session was already shown (each record at most once per session), kept in
`.git/comind/hooks/sessions/<hash of the session id>.json`, written atomically, bounded, pruned."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from blake3 import blake3

MAX_SHOWN = 5000  # record ids remembered per session
MAX_PENDING = 32  # before-edit answers waiting for their after-edit
KEEP_SESSIONS = 64  # session files kept; older ones go first
MAX_AGE = 14 * 86400  # seconds a session file is kept after its last use


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename it over `path`: a reader
    sees the old file or the new one, never half of one."""
    try:  # the file's own mode (a settings file), else what a new file gets
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o666
    # a name no other writer picks (not tempfile: 20 ms to import, on every hook call)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{time.time_ns()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        if mode != 0o666:
            os.chmod(tmp, mode)  # exactly the old file's mode, whatever the umask
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class Session:
    def __init__(self, path: Path, shown: list[str] | None = None, pending: dict[str, list[str]] | None = None) -> None:
        self.path = path
        self.shown: list[str] = shown if shown is not None else []
        self.pending: dict[str, list[str]] = pending if pending is not None else {}

    @classmethod
    def load(cls, folder: Path, session_id: str) -> Session:
        # hashed: a session id is the agent's text, never a path
        name = blake3(session_id.encode("utf-8", "surrogatepass")).hexdigest(length=16)
        path = folder / "sessions" / f"{name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            shown = [str(i) for i in data.get("shown", [])]
            pending = {str(k): [str(i) for i in v] for k, v in dict(data.get("pending", {})).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            shown, pending = [], {}
        return cls(path, shown, pending)

    def seen(self) -> set[str]:
        return set(self.shown)

    def mark(self, ids: list[str]) -> None:
        self.shown = list(dict.fromkeys([*self.shown, *ids]))[-MAX_SHOWN:]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.pending = dict(list(self.pending.items())[-MAX_PENDING:])
        write_atomic(self.path, json.dumps({"shown": self.shown, "pending": self.pending}))


def prune(folder: Path, now: float | None = None) -> int:
    """Drop session files unused for MAX_AGE, and the oldest beyond KEEP_SESSIONS; how many went."""
    now = now or time.time()
    try:
        files = sorted((p.stat().st_mtime, p) for p in (folder / "sessions").glob("*.json"))
    except OSError:
        return 0
    doomed = [p for n, (mtime, p) in enumerate(files) if now - mtime > MAX_AGE or n < len(files) - KEEP_SESSIONS]
    for path in doomed:
        path.unlink(missing_ok=True)
    return len(doomed)
