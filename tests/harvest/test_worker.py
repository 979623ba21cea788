"""Attempts' anchors found by a worker process (`harvest.worker`): the same records as the walk
finding them itself. Real repositories in tmp folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from comind.harvest import worker
from comind.harvest.run import harvest
from comind.workspace import Workspace
from tests.harvest_repo import HarvestRepo

CARGO = '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nserde = "{v}"\n'
LOCK = 'version = 3\n\n[[package]]\nname = "serde"\nversion = "{v}"\nsource = "registry+x"\n'


def _history(tmp_path: Path) -> HarvestRepo:
    """Reverts of changes to definitions (one reverted twice, one only inserting, one a dependency bump)."""
    r = HarvestRepo(tmp_path / "repo")
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
    r.commit("root", {"a.py": body, "Cargo.toml": CARGO.format(v="1.0"), "Cargo.lock": LOCK.format(v="1.0.1")})
    logged = r.commit("Log f7's input", {"a.py": body.replace("def f7(x):\n", "def f7(x):\n    print(x)\n")})
    r.revert(logged)  # only inserts: anchored where it inserted (first: the worker finds it)
    for n in range(6):
        change = r.commit(f"Make f{n * 5} faster", {"a.py": body.replace(f"x + {n * 5}\n", f"x + {n * 5} + 0\n")})
        r.revert(change)
    bump = r.commit("Bump serde", {"Cargo.toml": CARGO.format(v="1.1"), "Cargo.lock": LOCK.format(v="1.1.0")})
    r.revert(bump)
    again = r.commit("Make f1 faster", {"a.py": body.replace("x + 1\n", "x + 1 + 0\n")})
    r.revert(again)
    return r


def _records(path: Path, setting: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.setenv("COMIND_HARVEST_WORKER", setting)
    shutil.rmtree(path / ".git" / "comind", ignore_errors=True)
    ws = Workspace(path)
    summary = harvest(ws).summary()
    records = {r.id: r.data for r in ws.harvest_store.iter_records()}
    return {"summary": summary, "records": records}


def test_a_worker_finds_the_anchors_the_walk_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _history(tmp_path)
    started: list[int] = []
    real = worker.AnchorWorker.__init__

    def counted(self: worker.AnchorWorker, *args: object) -> None:
        real(self, *args)  # type: ignore[arg-type]
        started.append(self.pid)

    monkeypatch.setattr(worker.AnchorWorker, "__init__", counted)
    alone = _records(r.path, "0", monkeypatch)
    assert not started
    assert _records(r.path, "1", monkeypatch) == alone
    assert len(started) == 1
    anchors = [a for data in alone["records"].values() for a in data.get("anchors", [])]  # type: ignore[attr-defined]
    assert {a.get("symbol") for a in anchors} >= {"f0", "f5", "f1", "f7"} and any(a.get("dep") for a in anchors)


def test_a_record_not_made_after_all_reads_the_history_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the walk alone would have skipped it, before `_remember` kept its subject."""
    r = _history(tmp_path)
    alone = _records(r.path, "0", monkeypatch)
    calls: list[int] = []
    real = worker.resolve

    def once(records: list[object]) -> list[object]:
        calls.append(1)
        if len(calls) == 1:
            raise worker.Diverged("a field the checks refuse")
        return real(records)  # type: ignore[arg-type]

    monkeypatch.setattr(worker, "resolve", once)
    assert _records(r.path, "1", monkeypatch) == alone
    assert len(calls) == 1  # the second reading had no worker


def test_a_branch_read_again_counts_what_the_default_branch_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch's records diverge after the default branch's were written: the summary still
    counts those, as one reading alone would have."""
    r = _history(tmp_path)
    r.checkout("-q", "-b", "topic")
    r.revert(r.commit("Make f2 faster", {"a.py": (r.path / "a.py").read_text().replace("x + 2\n", "x + 2 + 0\n")}))
    alone = _records(r.path, "0", monkeypatch)
    calls: list[int] = []
    real = worker.resolve

    def second(records: list[object]) -> list[object]:
        calls.append(1)
        if len(calls) == 2:  # the branch's walk, after the default branch's records were written
            raise worker.Diverged("a field the checks refuse")
        return real(records)  # type: ignore[arg-type]

    monkeypatch.setattr(worker, "resolve", second)
    again = _records(r.path, "1", monkeypatch)
    assert again == alone and len(calls) == 2
    written = alone["summary"]["written"]  # type: ignore[index]
    assert written > len(alone["records"])  # type: ignore[arg-type]  # the default branch's, and the branch's


def test_a_worker_gone_leaves_the_walk_to_find_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _history(tmp_path)
    alone = _records(r.path, "0", monkeypatch)

    def gone(*args: object) -> None:
        import os

        os._exit(0)

    monkeypatch.setattr(worker, "_serve", gone)
    assert _records(r.path, "1", monkeypatch) == alone


def test_a_worker_runs_with_a_core_to_spare(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMIND_HARVEST_WORKER", raising=False)
    monkeypatch.setattr("threading.active_count", lambda: 2)  # another thread: a fork would copy its locks
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (0.5, 0.5, 0.5))
    assert not worker.allowed()
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (0.5, 0.5, 0.5))
    assert worker.allowed()
    monkeypatch.setattr("os.getloadavg", lambda: (1.6, 1.5, 1.5))
    assert not worker.allowed()
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    monkeypatch.setattr("os.getloadavg", lambda: (0.0, 0.0, 0.0))
    assert not worker.allowed()
    monkeypatch.setenv("COMIND_HARVEST_WORKER", "1")
    assert worker.allowed()
    monkeypatch.delenv("COMIND_HARVEST_WORKER")
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    monkeypatch.setattr("sys.platform", "darwin")
    assert not worker.allowed()


def test_the_walk_finds_what_the_worker_has_not_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Done with its walk, the walk finds the last attempts' anchors itself, back to where the
    worker has come (here: nowhere; a worker that answered nothing would be waited for forever)."""
    import os
    import signal

    r = _history(tmp_path)
    alone = _records(r.path, "0", monkeypatch)

    def idle(find: object, reopen: object, claims: object, jobs: object, results: object) -> None:
        while worker._read(jobs) is not None:  # type: ignore[arg-type]
            pass
        os._exit(0)

    def late(signum: int, frame: object) -> None:
        raise TimeoutError("waited for the worker")

    monkeypatch.setattr(worker, "_serve", idle)
    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(60)
    try:
        assert _records(r.path, "1", monkeypatch) == alone
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_worker_that_stalls_is_given_up_and_the_walk_finds_the_anchors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked worker that never answers (a lock it inherited, held forever) costs `STALL` seconds,
    never the harvest: the walk finds what it was given, alike."""
    import time

    r = _history(tmp_path)
    alone = _records(r.path, "0", monkeypatch)

    def stuck(*args: object) -> None:
        time.sleep(3600)

    monkeypatch.setattr(worker, "_serve", stuck)
    monkeypatch.setattr(worker, "STALL", 0.5, raising=False)
    started = time.monotonic()
    assert _records(r.path, "1", monkeypatch) == alone
    assert time.monotonic() - started < 60


def test_no_process_to_spare_finds_the_anchors_here_and_leaves_nothing_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    r = _history(tmp_path)
    alone = _records(r.path, "0", monkeypatch)

    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(worker.os, "fork", refused)
    before = len(os.listdir("/proc/self/fd"))
    assert _records(r.path, "1", monkeypatch) == alone
    assert len(os.listdir("/proc/self/fd")) <= before


def test_handing_over_never_waits_on_a_stuck_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs far beyond a pipe's buffer, to a worker that never reads them: `submit` returns at once,
    and `close` gives the worker up after `STALL`."""
    import time

    from comind.harvest.approach import Approach, FileChange, Line

    monkeypatch.setattr(worker, "STALL", 0.5)
    stuck = worker.AnchorWorker(lambda change, at, with_change: [], lambda: time.sleep(3600))
    removed = tuple(Line(n, "", False) for n in range(200))
    change = Approach(
        "a" * 40, "b" * 40, tuple(FileChange(f"f{i}.py", None, "M", False, removed=removed) for i in range(100))
    )
    started = time.monotonic()
    for _ in range(20):
        stuck.submit(change, "a" * 40, "b" * 40, lambda: [])
    assert time.monotonic() - started < 5
    stuck.close()
    assert time.monotonic() - started < 30


def test_a_setting_that_is_neither_0_nor_1_is_refused_by_name(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    r = _history(tmp_path)
    monkeypatch.setenv("COMIND_HARVEST_WORKER", "yes")
    result = cli(r.path, "harvest")
    assert result.code == 2 and "COMIND_HARVEST_WORKER='yes'" in result.err
    assert not (r.path / ".git" / "comind").exists() or not any((r.path / ".git" / "comind").rglob("*.json"))
