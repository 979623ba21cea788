"""Constraint violations for `comind check` (filled in when the check types land)."""

from __future__ import annotations

from typing import Any


def report_violations(run: Any, report: Any) -> None:
    return None
