"""Shared scenario for the check-type tests: constraints, suppressions and a small app repository."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from gitrepo import GitRepo

from comind.checks.context import CheckContext
from comind.checks.evaluate import Evaluation, evaluate
from comind.checks.types import compile_check
from comind.codeindex import CodeIndex
from comind.records import Record, new_record

TODAY = date(2026, 3, 1)
PROVENANCE = {"actor": "ada", "author_kind": "human", "source": "cli"}


def constraint(
    check: dict[str, Any], title: str = "Handlers never touch the database directly", severity: str = "must"
) -> Record:
    return new_record(
        "constraint",
        title=title,
        anchors=[{"scope": "repo", "raw": "repo:", "role": "subject"}],
        fields={"rule": title, "severity": severity, "check": check},
        provenance=PROVENANCE,
    )


def suppression(
    constraint_id: str,
    *,
    anchors: list[dict[str, Any]] | None = None,
    expires: str | None = None,
    title: str = "Legacy importer may use raw queries",
) -> Record:
    fields = {"constraint": constraint_id, "reason": "legacy code, rewrite planned", "owner": "team-data"}
    if expires:
        fields["expires"] = expires
    return new_record("suppression", title=title, anchors=anchors or [], fields=fields, provenance=PROVENANCE)


def check_all(
    repo: GitRepo,
    specs: list[dict[str, Any]] | dict[str, Any],
    *,
    base: str | None,
    head: str = "HEAD",
    suppressions: list[Record] | None = None,
    records: list[Record] | None = None,
    **ctx_options: Any,
) -> Evaluation:
    if isinstance(specs, dict):
        specs = [specs]
    recs = records or [constraint(s) for s in specs]
    checks = [(r, compile_check(r.id, r.fields["check"])) for r in recs]
    index = CodeIndex(repo.path, repo.path / ".git" / "comind" / "index.sqlite")
    ctx = CheckContext(index, work_tree=repo.path, **ctx_options)
    return evaluate(checks, ctx, base=base, head=head, suppressions=suppressions or [], today=TODAY)


def texts(ev: Evaluation) -> list[str]:
    return [v.text for v in ev.violations]


APP = {
    "myapp/__init__.py": "",
    "myapp/db.py": "def raw_query(sql):\n    return sql\n\n\ndef safe(sql):\n    return raw_query(sql)\n",
    "myapp/services.py": "from myapp.db import safe\n\n\ndef fetch():\n    return safe('x')\n",
    "myapp/handlers/__init__.py": "",
    "myapp/handlers/views.py": "from myapp.services import fetch\n\n\ndef index():\n    return fetch()\n",
}
NO_RAW = {"type": "graph", "from": "myapp/handlers/**", "forbid": ["myapp.db.raw_query"]}


def app_repo(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[GitRepo, str]:
    repo = GitRepo(tmp_path)
    for path, text in (files or APP).items():
        repo.write(path, text)
    base = repo.commit("app")
    repo.git("checkout", "-q", "-b", "feature")
    return repo, base


NO_EVAL = {"type": "ast-grep", "language": "python", "rule": {"pattern": "eval($X)"}, "message": "eval of $X"}
