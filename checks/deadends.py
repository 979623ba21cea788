"""Dead-end matching for `comind check` (filled in when the approach fingerprints land)."""

from __future__ import annotations

from typing import Any


def report_dead_ends(run: Any, report: Any) -> None:
    return None
