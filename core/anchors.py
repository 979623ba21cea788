"""Anchor syntax: how people write what a record is about.

    path/to/file.py::Class.method   a symbol (qualified name inside the file)
    path/to/file.py                 a file
    path/to/file.py:42              a line (resolved to the innermost definition containing it)
    module:pkg.sub                  a module
    dep:pypi/requests@>=2,<3        a dependency, optionally with a version range
    repo:                           the whole repository

Parsing checks syntax only; resolving against the code index fills in the commit and hashes.
Paths are relative to the repository root; one typed at the command line is relative to the
folder comind runs in, as git reads a pathspec, and `typed_in` makes it relative to the root.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any

from comind.errors import ComindError

SCOPES = ("symbol", "file", "module", "repo", "dependency")
ROLES = ("subject", "context", "evidence")
ECOSYSTEMS = ("pypi", "npm", "go", "cargo", "toolchain", "actions")

_LINE = r"^(?P<path>.+?):(?P<line>\d+)(?:-(?P<end>\d+))?$"
_SYMBOL = r"^[^\s:.]+(?:\.[^\s:.]+)*$"
_MODULE = r"^[\w$@/-]+(?:\.[\w$@/-]+)*$"
_ANCHOR_MAX = 1000


class AnchorError(ComindError):
    pass


def _check_path(path: str, raw: str) -> str:
    if not path or path.startswith("/") or "\\" in path:
        raise AnchorError(f"anchor {raw!r}: the path must be relative to the repository root")
    # A trailing '/' names a directory (every file below it), so its last empty segment is allowed.
    parts = path.removesuffix("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise AnchorError(f"anchor {raw!r}: the path must not contain empty, '.' or '..' segments")
    return path


def typed_in(raw: str, root: Path, cwd: Path) -> str:
    """The anchor `raw`, typed in the folder `cwd` of the work tree at `root`, with its path made
    relative to the root as git makes a pathspec's: relative to `cwd` (./ and ../ resolved),
    absolute inside the work tree, or :/path from the root. AnchorError when it leaves the work tree.

    Only relative to `cwd`, as git: a path is not tried from the root as well, where it could name
    another file (the "no file" error's nearest paths show the one meant).
    """
    text = raw.strip()
    if len(text) > _ANCHOR_MAX or any(ord(c) < 32 for c in text):
        return text  # parse_anchor refuses it
    if text in ("repo:", "repo") or text.startswith(("module:", "dep:")):
        return text
    if "::" in text:
        path, sep, rest = text.partition("::")
        rest = sep + rest
    elif m := re.match(_LINE, text):
        path, rest = m["path"], text[len(m["path"]) :]
    else:
        path, rest = text, ""
    return repository_path(path, root, cwd, text) + rest if path else text


def repository_path(path: str, root: Path, cwd: Path, raw: str | None = None) -> str:
    """`path`, typed in `cwd`, relative to the work tree at `root` (a folder keeps its trailing '/')."""
    folder = path.endswith("/") or posixpath.basename(path) in (".", "..")
    if path.startswith(":/"):  # git's magic for the top of the work tree
        path, cwd = path[2:] or ".", root
    top = root.as_posix().rstrip("/") + "/"
    target = posixpath.normpath(posixpath.join(cwd.as_posix(), path)) + "/"
    if path.startswith("/") and not target.startswith(top):  # absolute, through a symbolic link?
        # (the folders resolved, not the file: a tracked link is a file of its own)
        head, _, name = target.rstrip("/").rpartition("/")
        target = f"{os.path.realpath(head or '/').rstrip('/')}/{name}/"
    if target == top or (path.startswith("/") and os.path.realpath(target) + "/" == top):  # (or a link to it)
        raise AnchorError(f"anchor {raw or path!r}: the path is the repository root; write repo: for all of it")
    if not target.startswith(top):
        raise AnchorError(f"anchor {raw or path!r}: the path is outside the repository ({root})")
    return target[len(top) :].removesuffix("/") + ("/" if folder else "")


def parse_anchor(raw: str, role: str = "subject") -> dict[str, Any]:
    """Parse one anchor as written into its stored form; raise AnchorError on bad syntax."""
    text = raw.strip()
    if not text:
        raise AnchorError("anchor: empty")
    if len(text) > _ANCHOR_MAX or any(ord(c) < 32 for c in text):
        raise AnchorError(f"anchor {text[:60]!r}: too long or contains control characters")
    if role not in ROLES:
        raise AnchorError(f"anchor {text!r}: role must be one of {', '.join(ROLES)}")
    anchor: dict[str, Any] = {"raw": text, "role": role}
    if text in ("repo:", "repo"):
        return anchor | {"scope": "repo"}
    if text.startswith("module:"):
        module = text[len("module:") :]
        if not re.match(_MODULE, module):
            raise AnchorError(f"anchor {text!r}: expected module:dotted.name")
        return anchor | {"scope": "module", "module": module}
    if text.startswith("dep:"):
        return anchor | {"scope": "dependency", "dep": _parse_dep(text)}
    if "::" in text:
        path, _, symbol = text.partition("::")
        if not re.match(_SYMBOL, symbol):
            dotted = symbol.replace("::", ".")  # a Rust or C++ path: members are named with dots here
            meant = f" ({path}::{dotted})" if dotted != symbol and re.match(_SYMBOL, dotted) else ""
            raise AnchorError(f"anchor {text!r}: expected path::Qualified.name{meant}")
        return anchor | {"scope": "symbol", "path": _check_path(path, text), "symbol": symbol}
    if m := re.match(_LINE, text):
        line, end = int(m["line"]), int(m["end"] or m["line"])
        if line < 1 or end < line:
            raise AnchorError(f"anchor {text!r}: lines start at 1 and ranges must not run backwards")
        anchor |= {"scope": "file", "path": _check_path(m["path"], text), "line": line}
        return anchor | ({"end_line": end} if end != line else {})
    return anchor | {"scope": "file", "path": _check_path(text, text)}


def _parse_dep(text: str) -> dict[str, str]:
    spec = text[len("dep:") :]
    ecosystem, _, rest = spec.partition("/")
    if ecosystem not in ECOSYSTEMS or not rest:
        raise AnchorError(
            f"anchor {text!r}: expected dep:ECOSYSTEM/PACKAGE[@RANGE] with ECOSYSTEM one of {', '.join(ECOSYSTEMS)}"
        )
    # npm scopes start with '@': the range separator is the first '@' after the package's first char.
    at = rest.find("@", 1)
    package, version_range = (rest, "") if at < 0 else (rest[:at], rest[at + 1 :])
    if not package or any(c.isspace() for c in package) or (at >= 0 and not version_range.strip()):
        raise AnchorError(f"anchor {text!r}: expected dep:ECOSYSTEM/PACKAGE[@RANGE]")
    dep = {"ecosystem": ecosystem, "package": package}
    if version_range:
        dep["version_range"] = version_range.strip()
    return dep


def format_anchor(anchor: dict[str, Any]) -> str:
    """The anchor as a person would write it (its raw text when it has one)."""
    if raw := anchor.get("raw"):
        return str(raw)
    scope = anchor.get("scope")
    if scope == "symbol":
        return f"{anchor['path']}::{anchor['symbol']}"
    if scope == "module":
        return f"module:{anchor['module']}"
    if scope == "dependency":
        dep = anchor["dep"]
        rng = f"@{dep['version_range']}" if dep.get("version_range") else ""
        return f"dep:{dep['ecosystem']}/{dep['package']}{rng}"
    if scope == "repo":
        return "repo:"
    return str(anchor.get("path", ""))
