"""Path and module globs, as constraints and suppressions write them (``myapp/handlers/**``,
``myapp.db.*``)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from comind.checks.interface import CheckError, describe, unmatched_globs

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


def unmatched_files(
    paths: Sequence[str],
    *,
    language: tuple[str, str],
    extensions: Sequence[str],
    selectors: Sequence[tuple[str, Sequence[str], Callable[[str, str], bool]]],
    wants: Callable[[str], bool],
    set_fields: Sequence[str],
) -> list[str]:
    """What a check selecting files (ast-grep, semgrep) says when its selection is empty at a
    revision. ``paths`` are the revision's files in the check's languages; ``language`` is the
    field naming them and what it says (``("language", "python")``; ``("", "")`` for any file),
    ``extensions`` theirs; ``selectors`` each field of globs that must match one of ``paths``,
    with its matcher (glob, path); ``wants`` the whole selection, of the fields ``set_fields``."""
    field, value = language
    kind = f"{value} file" if value else "file"
    if not paths:
        either = " or ".join(filter(None, (", ".join(extensions[:-1]), *extensions[-1:])))
        what = f"{field} {value}: no {either} file" if field else "no file"
        return [f"{what} in this tree, so the check cannot fail"]
    out: list[str] = []
    for name, globs, match in selectors:

        def hits(glob: str, match: Callable[[str, str], bool] = match) -> bool:
            return any(match(glob, p) for p in paths)

        out += unmatched_globs(name, globs, hits, f"matches no {kind} of this tree", "so the check cannot fail")
    if not out and set_fields and not any(wants(p) for p in paths):
        out.append(f"{' and '.join(set_fields)} leave no {kind} of this tree, so the check cannot fail")
    return out
