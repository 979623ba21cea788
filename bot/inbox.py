"""The webhook server's durable inbox: an event is accepted only once it is on disk, is handled
once per delivery id and once per signed body, and waits there across a crash or a restart.

Layout under the inbox directory (``.git/comind/webhooks`` for ``comind bot serve``)::

    incoming/<random>.part  a body being received; cleared at start
    queue/<key>             accepted, not yet handled: one JSON header line, then the raw body
    done/<key>              an empty marker: this delivery was handled (kept ``keep_days``)
    failed/<key>            an event whose handler raised, kept ``keep_days`` for a person to read
    bodies/<sha256>         an empty marker: a body with this hash was accepted (kept ``keep_days``)

``<key>`` is a hash of the forge and the delivery id. A body is linked into ``queue/`` only after
an fsync, and ``link`` refuses to replace a file, so two copies of one delivery cannot both be
queued; one whose ``done/`` marker exists is dropped. The delivery id is not signed, so a captured
delivery sent again under a new id is caught by its body's marker instead. Handling is at least
once: a crash between a handler's return and its ``done/`` marker handles that event again at the
next start.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from comind.errors import ComindError
from comind.sanitize import each_string, redact_secrets

try:  # one server per inbox; without fcntl (Windows) the lock is not taken
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

KEEP_DAYS = 7.0  # GitHub redelivers from the last 3 days, GitLab resends from the last 2


class InboxFull(Exception):
    """The queue holds ``capacity`` events already."""


@dataclass(frozen=True)
class Event:
    key: str
    forge: str
    event: str
    delivery: str
    received: int  # time.time_ns() when the request began
    body: bytes


def delivery_key(forge: str, delivery: str) -> str:
    return hashlib.sha256(f"{forge}\0{delivery}".encode()).hexdigest()[:40]


class Spool:
    """A body being received: written to ``incoming/`` as it arrives, never held in memory."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header
        self.size = 0
        self._digest = hashlib.sha256()
        self._file: IO[bytes] = open(path, "xb")  # noqa: SIM115 - closed by commit() or discard()
        self._file.write(json.dumps(header, sort_keys=True).encode() + b"\n")
        self._offset = self._file.tell()

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self._digest.update(chunk)
        self.size += len(chunk)

    @property
    def digest(self) -> str:
        """The SHA-256 of the body as received: the bytes the signature covers."""
        return self._digest.hexdigest()

    @property
    def delivery(self) -> str:
        """The delivery id, or for a request without one its body's hash (an identical body
        sent twice is one delivery)."""
        return str(self.header["delivery"]) or "sha256:" + self.digest

    def body(self) -> bytes:
        self._file.flush()
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            return f.read()

    def redact(self) -> None:
        """Take the secrets out of the body before it is kept: an event waits on disk, and a failed
        one stays for days. Called once the signature is verified (it covers the raw bytes); what
        is not JSON is left for the handler to refuse."""
        try:
            payload = json.loads(self.body())
        except (ValueError, RecursionError):
            return
        clean = each_string(payload, redact_secrets)
        if clean != payload:
            self._file.seek(self._offset)
            self._file.truncate()
            self._file.write(json.dumps(clean).encode())

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def discard(self) -> None:
        self._file.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class Inbox:
    """Accepted webhook events on disk, in arrival order, each delivery once."""

    def __init__(self, root: Path, capacity: int = 10_000, keep_days: float = KEEP_DAYS) -> None:
        self.root = root
        self.capacity = capacity
        self.keep_days = keep_days
        self.incoming, self.queue, self.done, self.failed, self.bodies = (
            root / name for name in ("incoming", "queue", "done", "failed", "bodies")
        )
        try:
            for path in (self.incoming, self.queue, self.done, self.failed, self.bodies):
                path.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(root / "lock", "a+b")  # noqa: SIM115 - held for the inbox's life
        except OSError as exc:
            raise ComindError(f"bot serve: cannot use {root} for the webhook queue: {exc.strerror}") from exc
        if fcntl is not None:
            try:
                fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                self._lock_file.close()
                raise ComindError(f"bot serve: another server is using the webhook queue in {root}") from exc
        for part in self.incoming.iterdir():  # bodies cut off by a crash: never acknowledged
            part.unlink()
        self._mutex = threading.Lock()
        self._pending = {path.name for path in self.queue.iterdir()}
        self.prune()

    def close(self) -> None:
        self._lock_file.close()

    def __len__(self) -> int:
        with self._mutex:
            return len(self._pending)

    def full(self) -> bool:
        return len(self) >= self.capacity

    def spool(self, forge: str, event: str, delivery: str) -> Spool:
        header = {"forge": forge, "event": event, "delivery": delivery, "received": time.time_ns()}
        return Spool(self.incoming / f"{uuid.uuid4().hex}.part", header)

    def commit(self, spool: Spool) -> str | None:
        """Make a received body durable and queue it: its key, or None for a delivery already
        queued or handled, or a body accepted before under another delivery id (a replay: the id
        is not signed). Raises InboxFull when the queue is at capacity."""
        key = delivery_key(spool.header["forge"], spool.delivery)
        digest = spool.digest  # of the body as signed, before redact() rewrites it
        try:
            spool.redact()
            spool.sync()
            with self._mutex:
                if len(self._pending) >= self.capacity:
                    raise InboxFull
                try:
                    os.link(spool.path, self.queue / key)
                except FileExistsError:
                    return None
                if (self.done / key).exists() or not _first(self.bodies / digest):  # the worker drops it too
                    (self.queue / key).unlink()
                    return None
                self._pending.add(key)
            _sync_dir(self.queue)
            return key
        finally:
            spool.discard()

    def pending(self) -> list[str]:
        """Queued keys in arrival order (for the worker at start; an unreadable one first, for
        the worker to set aside)."""
        order = []
        for path in self.queue.iterdir():
            received = 0
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError), open(path, "rb") as f:
                received = int(json.loads(f.readline())["received"])
            order.append((received, path.name))
        return [key for _, key in sorted(order)]

    def load(self, key: str) -> Event | None:
        """The queued event (None: gone, or handled already)."""
        path = self.queue / key
        if (self.done / key).exists():
            self._forget(key, None)
            return None
        try:
            with open(path, "rb") as f:
                header = json.loads(f.readline())
                body = f.read()
        except FileNotFoundError:
            return None
        return Event(
            key, str(header["forge"]), str(header["event"]), str(header["delivery"]), int(header["received"]), body
        )

    def finish(self, key: str, *, failed: bool = False) -> None:
        """Mark a delivery handled (its marker first, so a crash in between cannot lose it)."""
        (self.done / key).touch()
        self._forget(key, self.failed / key if failed else None)

    def _forget(self, key: str, keep: Path | None) -> None:
        with contextlib.suppress(FileNotFoundError):
            if keep is None:
                (self.queue / key).unlink()
            else:
                os.replace(self.queue / key, keep)
        with self._mutex:
            self._pending.discard(key)

    def prune(self, now: float | None = None) -> int:
        """Drop done and body markers and failed events older than ``keep_days``."""
        cutoff = (time.time() if now is None else now) - self.keep_days * 86400
        dropped = 0
        for folder in (self.done, self.failed, self.bodies):
            for path in _entries(folder):
                with contextlib.suppress(FileNotFoundError):
                    if path.stat().st_mtime < cutoff:
                        path.unlink()
                        dropped += 1
        return dropped


def _first(marker: Path) -> bool:
    """Create an empty marker; False when it was there already."""
    try:
        marker.touch(exist_ok=False)
    except FileExistsError:
        return False
    return True


def _entries(folder: Path) -> Iterator[Path]:
    with contextlib.suppress(FileNotFoundError):
        yield from folder.iterdir()


def _sync_dir(path: Path) -> None:
    """A new name in ``path`` survives a power cut only once the directory is synced."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms that cannot open a directory
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
