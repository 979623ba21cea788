"""``dependency`` checks: forbid or require a version range of a package, per ecosystem.

```yaml
type: dependency
ecosystem: pypi            # pypi | npm | go | cargo | toolchain (node, python, go, rust, pnpm, …) | actions
package: requests
forbid: ">=3"              # and/or require: ">=2.31,<3"
paths: ["services/api/**"] # optional: only manifests and lockfiles under these globs
```

What is checked, at a revision (manifests and lockfiles read from git, :mod:`comind.deps`):

* a **locked** version (lockfile entry, or an exact ``==`` pin) inside the forbidden range, or
  outside the required one, is a violation at the lockfile line (or the pinning manifest);
* a **declared** range (the specifier as written) that admits only forbidden versions (``>=3.1``
  when ``>=3`` is forbidden), or no required one (``<2`` when ``>=2.31,<3`` is required), is a
  violation at the manifest. A range that merely allows a forbidden version (``>=2``) is not: the
  locked version decides. Ranges are compared on sample versions around every bound they name;
  a declared range comind cannot read (a URL, ``latest``) is skipped;
* a required package that no manifest or lockfile names is a violation without a location.

Violations match across revisions on what is violated, not on the version: a bump from one
forbidden version to another is not a new violation.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import ClassVar

from comind.checks.context import CheckContext
from comind.checks.globs import any_path_matches, path_matches
from comind.checks.interface import Check, CheckError, CheckField, Violation, unmatched_globs
from comind.deps import (
    ECOSYSTEMS,
    NEWEST_OF_FILES,
    Dependency,
    is_manifest,
    manifest_ecosystems,
    normalize_name,
    version_in_range,
)

_LOCKFILES = {
    "pypi": ("poetry.lock", "uv.lock", "Pipfile.lock"),
    "npm": ("package-lock.json",),
    "cargo": ("Cargo.lock",),
    "go": (),
    "toolchain": (),
    "actions": (),
}
_EXAMPLES = {
    "pypi": '">=2.31,<3"',
    "npm": '"^4.17.21"',
    "cargo": '"^1.0"',
    "go": '">=v1.2.0"',
    "toolchain": '">=20"',
    "actions": '">=4"',
}


def _fmt(ecosystem: str, parts: tuple[int, int, int]) -> str:
    text = ".".join(map(str, parts))
    return "v" + text if ecosystem == "go" else text


def sample_versions(ecosystem: str, *ranges: str) -> list[str]:
    """Versions on and around every bound the ranges name, plus a few far ones."""
    points: set[tuple[int, int, int]] = set()
    for range_ in ranges:
        for found in re.findall(r"\d{1,9}(?:\.\d{1,9}){0,2}", range_):
            nums = [int(x) for x in found.split(".")] + [0, 0]
            points.add((nums[0], nums[1], nums[2]))
    out: set[tuple[int, int, int]] = {(0, 0, 1), (0, 1, 0), (1, 0, 0), (999_999, 0, 0)}
    for a, b, c in points:
        out |= {(a, b, c), (a, b, c + 1), (a, b + 1, 0), (a + 1, 0, 0)}
        if c:
            out.add((a, b, c - 1))
        if b:
            out.add((a, b - 1, 999_999))
        if a:
            out.add((a - 1, 999_999, 999_999))
    return [_fmt(ecosystem, p) for p in sorted(out)]


class DependencyCheck(Check):
    type: ClassVar[str] = "dependency"
    fields: ClassVar[tuple[CheckField, ...]] = (
        CheckField("ecosystem", "choice", True, f"one of {', '.join(ECOSYSTEMS)}", ECOSYSTEMS),
        CheckField("package", "str", True, "the package name as its ecosystem spells it"),
        CheckField("forbid", "str", False, 'a version range no locked or declared version may fall in, e.g. ">=3"'),
        CheckField("require", "str", False, 'a version range the package must be in, e.g. ">=2.31,<3"'),
        CheckField("paths", "globs", False, "only manifests and lockfiles matching these path globs"),
    )

    def compile(self) -> None:
        spec = self.spec
        self.ecosystem: str = spec["ecosystem"]
        package = spec["package"].strip()
        if any(c.isspace() for c in package) or len(package) > 214:
            raise CheckError(f"expected a package name, got {package!r}"[:200], "check.package")
        self.package = normalize_name(self.ecosystem, package)
        self.forbid: str | None = self._range("forbid")
        self.require: str | None = self._range("require")
        if self.forbid is None and self.require is None:
            raise CheckError(
                f"a dependency check needs forbid: or require: (a version range like {_EXAMPLES[self.ecosystem]})",
                "check",
            )
        paths = spec.get("paths")
        self.paths: list[str] = [paths] if isinstance(paths, str) else list(paths or [])

    def _range(self, key: str) -> str | None:
        if key not in self.spec:
            return None
        range_ = str(self.spec[key]).strip()
        probe = "v1.0.0" if self.ecosystem == "go" else "1.0.0"
        try:
            version_in_range(self.ecosystem, probe, range_)
        except (ValueError, TypeError, IndexError) as exc:
            raise CheckError(
                f"expected a {self.ecosystem} version range like {_EXAMPLES[self.ecosystem]}, got {range_!r} ({exc})"[
                    :300
                ],
                f"check.{key}",
            ) from None
        return range_

    def affected_by(self, ctx: CheckContext, paths: Iterable[str]) -> bool:
        return any(is_manifest(p) for p in paths)

    def _in(self, version: str, range_: str) -> bool | None:
        try:
            return version_in_range(self.ecosystem, version, range_)
        except (ValueError, TypeError, IndexError):
            return None

    def evaluate(self, ctx: CheckContext, revision: str) -> Iterator[Violation]:
        eco, name = self.ecosystem, self.package
        deps = [
            d
            for d in ctx.dependencies(revision)
            if d.ecosystem == eco and d.name == name and (not self.paths or any_path_matches(self.paths, d.path))
        ]
        seen: set[tuple[str | None, int | None, str]] = set()
        for v in self._violations(ctx, revision, deps):
            if (v.path, v.line, v.text) not in seen:
                seen.add((v.path, v.line, v.text))
                yield v
        if self.require is not None and not deps:
            where = f" under {', '.join(self.paths)}" if self.paths else ""
            unread = self._unreadable(ctx, revision)
            yield self.violation(
                None,
                None,
                None,
                f"{eco}/{name} missing, required {self.require}",
                self.message
                or f"{eco}/{name} is required ({self.require}) but no manifest or lockfile{where} "
                + (f"that could be read names it ({unread})" if unread else "names it"),
            )

    def _unreadable(self, ctx: CheckContext, revision: str) -> str:
        """``reading <path>: <why>`` of the first manifest or lockfile of the check's ecosystem (under
        its ``paths``) that could not be read and mentions the package, so may be the one naming it;
        else ''. (A broken one that never mentions it, as a parser's test fixture, cannot be.)"""
        unreadable = [
            (path, why)
            for path, why in ctx.dependency_scan(revision).unreadable.items()
            if self.ecosystem in manifest_ecosystems(path)
            and (not self.paths or any_path_matches(self.paths, path))
            and self._mentioned(ctx.text(revision, path))
        ]
        if not unreadable:
            return ""
        path, why = unreadable[0][0], " ".join(unreadable[0][1].split())  # a parser's caret diagram: one line
        more = f"; {len(unreadable) - 1} more unreadable" if len(unreadable) > 1 else ""
        return f"reading {path}: {why[:200]}{more}"

    def _mentioned(self, text: str) -> bool:
        """Whether a file's text names the package at all, as its ecosystem may spell it."""
        if self.ecosystem == "pypi":  # `my_pkg`, `My-Pkg`: one name (PEP 503)
            pattern = r"[-_.]+".join(re.escape(p) for p in re.split(r"[-_.]+", self.package))
            return re.search(pattern, text, re.IGNORECASE) is not None
        return self.package.lower() in text.lower()

    def unmatched(self, ctx: CheckContext, revision: str) -> list[str]:
        """A ``paths`` glob matching no manifest, or a package no manifest names (naming the first
        manifest that could not be read and mentions it, which may be the one). A forbidden range of a package the
        tree does not use is kept quiet when it bans every version: keeping the package out is then
        the point."""
        found = ctx.dependency_scan(revision)  # read once per revision, by evaluating the check
        deps = found.dependencies
        cannot = "so the check cannot pass" if self.require is not None else "so the check cannot fail"
        manifests = sorted({d.path for d in deps} | set(found.unreadable))
        out = unmatched_globs(
            "paths",
            self.paths,
            lambda g: any(path_matches(g, p) for p in manifests),
            "matches no file of this tree that declares a dependency",
            cannot,
        )
        if (self.paths and len(out) == len(self.paths)) or any(
            d.ecosystem == self.ecosystem
            and d.name == self.package
            and (not self.paths or any_path_matches(self.paths, d.path))
            for d in deps
        ):
            return out
        under = f" under {', '.join(repr(g) for g in self.paths)}" if self.paths else ""
        package = f"{self.ecosystem}/{self.package}"
        unread = self._unreadable(ctx, revision)  # a manifest that could not be read may be the one
        if unread:
            return [
                *out,
                f"package {package} is named by no manifest or lockfile{under} that could be read, {cannot} ({unread})",
            ]
        if self.require is None and self.forbid is not None and self._bans_all(self.forbid):
            return out
        return [*out, f"package {package} is named by no manifest or lockfile of this tree{under}, {cannot}"]

    def _bans_all(self, range_: str) -> bool:
        return all(self._in(v, range_) for v in sample_versions(self.ecosystem, range_))

    def _violations(self, ctx: CheckContext, revision: str, deps: list[Dependency]) -> Iterator[Violation]:
        eco, name = self.ecosystem, self.package
        samples = sample_versions(eco, *(r for r in (self.forbid, self.require) if r))
        for dep in deps:
            pinned = (
                dep.locked is not None
                and dep.declared is not None
                and dep.declared.strip().lstrip("=").strip() == dep.locked
                and dep.declared.strip().startswith("==")
            ) or (dep.ecosystem in NEWEST_OF_FILES and dep.locked is not None)  # `.nvmrc`'s 20: the one used
            if dep.locked is not None:
                path, line = self._lock_location(ctx, revision, dep, pinned)
                if self.forbid is not None and self._in(dep.locked, self.forbid):
                    yield self.violation(
                        path,
                        line,
                        line,
                        f"{eco}/{name} locked in forbidden range {self.forbid}",
                        self.message
                        or f"{eco}/{name} {dep.locked} is locked in {path}, inside the forbidden range {self.forbid}",
                    )
                if self.require is not None and self._in(dep.locked, self.require) is False:
                    yield self.violation(
                        path,
                        line,
                        line,
                        f"{eco}/{name} locked outside required range {self.require}",
                        self.message
                        or f"{eco}/{name} {dep.locked} is locked in {path}, outside the required range {self.require}",
                    )
            if dep.declared is None or pinned:
                continue
            declared = dep.declared
            admitted = [v for v in samples + sample_versions(eco, declared) if self._in(v, declared)]
            if not admitted:
                continue
            line = (
                _find_line(ctx.text(revision, dep.path), name, None) if dep.path in ctx.tree_files(revision) else None
            )
            if self.forbid is not None and all(self._in(v, self.forbid) for v in admitted):
                yield self.violation(
                    dep.path,
                    line,
                    line,
                    f"{eco}/{name} declared in forbidden range {self.forbid}",
                    self.message
                    or f"{dep.path} declares {name} {declared}, which admits only "
                    f"versions in the forbidden range {self.forbid}",
                )
            if self.require is not None and not any(self._in(v, self.require) for v in admitted):
                yield self.violation(
                    dep.path,
                    line,
                    line,
                    f"{eco}/{name} declared outside required range {self.require}",
                    self.message
                    or f"{dep.path} declares {name} {declared}, which admits no "
                    f"version in the required range {self.require}",
                )

    def _lock_location(self, ctx: CheckContext, revision: str, dep: Dependency, pinned: bool) -> tuple[str, int | None]:
        """The lockfile (or pinning manifest) fixing ``dep``'s version, and the line naming it."""
        files = ctx.tree_files(revision)
        path = dep.path
        if dep.declared is not None and not pinned and self.ecosystem != "go":
            directory = posixpath.dirname(dep.path)
            found = None
            while found is None:
                for lock in _LOCKFILES[self.ecosystem]:
                    candidate = posixpath.join(directory, lock) if directory else lock
                    if candidate in files and _find_line(ctx.text(revision, candidate), dep.name, None):
                        found = candidate
                        break
                if found is not None or not directory:
                    break
                directory = posixpath.dirname(directory)
            path = found or dep.path
        if path not in files:
            return path, None
        return path, _find_line(ctx.text(revision, path), dep.name, dep.locked)


def _find_line(text: str, name: str, version: str | None) -> int | None:
    """The line naming the package (and, within a few lines, its version), 1-based."""
    letters = "".join("[-_.]" if c in "-_." else re.escape(c) for c in name)
    rx = re.compile(rf"(?<![\w.-]){letters}(?![\w-])", re.IGNORECASE)
    lines = text.splitlines()
    first = None
    for i, line in enumerate(lines):
        if not rx.search(line):
            continue
        if first is None:
            first = i + 1
        if version is None:
            return i + 1
        bare = version.lstrip("v")
        for j in range(i, min(i + 12, len(lines))):
            if bare in lines[j]:
                return j + 1
    return first
