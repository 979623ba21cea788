"""Shared pieces of the benchmarks: a row of figures, best-of timing, the table."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass
class Row:
    measure: str
    comind: float
    peer_name: str = ""
    peer: float | None = None
    unit: str = "s"
    note: str = ""

    @property
    def ratio(self) -> str:
        return f"{self.comind / self.peer:.2f}×" if self.peer else ""


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

    return (f"comind {__version__} · Python {platform.python_version()} · {platform.machine()} · "
            f"{datetime.now(UTC):%Y-%m-%d}")


def print_table(title: str, rows: list[Row]) -> None:
    print(f"\n### {title} ({header()})\n")
    print("| measure | comind | peer | peer figure | ratio | note |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = [r.measure, fmt(r.comind, r.unit), r.peer_name, fmt(r.peer, r.unit), r.ratio, r.note]
        print("| " + " | ".join(cells) + " |")
