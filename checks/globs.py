"""Path and module globs, as constraints and suppressions write them (``myapp/handlers/**``,
``myapp.db.*``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from comind.checks.interface import CheckError, describe

_EXTENSIONS = frozenset(
    {
        ".py",
        ".pyi",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".go",
        ".rs",
        ".java",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".cs",
        ".kt",
        ".kts",
        ".swift",
        ".rb",
        ".php",
        ".scala",
        ".lua",
        ".sh",
        ".bash",
        ".html",
        ".htm",
        ".css",
        ".json",
        ".yml",
        ".yaml",
        ".hs",
        ".ex",
        ".exs",
        ".nix",
        ".sol",
        ".hcl",
        ".tf",
        ".dart",
        ".md",
        ".zig",
        ".toml",
        ".txt",
        ".lock",
        ".cfg",
    }
)


def is_path_glob(pattern: str) -> bool:
    """A path glob (``myapp/handlers/**``, ``setup.py``) rather than a module glob (``myapp.db.*``)."""
    return "/" in pattern or os.path.splitext(pattern)[1].lower() in _EXTENSIONS


def _glob_chars(glob: str, star: str, one: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            out.append(star)
        elif c == "?":
            out.append(one)
        elif c == "[":
            j = glob.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def path_glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob as a regex over repository-relative paths.

    ``*`` and ``?`` stay within one path segment, ``**`` spans segments (``a/**/b`` also matches
    ``a/b``), a trailing ``/`` names everything below a directory, and a plain directory or file
    path matches itself and everything below it.
    """
    glob = glob.strip().lstrip("./") if glob.startswith("./") else glob.strip().lstrip("/")
    parts: list[str] = []
    segments = glob.split("/")
    for n, segment in enumerate(segments):
        last = n == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:.*/)?")
            continue
        if segment == "" and last:
            parts.append(".*")  # trailing slash: everything below
            continue
        parts.append(_glob_chars(segment, "[^/]*", "[^/]") + ("" if last else "/"))
    return re.compile("(?:" + "".join(parts) + ")(?:/.*)?", re.DOTALL)


def path_matches(glob: str, path: str) -> bool:
    return path_glob_regex(glob).fullmatch(path) is not None


def any_path_matches(globs: Iterable[str], path: str) -> bool:
    return any(path_matches(g, path) for g in globs)


@lru_cache(maxsize=4096)
def module_glob_regex(glob: str) -> re.Pattern[str]:
    """A module glob (import-linter style): ``*`` is one dotted segment, ``**`` one or more."""
    parts = []
    for segment in glob.strip().split("."):
        if segment == "**":
            parts.append(r"[^.]+(?:\.[^.]+)*")
        else:
            parts.append(_glob_chars(segment, "[^.]*", "[^.]"))
    return re.compile(r"\.".join(parts), re.DOTALL)


def module_matches(glob: str, module: str) -> bool:
    """Whether ``module`` or one of its parent packages matches the module glob."""
    rx = module_glob_regex(glob)
    name = module
    while name:
        if rx.fullmatch(name):
            return True
        name = name.rpartition(".")[0]
    return False


def check_glob(value: str, where: str) -> str:
    """Reject globs that can never match (empty segments, a lone dot)."""
    text = value.strip()
    if not text or text in (".", "/"):
        raise CheckError(
            f'expected a module glob like "myapp.db.*" or a path glob like "myapp/db/**", got {describe(value)}', where
        )
    if not is_path_glob(text) and any(not seg for seg in text.split(".")):
        raise CheckError(f'expected a module glob like "myapp.db.*" (dotted names, * or **), got {value!r}', where)
    return text
