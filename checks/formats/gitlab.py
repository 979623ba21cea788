"""``gitlab``: a GitLab Code Quality report (``artifacts: reports: codequality:``).

A JSON array of ``{description, check_name, fingerprint, severity, location: {path, lines:
{begin}}}``, in report order.

Decisions:
- Severity follows the level alone, the same for every type: error → ``major``, warning →
  ``minor``, note → ``info`` (as linters' GitLab reports do). A re-proposed dead end
  and a broken *must* constraint both fail the check, so neither ranks above the other;
  ``critical`` and ``blocker`` are left to security scanners and to people.
- GitLab requires a path: a finding without one is reported at the repository-level file
  ``.comind.yml``, line 1 (the same path every run, so the MR widget matches it across runs).
  A finding without a line is reported at line 1.
- ``check_name`` is the rule id (``comind/dead-end``, or the constraint's own check id).
- ``description`` is the title, then ``: `` and the first line of the message when that adds
  something; one line.
- Fingerprints are the findings' own (line-independent, so an entry survives line moves); when
  two findings share one, the later ones get ``-2``, ``-3``… so every entry is unique.
"""

from __future__ import annotations

import json
from typing import Any

from comind.checks.findings import Finding, Report

from ._base import REPO_LEVEL_PATH, FormatContext

NAME = "gitlab"
DESCRIPTION = "GitLab Code Quality JSON"

SEVERITIES = {"error": "major", "warning": "minor", "note": "info"}
MAX_DESCRIPTION = 1_000


def severity(f: Finding) -> str:
    return SEVERITIES.get(f.level, "minor")


def description(f: Finding) -> str:
    title = " ".join(f.title.split())
    first = next((" ".join(line.split()) for line in f.message.splitlines() if line.strip()), "")
    text = f"{title}: {first}" if first and first != title and title else (title or first or f.rule_id)
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def issues(report: Report) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    taken = {f.fingerprint for f in report.findings}
    used: set[str] = set()
    for f in report.sorted():
        fingerprint = f.fingerprint
        if fingerprint in used:
            n = 2
            while f"{f.fingerprint}-{n}" in used or f"{f.fingerprint}-{n}" in taken:
                n += 1
            fingerprint = f"{f.fingerprint}-{n}"
        used.add(fingerprint)
        out.append(
            {
                "description": description(f),
                "check_name": f.rule_id,
                "fingerprint": fingerprint,
                "severity": severity(f),
                "location": {
                    "path": f.path or REPO_LEVEL_PATH,
                    "lines": {"begin": f.line if f.line and f.line > 0 else 1},
                },
            }
        )
    return out


def render(report: Report, context: FormatContext) -> str:
    return json.dumps(issues(report), indent=2, ensure_ascii=False) + "\n"
