"""What every output format shares: the rendering context and the wording of findings.

Formats are pure functions of (report, context): the same report and context give the same bytes,
so output can be diffed, cached and compared across runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from comind.checks.findings import LEVELS, TYPES, Finding, Report
from comind.config import CONFIG_FILE

# Code scanning and Code Quality need a file for every result. A finding about the repository
# as a whole (a dependency range, an expired suppression with no anchor) is reported at the
# configuration file: it is the same path in every run (so alerts don't churn) and it is where a
# person goes to change what comind checks. The file need not exist.
REPO_LEVEL_PATH = CONFIG_FILE

# Section headings, in report order (TYPES order).
HEADINGS = {
    "dead_end": "Dead ends re-proposed",
    "violation": "Constraint violations",
    "not_run": "Checks that could not run",
    "stale": "Stale records",
    "orphaned": "Orphaned records",
    "retry": "Retry conditions met",
    "reland": "Dead ends relanded",
    "suppression": "Suppressions",
    "context": "Context",
}

# How the headline counts each type: (singular, plural).
PHRASES = {
    "dead_end": ("dead end re-proposed", "dead ends re-proposed"),
    "violation": ("constraint broken", "constraints broken"),
    "not_run": ("constraint not checked", "constraints not checked"),
    "stale": ("record now stale", "records now stale"),
    "orphaned": ("record orphaned", "records orphaned"),
    "retry": ("retry condition met", "retry conditions met"),
    "reland": ("dead end relanded", "dead ends relanded"),
    "suppression": ("suppression to review", "suppressions to review"),
    "context": ("related record", "related records"),
}

ALL_CLEAR = "nothing re-proposed, no constraint broken, no record made stale"


@dataclass(frozen=True)
class FormatContext:
    """Where the output goes and what it may link to.

    ``server_url``/``repository``/``head_sha`` turn paths and commits into links when all are
    known (GitHub: ``GITHUB_SERVER_URL``, ``GITHUB_REPOSITORY``, ``GITHUB_SHA``; GitLab:
    ``CI_SERVER_URL``, ``CI_PROJECT_PATH``, ``CI_COMMIT_SHA``); ``forge`` picks the URL layout.
    ``job_summary`` is GitHub's ``$GITHUB_STEP_SUMMARY``; ``summary_link`` is where a truncated
    comment points (the job summary or an artifact).
    """

    colour: bool = False
    repo_root: Path | None = None
    server_url: str | None = None
    repository: str | None = None
    head_sha: str | None = None
    job_summary: Path | None = None
    max_comment_bytes: int = 65_000
    summary_link: str | None = None
    forge: str = "github"  # "github" | "gitlab": the layout of file and commit URLs
    sarif_category: str = "comind/check"  # code scanning's category (COMIND_SARIF_CATEGORY; the action's input)

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        colour: bool = False,
        repo_root: Path | None = None,
        head_sha: str | None = None,
    ) -> FormatContext:
        """The context a CI job provides (GitHub Actions or GitLab CI), or a bare one elsewhere."""
        env = os.environ if environ is None else environ
        category = env.get("COMIND_SARIF_CATEGORY", "").strip().strip("/") or "comind/check"
        if env.get("GITHUB_ACTIONS") == "true" or env.get("GITHUB_REPOSITORY"):
            server = env.get("GITHUB_SERVER_URL") or "https://github.com"
            repository = env.get("GITHUB_REPOSITORY") or None
            run_id = env.get("GITHUB_RUN_ID")
            link = f"{server}/{repository}/actions/runs/{run_id}" if repository and run_id else None
            summary = env.get("GITHUB_STEP_SUMMARY")
            return cls(
                colour=colour,
                repo_root=repo_root,
                server_url=server,
                repository=repository,
                head_sha=head_sha or env.get("GITHUB_SHA") or None,
                job_summary=Path(summary) if summary else None,
                summary_link=link,
                forge="github",
                sarif_category=category,
            )
        if env.get("GITLAB_CI") == "true" or env.get("CI_PROJECT_PATH"):
            return cls(
                colour=colour,
                repo_root=repo_root,
                server_url=env.get("CI_SERVER_URL") or None,
                repository=env.get("CI_PROJECT_PATH") or None,
                head_sha=head_sha or env.get("CI_COMMIT_SHA") or None,
                summary_link=env.get("CI_JOB_URL") or None,
                forge="gitlab",
                sarif_category=category,
            )
        return cls(colour=colour, repo_root=repo_root, head_sha=head_sha, sarif_category=category)

    def _base(self) -> str | None:
        if not (self.server_url and self.repository):
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository.strip('/')}" + ("/-" if self.forge == "gitlab" else "")

    def file_url(self, path: str, line: int | None = None, end_line: int | None = None) -> str | None:
        """A link to ``path`` (and its lines) at the head commit, when the forge is known."""
        base = self._base()
        if base is None or not self.head_sha:
            return None
        url = f"{base}/blob/{quote(self.head_sha, safe='')}/{uri_path(path)}"
        if line:
            url += f"#L{line}"
            if end_line and end_line > line:
                url += f"-{end_line}" if self.forge == "gitlab" else f"-L{end_line}"
        return url

    def commit_url(self, sha: str) -> str | None:
        base = self._base()
        if base is None or not re.fullmatch(r"[0-9a-fA-F]{4,64}", sha):
            return None
        return f"{base}/commit/{sha}"


class Format(Protocol):
    """The interface of one format module."""

    NAME: str
    DESCRIPTION: str

    def render(self, report: Report, context: FormatContext) -> str: ...


def uri_path(path: str) -> str:
    """A repository-relative path as a relative URI reference: forward slashes, percent-encoded.

    ``:`` is encoded too, so a first segment like ``C:`` or ``a:b`` can never read as a scheme.
    """
    return quote(path.replace("\\", "/").lstrip("/"), safe="/-._~!$&'()*+,;=@")


def location_path(finding: Finding) -> str:
    return finding.path or REPO_LEVEL_PATH


def grouped(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """Findings by type in report order (TYPES), keeping their order within a type."""
    groups: dict[str, list[Finding]] = {t: [] for t in TYPES}
    for f in findings:
        groups.setdefault(f.type, []).append(f)
    return [(t, fs) for t, fs in groups.items() if fs]


def level_counts(findings: Iterable[Finding]) -> Counter[str]:
    return Counter(f.level for f in findings)


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def count_summary(findings: list[Finding]) -> str:
    """``3 findings: 1 error, 1 warning, 1 note`` or ``no findings``."""
    if not findings:
        return "no findings"
    counts = level_counts(findings)
    parts = [plural(counts[level], level) for level in reversed(LEVELS) if counts[level]]
    return f"{plural(len(findings), 'finding')}: {', '.join(parts)}"


def headline(report: Report) -> str:
    """``1 dead end re-proposed, 2 records now stale`` (without the ``comind:`` prefix)."""
    counts = Counter(f.type for f in report.findings)
    parts = []
    for t, n in sorted(counts.items(), key=lambda kv: TYPES.index(kv[0]) if kv[0] in TYPES else len(TYPES)):
        name = re.sub(r"[^A-Za-z0-9 ]", " ", t).strip() or "other"
        singular, many = PHRASES.get(t, (f"{name} finding", f"{name} findings"))
        parts.append(f"{n} {singular if n == 1 else many}")
    return ", ".join(parts) if parts else ALL_CLEAR


def place(finding: Finding) -> str:
    """``path:line`` (``path:line-end``), ``path``, or ``(repository)``."""
    if not finding.path:
        return "(repository)"
    if finding.line:
        if finding.end_line and finding.end_line > finding.line:
            return f"{finding.path}:{finding.line}-{finding.end_line}"
        return f"{finding.path}:{finding.line}"
    return finding.path


def evidence_line(item: Mapping[str, Any]) -> str:
    """One evidence item as one line: ``commit 1a2b3c4d5e: the reason (src/app.py:12)``."""
    kind = str(item.get("type") or "evidence")
    ref = str(item.get("ref") or "")
    if kind == "commit" and re.fullmatch(r"[0-9a-fA-F]{12,64}", ref):
        ref = ref[:12]
    note = str(item.get("note") or "")
    text = f"{kind} {ref}".strip()
    if note:
        text += f": {note}"
    where = evidence_place(item)
    if where:
        text += f" ({where})"
    return one_line(text)


def evidence_place(item: Mapping[str, Any]) -> str | None:
    path = item.get("path")
    if not path:
        return None
    line = item.get("line")
    return f"{path}:{line}" if isinstance(line, int) and line > 0 else str(path)


def one_line(text: str) -> str:
    """Any line breaks (including Unicode ones) folded into single spaces."""
    return " ".join(text.split()) if any(c in text for c in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029") else text


def atomic_write(path: Path, data: str | bytes, *, parents: bool = True) -> None:
    """Write ``data`` (text as UTF-8, ``\\n`` line ends) to ``path`` via a temporary file of a name
    nobody can guess (never a link someone left at `<path>.tmp`) and a rename: whole or not at all.
    ``parents``: make the folders it needs."""
    path = Path(path)
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
