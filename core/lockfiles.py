"""The locked npm versions of ``yarn.lock`` and ``pnpm-lock.yaml``, read with a line scanner.

Both are written by their tools in one fixed layout, so each is read line by line rather than
loaded as YAML (a 5 MB pnpm-lock.yaml takes seconds through PyYAML's C loader):

* ``yarn.lock``, classic (v1, yarn's own format: ``"pkg@^1.0.0", pkg@~1.1:`` headers and an
  indented ``version "1.2.3"``) and Berry (v2+, YAML: ``"pkg@npm:^1.0.0, pkg@npm:~1.1":`` with
  ``version: 1.2.3``; ``__metadata`` and the workspaces, ``0.0.0-use.local``, left out). An alias
  (``alias@npm:real@^1``) is locked under its alias, as npm installs it
  (https://classic.yarnpkg.com/lang/en/docs/yarn-lock/, https://yarnpkg.com/configuration/yarnrc).
* ``pnpm-lock.yaml`` (https://pnpm.io/lockfile-format, https://pnpm.io/lockfile): lockfile 5.x keys
  ``/pkg/1.2.3_peer@1.0.0:``, 6.x ``/pkg@1.2.3(peer@1.0.0):``, 9.x ``pkg@1.2.3(peer@1.0.0):`` under
  ``packages`` and ``snapshots``; each importer's (each workspace project's) ``dependencies``,
  ``devDependencies`` and ``optionalDependencies`` (``name: version`` in 5.x, ``specifier`` and
  ``version`` below the name from 6.0), and 5.x/6.x's single-project ones at the top. Peer suffixes
  are stripped; ``link:``, ``file:``, git and tarball entries have no registry version and are left
  out. Of a file of two YAML documents (pnpm 11: the env lockfile, then the project's), the last.

Each parser yields ``(name, version, note)``, the importers' direct dependencies first (the version
the project itself resolves), each name and version once, and raises ValueError on a file it cannot
read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Locked = tuple[str, str, str | None]  # (name, version, note: "dev" or None)

_SEMVER = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?", re.ASCII)


def _name_of(spec: str) -> str:
    """`@scope/pkg@npm:^1.0` → `@scope/pkg`: the name is all before the first `@` after its first letter."""
    at = spec.find("@", 1)
    return spec if at < 0 else spec[:at]


def _unique(found: Iterator[Locked]) -> Iterator[Locked]:
    seen: set[tuple[str, str]] = set()
    for name, version, note in found:
        if (name, version) not in seen:
            seen.add((name, version))
            yield name, version, note


# --- yarn.lock ----------------------------------------------------------------------------------


def yarn_lock(text: str) -> Iterator[Locked]:
    return _unique(_yarn_entries(text))


def _yarn_entries(text: str) -> Iterator[Locked]:
    entries: list[tuple[int, list[str], str | None]] = []  # (header line, names, version)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if not line[0].isspace():  # a header: `"a@^1", a@~1.1:` (v1) or `"a@npm:^1, a@npm:~1.1":` (Berry)
            if not line.endswith(":"):
                raise ValueError(f"yarn.lock line {number}: expected an entry's header, got {line[:80]!r}")
            specs = [s.strip() for s in line[:-1].replace('"', "").split(",")]
            names = [] if "__metadata" in specs else [_name_of(s) for s in specs if s]
            if not all(names):
                raise ValueError(f"yarn.lock line {number}: cannot read the header {line[:80]!r}")
            entries.append((number, names, None))
        elif line.startswith("  version") and line[9:10] in (" ", ":") and entries:
            entries[-1] = (entries[-1][0], entries[-1][1], line[9:].lstrip(":").strip().strip('"') or None)
    for number, names, version in entries:
        if not names:
            continue  # __metadata
        if version is None:
            raise ValueError(f"yarn.lock line {number}: the entry of {names[0]!r} has no version")
        if version != "0.0.0-use.local":  # a workspace, a link or a portal: the project itself
            for name in dict.fromkeys(names):
                yield name, version, None


# --- pnpm-lock.yaml ---------------------------------------------------------------------------

_DEP_GROUPS = {"dependencies": None, "optionalDependencies": None, "devDependencies": "dev"}


def _split(content: str, number: int) -> tuple[str, str]:
    """A YAML mapping line as (key, value), the key unquoted: `'@a/b@1.0.0': {}`, `/x/1.0.0:`."""
    if content[:1] in ("'", '"'):
        end = content.find(content[0], 1)
        if end < 0 or content[end + 1 : end + 2] != ":":
            raise ValueError(f"pnpm-lock.yaml line {number}: cannot read {content[:80]!r}")
        return content[1:end], content[end + 2 :].strip()
    at = content.find(": ")
    if at >= 0:
        return content[:at], content[at + 2 :].strip()
    if content.endswith(":"):
        return content[:-1], ""
    raise ValueError(f"pnpm-lock.yaml line {number}: cannot read {content[:80]!r}")


def _package_key(key: str) -> tuple[str, str] | None:
    """(name, version) of a package key: `/a/1.0.0_p@1` (5.x), `/a@1.0.0(p@1)` (6.x), `a@1.0.0(p@1)`
    (9.x); None for one without a registry version (a tarball, a git repository, a directory)."""
    key = key.removeprefix("/")
    parts = key.split("/")
    if len(parts) == (3 if key.startswith("@") else 2) and parts[-1][:1].isdigit():  # 5.x: name/version
        name, version = "/".join(parts[:-1]), parts[-1].split("_", 1)[0]
    else:
        key = key.split("(", 1)[0]
        at = key.find("@", 1)
        if at < 0:
            return None
        name, version = key[:at], key[at + 1 :]
    return (name, version) if name and _SEMVER.fullmatch(version) else None


def _resolved(name: str, value: str) -> tuple[str, str] | None:
    """(name, version) an importer's dependency resolves to: `1.2.3(peer@1)`, `1.2.3_peer@1` (5.x),
    an alias's `real@1.2.3` (9.x) or `/real/1.2.3` (5.x), under the alias's name; None for `link:…`."""
    value = value.strip("'\"")
    if value[:1].isdigit():
        version = value.split("(", 1)[0].split("_", 1)[0]
        return (name, version) if _SEMVER.fullmatch(version) else None
    found = _package_key(value)
    return (name, found[1]) if found else None


def pnpm_lock(text: str) -> Iterator[Locked]:
    direct, packages = _pnpm_entries(text)
    return _unique(iter(direct + packages))


def _pnpm_entries(text: str) -> tuple[list[Locked], list[Locked]]:
    lines = text.splitlines()
    starts = [n for n, line in enumerate(lines) if line.rstrip() == "---"]
    if starts and any(line.strip() and not line.startswith("#") for line in lines[starts[-1] + 1 :]):
        lines = lines[starts[-1] + 1 :]  # the project's document is the last one
    direct: list[Locked] = []
    packages: list[Locked] = []
    section = ""
    group: str | None = None  # the importer's dependency group the lines below belong to
    current: str | None = None  # the dependency whose `version:` comes next (6.x and 9.x)
    versioned = False
    last: int | None = None  # the index in `packages` of the key above, if it was read
    for number, line in enumerate(lines, 1):
        content = line.strip()
        if not content or content.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            section = _split(content, number)[0]
            if section == "lockfileVersion":
                versioned = True
            group = current = None
            continue
        if section in ("packages", "snapshots"):
            if indent == 2:
                found = _package_key(_split(content, number)[0])
                last = None if found is None else len(packages)
                if found is not None:
                    packages.append((*found, None))
            elif indent == 4 and content == "dev: true" and last is not None:  # 5.x and 6.x
                packages[last] = (*packages[last][:2], "dev")
            continue
        # the dependencies of an importer (`importers: <dir>:`) or of the single project (5.x, 6.x)
        base = 4 if section == "importers" else 0 if section in _DEP_GROUPS else -1
        if base < 0:
            continue
        if indent == base and base:
            key = _split(content, number)[0]
            group, current = (key if key in _DEP_GROUPS else None), None
            continue
        if base == 0 and indent == 2 and group is None:
            group = section
        if group is None:
            continue
        if indent == base + 2:
            name, value = _split(content, number)
            current = name
            if value and (found := _resolved(name, value)) is not None:  # 5.x: `name: 1.2.3`
                direct.append((*found, _DEP_GROUPS[group]))
        elif indent == base + 4 and current is not None:
            key, value = _split(content, number)
            if key == "version" and (found := _resolved(current, value)) is not None:
                direct.append((*found, _DEP_GROUPS[group]))
    if not versioned:
        raise ValueError("pnpm-lock.yaml: no lockfileVersion")
    return direct, packages
