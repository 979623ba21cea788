"""Shared pieces of the benchmarks: a row of figures, best-of timing, timed subprocesses, the table."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


@dataclass
class Row:
    measure: str
    comind: float | None
    peer_name: str = ""
    peer: float | None = None
    unit: str = "s"
    note: str = ""
    area: str = ""
    target: str = ""
    rss: float | None = None  # peak RSS of comind's side, MiB
    peer_rss: float | None = None  # of the peer's

    @property
    def ratio(self) -> str:
        return f"{self.comind / self.peer:.2f}×" if self.peer and self.comind is not None else ""


def best_of(run: Callable[[], float | None], repeat: int = 3) -> float:
    """Best wall time of `repeat` runs; `run` may return its own figure, else it is timed here."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        own = run()
        times.append(own if own is not None else time.perf_counter() - start)
    return min(times)


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:,.1f} {unit}"


def header() -> str:
    from comind import __version__

    return (
        f"comind {__version__} · Python {platform.python_version()} · {platform.machine()} · "
        f"{datetime.now(UTC):%Y-%m-%d}"
    )


def print_table(title: str, rows: list[Row]) -> None:
    print(f"\n### {title} ({header()})\n")
    print("| measure | comind | peer | peer figure | ratio | note |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = [r.measure, fmt(r.comind, r.unit), r.peer_name, fmt(r.peer, r.unit), r.ratio, r.note]
        print("| " + " | ".join(cells) + " |")


# --- timed subprocesses --------------------------------------------------------------------------

TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


@dataclass
class Timed:
    wall: float  # seconds, measured here (includes process start-up)
    rss: float | None  # peak RSS of the process, MiB (None without /usr/bin/time)
    stdout: bytes
    returncode: int


def run_timed(
    cmd: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> Timed:
    """Run ``cmd``; its wall time and peak RSS.

    The peak RSS comes from /usr/bin/time: Linux carries a process's maxrss across fork and exec,
    so wait4() on a child of this (large) process would report at least this process's size.
    """
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss_file:
        full = [TIME, "-f", "%M", "-o", rss_file.name, *cmd] if TIME else list(cmd)
        start = time.perf_counter()
        done = subprocess.run(
            full, cwd=cwd, env=dict(env) if env is not None else None, capture_output=True, check=False
        )
        wall = time.perf_counter() - start
        rss = None
        if TIME:
            try:
                rss = int(Path(rss_file.name).read_text().split()[-1]) / 1024
            except (ValueError, IndexError):
                rss = None
    if check and done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} exited {done.returncode}: {done.stderr.decode(errors='replace').strip()[-500:]}"
        )
    return Timed(wall, rss, done.stdout, done.returncode)


def best_timed(run: Callable[[], Timed | tuple[float, float | None]], repeat: int) -> tuple[float, float | None]:
    """(best wall, highest peak RSS) over ``repeat`` runs; ``run`` returns a Timed or (seconds, MiB)."""
    walls: list[float] = []
    peak: float | None = None
    for _ in range(repeat):
        got = run()
        wall, rss = (got.wall, got.rss) if isinstance(got, Timed) else got
        walls.append(wall)
        if rss is not None:
            peak = max(peak or 0.0, rss)
    return min(walls), peak


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for timing the CLI as users run it: byte-code caches written and read
    (PYTHONDONTWRITEBYTECODE unset), no progress bars, no semgrep network."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(CI="1", SEMGREP_SEND_METRICS="off", SEMGREP_ENABLE_VERSION_CHECK="0")
    env.update(extra)
    return env


def tool(name: str, python_sibling: bool = True) -> str | None:
    """An executable on PATH or next to the running Python (a venv's bin), else None."""
    import sys

    found = shutil.which(name)
    if found:
        return found
    sibling = Path(sys.executable).with_name(name)
    return str(sibling) if python_sibling and sibling.exists() else None
