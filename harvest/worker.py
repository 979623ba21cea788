"""Attempts' anchors found in a second process while the walk goes on.

A first harvest spends much of its time (docs/benchmarks.md) finding the definitions and
dependencies a reverted change touched (`HarvestContext.anchors`, `dependency_anchors`); nothing
else the walk decides reads them. With a second core idle, a forked process finds them while the walk reads on: the walk
hands each attempt over (what its anchors read: the files, their lines' numbers, the commits) and
keeps a `PendingRecord` in the record's place; after the walk each is made, in order, from its
anchors (the walk, done first, finds the last ones itself while the worker finishes the others).
The anchors are the same functions of the same commits, so the records are too: should a record
that was handed over not be made after all (a field the checks refuse), the harvest is read again
without the worker (`Diverged`), as it would have been.

`COMIND_HARVEST_WORKER=0` never starts one, `1` always does; by default one is started on Linux when
the machine has a core to spare (more than one, and a load average at least one below their number).
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import pickle
import queue
import signal
import struct
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from comind.errors import ComindError
from comind.records import Record

if TYPE_CHECKING:
    from comind.harvest.approach import Approach, Line

Anchors = list[dict[str, Any]]
_WORKER, _WALK = 1, 2  # who started a job (`AnchorWorker.claims`)
_CLAIMS = 1 << 20  # jobs either side may start; past them, the worker's
Find = Callable[["Approach", str, str], Anchors]  # (change, at, with_change) -> the attempt's anchors
_FRAME = struct.Struct("!I")
STALL = 60.0  # seconds without an answer after which the worker is given up


def allowed() -> bool:
    """Is a worker process worth starting (`COMIND_HARVEST_WORKER`, else a core to spare)? Only where
    a fork is (and, unasked, only on Linux: macOS's system libraries are not safe across one)."""
    setting = os.environ.get("COMIND_HARVEST_WORKER", "")
    if setting not in ("", "0", "1"):
        raise ComindError(f"COMIND_HARVEST_WORKER={setting!r}: expected 0 (never), 1 (always) or unset")
    if not hasattr(os, "fork") or setting == "0":
        return False
    if setting == "1":
        return True
    if not sys.platform.startswith("linux"):
        return False
    if threading.active_count() > 1:  # a fork copies no other thread, only the locks it holds
        return False
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return cores > 1 and load <= cores - 1


class Diverged(Exception):
    """A record handed over could not be made: the harvest is read again without a worker."""


class Later:
    """The anchors of one attempt, from the worker."""

    def __init__(self, worker: AnchorWorker, job: int, inline: Callable[[], Anchors]) -> None:
        self._worker, self._job, self._inline = worker, job, inline
        self._found: Anchors | None = None

    def take(self) -> bool:
        """Find them here, unless the worker has started on them (False)."""
        if not self._worker.claim(self._job):
            return False
        self._found = self._here()
        return True

    def get(self) -> Anchors:
        if self._found is not None:
            return self._found
        answered, anchors = self._worker.result(self._job)
        if not answered:  # the worker gone: found here, alike
            return self._here()
        if anchors is None:  # an error the walk would have met (and reported) there
            raise Diverged(f"job {self._job}")
        return anchors

    def _here(self) -> Anchors:
        try:
            return self._inline()
        except Exception as exc:
            raise Diverged(str(exc)) from exc


class PendingRecord(Record):
    """An attempt whose anchors the worker is finding: its id now, the record after the walk."""

    __slots__ = ("_anchors", "_make")

    def __init__(self, record_id: str, anchors: Later, make: Callable[[Anchors], Record | None]) -> None:
        super().__init__({"id": record_id})
        self._anchors, self._make = anchors, make

    def take(self) -> bool:
        return self._anchors.take()

    def resolve(self) -> Record:
        record = self._make(self._anchors.get())
        if record is None:
            raise Diverged(self.id)
        return record


def resolve(records: list[Record]) -> list[Record]:
    """The records, each pending one made (`Diverged` when one cannot be): the last ones' anchors
    found here, back to where the worker has come."""
    for record in reversed([r for r in records if isinstance(r, PendingRecord)]):
        if not record.take():
            break
    return [r.resolve() if isinstance(r, PendingRecord) else r for r in records]


class AnchorWorker:
    """A forked process running `find` (`HarvestContext.anchors` and `dependency_anchors`) for the
    attempts handed to it, in order, after `reopen` (a repository handle of its own, not the
    parent's); a thread of this process reads what it finds."""

    def __init__(self, find: Find, reopen: Callable[[], None]) -> None:
        """Fork the worker; OSError (nothing opened is left behind) when no process can be had."""
        fds = [*os.pipe(), *os.pipe()]
        jobs_r, jobs_w, results_r, results_w = fds
        self.claims = mmap.mmap(-1, _CLAIMS)  # shared: who started each job (0: neither yet)
        try:
            gc.freeze()  # (the child's copy of the heap stays shared while it runs)
            pid = os.fork()
        except OSError:
            for fd in fds:
                os.close(fd)
            self.claims.close()
            raise
        finally:
            gc.unfreeze()
        if pid == 0:  # the worker: never returns, whatever happens here
            try:
                os.close(jobs_w)
                os.close(results_r)
                _serve(find, reopen, self.claims, os.fdopen(jobs_r, "rb"), os.fdopen(results_w, "wb"))
            finally:
                os._exit(1)
        os.close(jobs_r)
        os.close(results_w)
        self.pid = pid
        self._results: dict[int, Anchors | None] = {}
        self._done = threading.Condition()
        self._ended = False
        self._sent = 0
        self._reader = threading.Thread(target=self._read, args=(os.fdopen(results_r, "rb"),), daemon=True)
        self._reader.start()
        # jobs are written by a thread of their own: a full pipe to a stuck worker never holds the walk
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write, args=(os.fdopen(jobs_w, "wb"),), daemon=True)
        self._writer.start()

    def submit(self, change: Approach, at: str, with_change: str, inline: Callable[[], Anchors]) -> Later:
        job = self._sent
        self._sent += 1
        files = [
            (f.path, f.old_path, f.status, f.binary, [ln.lineno for ln in f.removed], [ln.lineno for ln in f.added])
            for f in change.files
        ]
        self._queue.put((job, change.base, change.head, files, at, with_change))
        return Later(self, job, inline)

    def _write(self, jobs: BinaryIO) -> None:
        with contextlib.suppress(OSError):  # the worker gone: its results are found here when asked for
            while (job := self._queue.get()) is not None:
                _write(jobs, job)
        with contextlib.suppress(OSError):
            jobs.close()

    def claim(self, job: int) -> bool:
        """Take a job the worker has not started (both may take one at once: found twice, alike)."""
        if job >= _CLAIMS or self.claims[job]:
            return False
        self.claims[job] = _WALK
        return True

    def result(self, job: int) -> tuple[bool, Anchors | None]:
        """(whether the worker answered, the anchors it found: None for an error). A worker that
        answers nothing for `STALL` seconds is stopped, and the rest is found here: a harvest may be
        slower, never stuck (a fork can inherit a lock no thread will release)."""
        with self._done:
            while job not in self._results and not self._ended:
                if not self._done.wait(STALL) and job not in self._results and not self._ended:
                    self._stop()
            return job in self._results, self._results.pop(job, None)

    def _stop(self) -> None:
        self._ended = True
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        self._queue.put(None)  # no more jobs: the writer closes the pipe, the worker ends
        self._reader.join(STALL)
        if self._reader.is_alive():  # a worker that does not end when its jobs do: stuck
            self._stop()
            self._reader.join()
        self._writer.join(STALL)
        self.claims.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)

    def _read(self, results: BinaryIO) -> None:
        try:
            while (frame := _read(results)) is not None:
                job, anchors = frame
                with self._done:
                    self._results[job] = anchors
                    self._done.notify_all()
        finally:
            with self._done:
                self._ended = True
                self._done.notify_all()
            results.close()


def _write(out: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_FRAME.pack(len(data)) + data)
    out.flush()


def _read(stream: BinaryIO) -> Any:
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return None
    return pickle.loads(stream.read(_FRAME.unpack(head)[0]))


def _numbered(lines: list[int]) -> tuple[Line, ...]:
    from comind.harvest.approach import Line

    return tuple(Line(k, "", False) for k in lines)  # what anchors read of a line: its number


def _serve(find: Find, reopen: Callable[[], None], claims: mmap.mmap, jobs: BinaryIO, results: BinaryIO) -> None:
    """The worker's loop: each job's anchors, as the walk would have found them (None: an error,
    which the walk meets again)."""
    from comind.harvest.approach import Approach, FileChange

    status = 0
    try:
        reopen()
        while (job := _read(jobs)) is not None:
            n, base, head, files, at, with_change = job
            if n < _CLAIMS:
                if claims[n] == _WALK:  # the walk found them
                    continue
                claims[n] = _WORKER
            change = Approach(
                base,
                head,
                tuple(
                    FileChange(path, old, code, binary, added=_numbered(added), removed=_numbered(removed))
                    for path, old, code, binary, removed, added in files
                ),
            )
            try:
                anchors: Anchors | None = find(change, at, with_change)
            except Exception:  # the walk finds it again, and says what it was
                anchors = None
            _write(results, (n, anchors))
    except BaseException:  # a worker never unwinds into its parent's code
        status = 1
    finally:
        os._exit(status)
