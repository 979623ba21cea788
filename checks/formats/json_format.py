"""``json``: exactly :meth:`Report.to_json`, pretty-printed with sorted keys.

The schema is written down in ``report.schema.json`` beside this module (JSON Schema 2020-12):
top-level ``version``, ``repo``, ``base``, ``head``, ``findings``, ``warnings``, ``stats``; each
finding has ``type``, ``level``, ``record_id``, ``rule``, ``title``, ``message``, ``path``,
``line``, ``end_line``, ``evidence``, ``fingerprint``, ``in_diff`` and ``commands``. Findings come
in :meth:`Report.sorted` order (errors first, in-diff first, then by place). The module is not
named ``json`` so that it never shadows the standard library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from comind.checks.findings import Report

from ._base import FormatContext

NAME = "json"
DESCRIPTION = "the report as one JSON document (schema: report.schema.json)"

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def document(report: Report) -> dict[str, Any]:
    return report.to_json()


def render(report: Report, context: FormatContext) -> str:
    text = json.dumps(document(report), indent=2, sort_keys=True, ensure_ascii=False, default=str)
    # `##[name]` anywhere in a log line is a GitHub workflow command: its `[` as an escape, the same data
    return text.replace("##[", "##\\u005b") + "\n"
