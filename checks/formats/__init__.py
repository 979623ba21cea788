"""Output formats for ``comind check``: one module per format, registered in :data:`FORMATS`.

Every format module has the same small interface: ``NAME``, ``DESCRIPTION`` and
``render(report, context) -> str``, a pure function (the same report and context give the same
text). Adding a format is one module and one line in :data:`FORMATS`.

- ``text``     grouped, human-readable report (default)
- ``json``     ``Report.to_json()``; schema in ``report.schema.json``
- ``sarif``    SARIF 2.1.0 for code scanning
- ``github``   workflow-command annotations; :func:`github.write_summary` appends the job summary
- ``gitlab``   Code Quality JSON
- ``markdown`` the merge-request comment body

:func:`render_all` produces several formats in one run (``--format text --output
sarif=out.sarif --output gitlab=gl.json``), writing files atomically.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from comind.checks.findings import Report

from . import github, gitlab, json_format, markdown, sarif, text
from ._base import REPO_LEVEL_PATH, Format, FormatContext, atomic_write, plural

__all__ = [
    "DEFAULT_FORMAT",
    "FORMATS",
    "REPO_LEVEL_PATH",
    "Format",
    "FormatContext",
    "atomic_write",
    "plural",
    "render",
    "render_all",
]

FORMATS: dict[str, Format] = {module.NAME: module for module in (text, json_format, sarif, github, gitlab, markdown)}
DEFAULT_FORMAT = text.NAME


def get(name: str) -> Format:
    """The format called ``name``; ValueError naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; choose one of: {', '.join(FORMATS)}") from None


def render(name: str, report: Report, context: FormatContext) -> str:
    return get(name).render(report, context)


def render_all(report: Report, outputs: Mapping[str, Path | None], context: FormatContext) -> dict[str, str]:
    """Render every format in ``outputs``; write those with a path, return the others' text.

    ``outputs`` maps a format name to a file (written atomically: a temporary file in the same
    folder, then a rename, so a reader never sees half a report) or to None (the text is
    returned, in ``outputs`` order, for the caller to print). Every name is checked before
    anything is rendered or written. The GitHub job summary is not written here: call
    :func:`github.write_summary`.
    """
    formats = {name: get(name) for name in outputs}
    printed: dict[str, str] = {}
    for name, path in outputs.items():
        rendered = formats[name].render(report, context)
        if path is None:
            printed[name] = rendered
        else:
            atomic_write(Path(path), rendered)
    return printed
