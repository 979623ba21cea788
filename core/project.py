"""Where comind itself lives: its pages, read from the installed package's metadata.

pyproject.toml's [project.urls] is the one place these are written; HOME is what they are when
the metadata cannot be read (a source tree never installed).
"""

from __future__ import annotations

import functools

HOME = "https://github.com/comind-dev/comind"
# The release the GitLab template, the README and `comind init --ci` pin by default; a release
# moves it (docs/releasing.md).
RELEASE = "v0.1.0"


@functools.cache
def urls() -> dict[str, str]:
    """The package's Project-URL entries: label -> URL (Homepage, Documentation, Source, Issues)."""
    from importlib import metadata

    try:
        entries = metadata.metadata("comind").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        entries = []
    found = dict(entry.split(", ", 1) for entry in entries if ", " in entry)
    return {"Homepage": HOME, "Documentation": f"{HOME}/tree/main/docs", "Source": HOME} | found


def docs_url(page: str = "") -> str:
    """A page of the documentation in the repository, e.g. docs_url("bot.md")."""
    base = urls()["Documentation"].rstrip("/")
    return f"{base}/{page}" if page else base


def action_ref(major: str = "v0") -> str:
    """The GitHub Action as a workflow names it: OWNER/NAME@v0 (the moving major tag)."""
    source = urls()["Source"].rstrip("/").removesuffix(".git")
    return "/".join(source.split("/")[-2:]) + f"@{major}"


def pip_spec(version: str) -> str:
    """What pip installs for `version`: a release tag of the repository (vX.Y.Z), else the package."""
    source = urls()["Source"].rstrip("/")
    return f"comind @ git+{source}@{version}" if version.startswith("v") else f"comind=={version}"


def raw_url(path: str, ref: str = "main") -> str:
    """A file of the repository as served raw, e.g. the GitLab template at a release tag."""
    source = urls()["Source"].rstrip("/").removesuffix(".git")
    raw = source.replace("https://github.com/", "https://raw.githubusercontent.com/", 1)
    return f"{raw}/{ref}/{path}"
