"""The dependency set of a revision: declared and locked versions from manifests and lockfiles.

Read from git objects (the revision's tree), never the working tree:

* pypi: ``pyproject.toml`` (PEP 621 dependencies and optional-dependencies, PEP 735
  dependency-groups, Poetry dependencies and groups), ``requirements*.txt`` and ``requirements/*.txt``
  (options, ``-r``, URLs and markers left out; an exact ``==`` pin is also the locked version),
  ``poetry.lock``, ``uv.lock``, ``Pipfile.lock``;
* npm: ``package.json`` (dependencies, dev, peer, optional), ``package-lock.json`` (v1, v2, v3);
* go: ``go.mod`` (require blocks; the required version is also the locked one; replacements noted);
* cargo: ``Cargo.toml`` (dependencies, dev, build, target-specific, workspace), ``Cargo.lock``;
* toolchain: ``node``, ``python``, ``go``, ``rust``, ``npm``, ``pnpm``, ``yarn``, ``bun``, read by
  :mod:`comind.toolchains` from ``.nvmrc``, ``.node-version``, ``.python-version``,
  ``.tool-versions``, ``rust-toolchain(.toml)``, ``go.mod``'s ``go`` and ``toolchain``,
  ``package.json``'s ``packageManager``, ``volta`` and ``engines``, Cargo.toml's ``rust-version``,
  pyproject's ``requires-python``, and the setup actions of ``.github/workflows/*.yml``;
* actions: the GitHub Actions a root workflow ``uses:`` (``actions/checkout@v4``; a commit pin's version
  from the comment Dependabot and Renovate write after it, ``@<sha> # v4.1.2``; branches, local and
  ``docker://`` actions left out).

A declared dependency takes its locked version from the nearest lockfile of its ecosystem in its
directory or above (of several versions locked under its name, as Cargo.lock lists
them, the first its range admits); lockfile entries no manifest declares are listed with
``declared=None``. A toolchain or an action named in several files resolves to the newest of them.
A malformed file is recorded in :attr:`DependencyScan.problems` and the scan goes on.

:func:`version_in_range` checks a version against a range: PEP 440 (via ``packaging``) for pypi,
with Poetry's ``^``/``~``/``*`` translated; node-semver for npm; Cargo's rules for cargo (a bare
``1.2`` is ``^1.2``); comparators with a ``v`` prefix for go (a bare version is exact); for toolchain,
versions compared part by part, a partial one standing for all its releases (``=20`` holds 20.11.1),
and so for actions (``=4`` holds v4.1.2).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pygit2

from . import toolchains
from .codeindex import Snapshot

ECOSYSTEMS = ("pypi", "npm", "go", "cargo", "toolchain", "actions")
# named in several files, resolved to the newest of them; versions compared part by part
NEWEST_OF_FILES = ("toolchain", "actions")


@dataclass(frozen=True, slots=True)
class Dependency:
    ecosystem: str  # pypi | npm | go | cargo | toolchain | actions
    name: str  # PEP 503-normalised for pypi, as written elsewhere
    declared: str | None  # the range as written in the manifest
    locked: str | None  # the version a lockfile (or an exact pin) fixes
    path: str  # the manifest declaring it, or the lockfile for undeclared locked entries
    note: str | None = None  # dev, optional:<extra>, group:<name>, peer, indirect, replaced by …


@dataclass(slots=True)
class DependencyScan:
    dependencies: list[Dependency] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "<path>: <what is wrong>"
    unreadable: dict[str, str] = field(default_factory=dict)  # path -> the first problem met reading it


def normalize_pypi(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def normalize_name(ecosystem: str, name: str) -> str:
    """A package's name as compared: PEP 503's for pypi, lower case for actions (GitHub's are not
    case-sensitive), as written elsewhere."""
    if ecosystem == "pypi":
        return normalize_pypi(name)
    return name.lower() if ecosystem == "actions" else name


# --- reading the tree ----------------------------------------------------------------------------

_LOCKFILES = {
    "poetry.lock": "pypi",
    "uv.lock": "pypi",
    "Pipfile.lock": "pypi",
    "package-lock.json": "npm",
    "Cargo.lock": "cargo",
}


def _is_requirements(path: str) -> bool:
    base = posixpath.basename(path)
    if not base.endswith(".txt"):
        return False
    return base.startswith("requirements") or posixpath.basename(posixpath.dirname(path)) == "requirements"


def _tree_of(source: Snapshot | pygit2.Tree | pygit2.Commit) -> pygit2.Tree:
    if isinstance(source, Snapshot):
        tree = source.index.repo[source.tree]
    elif isinstance(source, pygit2.Commit):
        tree = source.tree
    else:
        tree = source
    assert isinstance(tree, pygit2.Tree)
    return tree


def _manifest_blobs(tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, pygit2.Blob]]:
    folder = prefix.rstrip("/").rsplit("/", 1)[-1]
    for path, blob in _manifests_under(tree, folder):
        yield prefix + path, blob
    if not prefix:
        yield from _workflows(tree)


def _workflows(tree: pygit2.Tree) -> Iterator[tuple[str, pygit2.Blob]]:
    """The root's GitHub Actions workflows (`toolchains.is_workflow`): the actions they use, and the
    toolchains their setup actions name."""
    try:
        folder = tree[".github/workflows"]
    except KeyError:
        return
    if isinstance(folder, pygit2.Tree):
        for entry in folder:
            path = f".github/workflows/{entry.name}"
            if toolchains.is_workflow(path) and (blob := _listed(tree, path)) is not None:
                yield path, blob


# (tree id, its folder's name) -> the manifests under it, by path inside it. Revisions share most
# folders: a scan of the next one reads only the folders that changed (a large tree holds thousands).
_UNDER: dict[tuple[pygit2.Oid, str], tuple[tuple[str, pygit2.Blob], ...]] = {}
_UNDER_MAX = 65536


def _manifests_under(tree: pygit2.Tree, folder: str) -> tuple[tuple[str, pygit2.Blob], ...]:
    key = (tree.id, folder)
    found = _UNDER.get(key)
    if found is None:
        out: list[tuple[str, pygit2.Blob]] = []
        for entry in tree:
            name = entry.name or ""
            if isinstance(entry, pygit2.Tree):
                if name not in ("node_modules", ".git"):
                    out.extend((f"{name}/{path}", blob) for path, blob in _manifests_under(entry, name))
            elif (  # the name first: most files are none of these, and a mode is an enum made per call
                (
                    name in _MANIFEST_PARSERS
                    or name in _LOCKFILES
                    or (name.endswith(".txt") and _is_requirements(f"{folder}/{name}"))
                )
                and isinstance(entry, pygit2.Blob)
                and entry.filemode in (0o100644, 0o100755)
            ):
                out.append((name, entry))
        if len(_UNDER) >= _UNDER_MAX:
            _UNDER.clear()
        found = _UNDER[key] = tuple(out)
    return found


# (path, blob id) -> what parsing it found. Scans of neighbouring revisions (both sides of every
# harvested change that touches a manifest) share most of their manifests: each is parsed once.
# A large workspace's Cargo.lock takes 27 ms to parse. Bounded: emptied when full.
_PARSED: dict[tuple[str, str], tuple[tuple[Dependency, ...], tuple[str, ...]]] = {}
_PARSED_MAX = 4096


def _parsed(path: str, blob: pygit2.Blob) -> tuple[tuple[Dependency, ...], tuple[str, ...]]:
    """The dependencies a manifest or lockfile declares (a lockfile's as `locked`), and its problems."""
    key = (path, str(blob.id))
    found = _PARSED.get(key)
    if found is None:
        name = posixpath.basename(path)
        deps: list[Dependency] = []
        problems: list[str] = []
        try:
            text = bytes(blob.data).decode("utf-8-sig")  # a BOM is tolerated, as npm and pip do
            if name in _LOCKFILES:  # all of a lockfile or nothing of it
                deps = list(_LOCK_PARSERS[name](path, text))
            elif toolchains.is_workflow(path):
                deps = list(_workflow(path, text))
            else:  # a manifest keeps what it declared before a bad entry
                deps.extend((_MANIFEST_PARSERS.get(name) or _requirements)(path, text, problems))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
            # tomli.TOMLDecodeError and json.JSONDecodeError are ValueErrors
            problems.append(f"{path}: {type(exc).__name__}: {exc}")
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        found = _PARSED[key] = (tuple(deps), tuple(problems))
    return found


def scan(
    source: Snapshot | pygit2.Tree | pygit2.Commit, keep: Callable[[str, pygit2.Blob], bool] | None = None
) -> DependencyScan:
    """Every dependency declared or locked at a revision, and the problems met on the way; with
    `keep`, of the manifests and lockfiles it keeps only."""
    result = DependencyScan()
    declared: list[Dependency] = []
    locks: dict[tuple[str, str], dict[str, list[str]]] = {}  # (ecosystem, directory) → name → versions
    lock_entries: list[Dependency] = []
    for path, blob in sorted(_manifest_blobs(_tree_of(source)), key=lambda item: item[0]):
        if keep is not None and not keep(path, blob):
            continue
        found, problems = _parsed(path, blob)
        result.problems.extend(problems)
        if problems:
            result.unreadable[path] = problems[0].removeprefix(f"{path}: ")
        name = posixpath.basename(path)
        if name in _LOCKFILES:
            table = locks.setdefault((_LOCKFILES[name], posixpath.dirname(path)), {})
            for dep in found:
                table.setdefault(dep.name, []).append(dep.locked or "")
            lock_entries.extend(found)
        else:
            declared.extend(found)

    claimed: set[tuple[str, str, str]] = set()
    for dep in declared:
        locked = dep.locked
        directory = posixpath.dirname(dep.path)
        while locked is None:
            lock = locks.get((dep.ecosystem, directory))
            if lock is not None and dep.name in lock:
                locked = _locked_for(dep, lock[dep.name]) or None
                claimed.add((dep.ecosystem, directory, dep.name))
                break
            if not directory:
                break
            directory = posixpath.dirname(directory)
        result.dependencies.append(Dependency(dep.ecosystem, dep.name, dep.declared, locked, dep.path, dep.note))
    for dep in lock_entries:
        if (dep.ecosystem, posixpath.dirname(dep.path), dep.name) not in claimed:
            result.dependencies.append(dep)
    return result


def _locked_for(dep: Dependency, versions: list[str]) -> str:
    """Of the versions a lockfile locks under a declared dependency's name, the first its declared
    range admits (a Cargo.lock may lock one crate at two major versions), else the first."""
    if len(versions) > 1 and dep.declared:
        for version in versions:
            try:
                if version and version_in_range(dep.ecosystem, version, dep.declared):
                    return version
            except (ValueError, TypeError):
                break  # a range it cannot read (`file:../lib`, a URL)
    return versions[0]


def dependencies(source: Snapshot | pygit2.Tree | pygit2.Commit) -> list[Dependency]:
    return scan(source).dependencies


def _listed(tree: pygit2.Tree, path: str) -> pygit2.Blob | None:
    """The blob at `path` when a scan of `tree` reads it (`_manifests_under`'s rules), else None."""
    folders, _, name = path.rpartition("/")
    if any(part in ("node_modules", ".git") for part in folders.split("/")):
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    if not isinstance(entry, pygit2.Blob) or entry.filemode not in (0o100644, 0o100755):
        return None
    folder = folders.rsplit("/", 1)[-1]
    if name in _MANIFEST_PARSERS or name in _LOCKFILES or toolchains.is_workflow(path):
        return entry
    return entry if name.endswith(".txt") and _is_requirements(f"{folder}/{name}") else None


def _by_key(found: Iterable[Dependency]) -> dict[tuple[str, str], list[Dependency]]:
    out: dict[tuple[str, str], list[Dependency]] = {}
    for d in found:
        out.setdefault((d.ecosystem, d.name), []).append(d)
    return out


def _may_name(blob: pygit2.Blob, ecosystem: str, names: frozenset[str]) -> bool:
    """Can this manifest or lockfile declare or lock one of `names`? A file names a dependency in its
    own letters (pypi's normalised): one of plain ASCII without escapes that holds none of them does not."""
    if ecosystem == "toolchain":
        return True  # `.nvmrc` names node by its own name, not in its text
    data = bytes(blob.data)
    if not data.isascii() or b"\\" in data:
        return True
    text = data.decode("ascii")
    text = normalize_name(ecosystem, text)
    return any(name in text for name in names)


Versions = dict[tuple[str, str], tuple[str, str]]


def moved(
    before: pygit2.Tree, after: pygit2.Tree, paths: Iterable[str] | None = None
) -> tuple[Versions, Versions, set[tuple[str, str]]]:
    """`resolved_versions` of both trees and the direct dependencies of `after`. Given `paths`,
    every path where the two trees differ, only for the dependencies whose entries in those files
    differ: every other one has the same entries in both trees, and so the same version (a lockfile
    that does not lock it does not resolve it); the files read are then those that may name one of
    them (`_may_name`), not every manifest of the trees."""
    if paths is None:
        now = dependencies(after)
        return (
            resolved_versions(dependencies(before)),
            resolved_versions(now),
            {(d.ecosystem, d.name) for d in now if is_direct(d)},
        )
    changed: set[tuple[str, str]] = set()
    for path in dict.fromkeys(paths):
        sides = [_by_key(_parsed(path, b)[0]) if (b := _listed(t, path)) is not None else {} for t in (before, after)]
        changed |= {k for k in sides[0].keys() | sides[1].keys() if sides[0].get(k) != sides[1].get(k)}
    if not changed:
        return {}, {}, set()
    wanted: dict[str, frozenset[str]] = {}
    for ecosystem, name in changed:
        wanted[ecosystem] = wanted.get(ecosystem, frozenset()) | {name}

    def keep(path: str, blob: pygit2.Blob) -> bool:
        return any(e in wanted and _may_name(blob, e, wanted[e]) for e in manifest_ecosystems(path))

    old = [d for d in scan(before, keep).dependencies if (d.ecosystem, d.name) in changed]
    new = [d for d in scan(after, keep).dependencies if (d.ecosystem, d.name) in changed]
    return resolved_versions(old), resolved_versions(new), {(d.ecosystem, d.name) for d in new if is_direct(d)}


def is_direct(dep: Dependency) -> bool:
    """Declared in a manifest (not only locked, not go's `// indirect`): chosen, not pulled in."""
    return posixpath.basename(dep.path) not in _LOCKFILES and dep.note != "indirect"


# --- manifests --------------------------------------------------------------------------------


def _pep508(path: str, spec: str, note: str | None, problems: list[str]) -> Dependency | None:
    # packaging is imported on use: 45 ms (its grammar compiles), paid by every preflight and hook
    # otherwise, while only Python manifests need it.
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        problems.append(f"{path}: invalid requirement {spec!r}: {exc}")
        return None
    declared = str(req.specifier) or None
    pins = list(req.specifier)
    locked = (
        pins[0].version if len(pins) == 1 and pins[0].operator in ("==", "===") and "*" not in pins[0].version else None
    )
    return Dependency("pypi", normalize_pypi(req.name), declared, locked, path, note)


def _pyproject(path: str, text: str, problems: list[str]) -> Iterator[Dependency]:
    doc = toolchains.read_toml(text)
    project = doc.get("project", {})
    groups: list[tuple[str | None, Any]] = [(None, project.get("dependencies", []))]
    groups += [(f"optional:{extra}", deps) for extra, deps in project.get("optional-dependencies", {}).items()]
    groups += [(f"group:{g}", deps) for g, deps in doc.get("dependency-groups", {}).items()]
    for note, specs in groups:
        for spec in specs:
            if isinstance(spec, str) and (dep := _pep508(path, spec, note, problems)) is not None:
                yield Dependency(dep.ecosystem, dep.name, dep.declared, None, path, note)
    poetry = doc.get("tool", {}).get("poetry", {})
    tables: list[tuple[str | None, Any]] = [
        (None, poetry.get("dependencies", {})),
        ("dev", poetry.get("dev-dependencies", {})),
    ]
    tables += [(f"group:{g}", body.get("dependencies", {})) for g, body in poetry.get("group", {}).items()]
    for note, table in tables:
        for name, value in table.items():
            if name.lower() == "python":
                continue
            constraint = value.get("version") if isinstance(value, dict) else value
            optional = isinstance(value, dict) and value.get("optional")
            yield Dependency(
                "pypi",
                normalize_pypi(name),
                constraint if isinstance(constraint, str) else None,
                None,
                path,
                note or ("optional" if optional else None),
            )
    yield from _toolchain(path, toolchains.pyproject(doc))


def _requirements(path: str, text: str, problems: list[str]) -> Iterator[Dependency]:
    for raw in re.sub(r"\\\r?\n", " ", text).splitlines():
        line = re.split(r"(?:^|\s)#", raw, maxsplit=1)[0].strip()
        if not line or line.startswith("-") or "://" in line or line.startswith(("git+", ".", "/")):
            continue
        line = re.split(r"\s--?\w", line, maxsplit=1)[0]  # trailing options: --hash=…
        if " @ " in line:  # a direct URL reference
            continue
        if (dep := _pep508(path, line.split(";")[0].strip(), None, problems)) is not None:
            yield dep


_NPM_FIELDS = (
    ("dependencies", None),
    ("devDependencies", "dev"),
    ("peerDependencies", "peer"),
    ("optionalDependencies", "optional"),
)


def _package_json(path: str, text: str, problems: list[str]) -> Iterator[Dependency]:
    doc = json.loads(text)
    if not isinstance(doc, dict):
        problems.append(f"{path}: not a JSON object")
        return
    for key, note in _NPM_FIELDS:
        table = doc.get(key) or {}
        if not isinstance(table, dict):
            problems.append(f"{path}: {key} is not an object")
            continue
        for name, spec in table.items():
            yield Dependency("npm", name, spec if isinstance(spec, str) else None, None, path, note)
    yield from _toolchain(path, toolchains.package_json(doc))


def _go_mod(path: str, text: str, problems: list[str]) -> Iterator[Dependency]:
    replaced: dict[str, str] = {}
    required: list[tuple[str, str, bool]] = []
    block: str | None = None  # the verb of the ( … ) block we are in
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block is not None:
            if line == ")":
                block = None
                continue
            verb, body = block, line
        else:
            verb, _, body = line.partition(" ")
            body = body.strip()
            if body == "(":
                block = verb
                continue
        if verb == "require":
            parts = body.split()
            if len(parts) != 2:
                problems.append(f"{path}: cannot read require line {body!r}")
                continue
            required.append((parts[0].strip('"'), parts[1], "// indirect" in raw))
        elif verb == "replace" and "=>" in body:
            old, _, new = body.partition("=>")
            replaced[old.split()[0].strip('"')] = " ".join(new.split())
    for module, version, indirect in required:
        note = f"replaced by {replaced[module]}" if module in replaced else "indirect" if indirect else None
        yield Dependency("go", module, version, version, path, note)
    yield from _toolchain(path, toolchains.go_mod(text))


def _cargo_toml(path: str, text: str, problems: list[str]) -> Iterator[Dependency]:
    doc = toolchains.read_toml(text)
    tables: list[tuple[str | None, Any]] = []
    for base in (doc, *doc.get("target", {}).values()):
        tables += [
            (None, base.get("dependencies", {})),
            ("dev", base.get("dev-dependencies", {})),
            ("build", base.get("build-dependencies", {})),
        ]
    tables.append(("workspace", doc.get("workspace", {}).get("dependencies", {})))
    for note, table in tables:
        for name, value in table.items():
            if isinstance(value, str):
                yield Dependency("cargo", name, value, None, path, note)
            elif isinstance(value, dict):
                version = value.get("version")
                yield Dependency(
                    "cargo",
                    value.get("package", name),
                    version if isinstance(version, str) else None,
                    None,
                    path,
                    note or ("workspace" if value.get("workspace") else None),
                )
            else:
                problems.append(f"{path}: cannot read dependency {name!r}")
    yield from _toolchain(path, toolchains.cargo_toml(doc))


def _toolchain(path: str, entries: Iterable[toolchains.Entry]) -> Iterator[Dependency]:
    for name, declared, locked, note in entries:
        yield Dependency("toolchain", name, declared, locked, path, note)


def _version_file(path: str, text: str, problems: list[str]) -> Iterator[Dependency]:
    return _toolchain(path, toolchains.version_file(posixpath.basename(path), text))


def _workflow(path: str, text: str) -> Iterator[Dependency]:
    yield from _toolchain(path, toolchains.workflow(text))
    yield from _actions(path, text)


# `uses: owner/repo[/path]@ref`, and the version a commit pin is commented with (`@<sha> # v4.1.2`):
# read from the lines, as YAML drops comments; kept where the YAML has that step or job, not a line
# of a `run:` script
_USES = re.compile(r"^[ \t-]*uses:[ \t]*['\"]?([\w.-]+/[\w./-]+)@([\w./-]+)['\"]?[ \t]*(?:#[ \t]*(\S+))?", re.MULTILINE)
_COMMIT = re.compile(r"[0-9a-f]{7,40}")


def _actions(path: str, text: str) -> Iterator[Dependency]:
    found = list(_USES.finditer(text))
    used = toolchains.workflow_uses(text) if found else set()
    for m in found:
        name, ref, comment = m.groups()
        written = comment if _COMMIT.fullmatch(ref) else ref  # a commit pin's version is its comment
        version = toolchains.version(written) if written else None
        if version is not None and f"{name}@{ref}" in used:  # a branch or an uncommented commit: none
            yield Dependency("actions", name.lower(), ref, version, path)


_MANIFEST_PARSERS = {
    "pyproject.toml": _pyproject,
    "package.json": _package_json,
    "go.mod": _go_mod,
    "Cargo.toml": _cargo_toml,
    **dict.fromkeys(toolchains.VERSION_FILES, _version_file),
}


# --- lockfiles ------------------------------------------------------------------------------------


def _toml_packages(path: str, text: str, ecosystem: str) -> Iterator[Dependency]:
    for pkg in toolchains.read_toml(text).get("package", []):
        source = pkg.get("source")
        if ecosystem == "cargo" and source is None:
            continue  # a workspace member: the project itself
        if isinstance(source, dict) and ({"editable", "virtual"} & source.keys()):
            continue  # uv: the project itself
        name = pkg["name"]
        yield Dependency(
            ecosystem, normalize_pypi(name) if ecosystem == "pypi" else name, None, str(pkg["version"]), path
        )


def _poetry_lock(path: str, text: str) -> Iterator[Dependency]:
    return _toml_packages(path, text, "pypi")


# Cargo writes its lockfile in one layout: `[[package]]` tables of `key = "value"` lines. Read that
# layout directly (a large workspace's Cargo.lock: 2 ms instead of 11 ms in a TOML parser, on both sides of
# every change that touches it); anything else in it (an escape, a table that is not a package)
# goes to the TOML parser.
_CARGO_PACKAGE = re.compile(
    r'^\[\[package\]\]\n((?:[a-z]+ = (?:"[^"\\\n]*"|\[(?:\n "[^"\\\n]*",)*\n?\])\n)*)', re.MULTILINE
)
_CARGO_FIELD = re.compile(r'^(name|version|source) = "([^"\\\n]*)"$', re.MULTILINE)


# The same layout with each package's name, version and source first, in that order, as cargo writes
# them: one `findall` reads the lot, a third of the time (docs/benchmarks.md). A lockfile
# of which it does not read every package whole (another order, a field twice) is read as above.
_CARGO_ORDERED = re.compile(
    r'^\[\[package\]\]\nname = "([^"\\\n]*)"\nversion = "([^"\\\n]*)"\n(source = "[^"\\\n]*"\n)?'
    r'(?:(?!name |version |source )[a-z]+ = (?:"[^"\\\n]*"|\[(?:\n "[^"\\\n]*",)*\n?\])\n)*(?![a-z]+ = )',
    re.MULTILINE,
)


def _cargo_lock(path: str, text: str) -> Iterator[Dependency]:
    text = text.replace("\r\n", "\n")
    if "\\" not in text and len(ordered := _CARGO_ORDERED.findall(text)) == text.count("[[package]]"):
        # (without a source: a workspace member, the project itself)
        return iter([Dependency("cargo", name, None, version, path) for name, version, source in ordered if source])
    return _cargo_lock_fields(path, text)


def _cargo_lock_fields(path: str, text: str) -> Iterator[Dependency]:
    packages = [dict(_CARGO_FIELD.findall(m.group(1))) for m in _CARGO_PACKAGE.finditer(text)]
    if (
        len(packages) != text.count("[[package]]")
        or "\\" in text
        or any("name" not in p or "version" not in p for p in packages)
    ):
        yield from _toml_packages(path, text, "cargo")
        return
    for pkg in packages:
        if "source" in pkg:  # without one, a workspace member: the project itself
            yield Dependency("cargo", pkg["name"], None, pkg["version"], path)


def _pipfile_lock(path: str, text: str) -> Iterator[Dependency]:
    doc = json.loads(text)
    for section, note in (("default", None), ("develop", "dev")):
        for name, body in (doc.get(section) or {}).items():
            version = body.get("version") if isinstance(body, dict) else None
            if isinstance(version, str):
                yield Dependency("pypi", normalize_pypi(name), None, version.lstrip("="), path, note)


def _package_lock(path: str, text: str) -> Iterator[Dependency]:
    doc = json.loads(text)
    seen: set[tuple[str, str]] = set()
    packages = doc.get("packages")
    if isinstance(packages, dict):  # lockfile v2 and v3
        # top-level node_modules/x first: the version the project itself resolves
        for key in sorted(packages, key=lambda k: (k.count("node_modules/"), k)):
            body = packages[key]
            if "node_modules/" not in key or not isinstance(body, dict) or body.get("link"):
                continue
            name, version = key.rsplit("node_modules/", 1)[1], body.get("version")
            if isinstance(version, str) and (name, version) not in seen:
                seen.add((name, version))
                yield Dependency("npm", name, None, version, path, "dev" if body.get("dev") else None)
        return
    stack: list[Mapping[str, Any]] = [doc.get("dependencies") or {}]  # lockfile v1
    while stack:
        for name, body in stack.pop().items():
            version = body.get("version")
            if isinstance(version, str) and (name, version) not in seen:
                seen.add((name, version))
                yield Dependency("npm", name, None, version, path, "dev" if body.get("dev") else None)
            if isinstance(body.get("dependencies"), dict):
                stack.append(body["dependencies"])


_LOCK_PARSERS = {
    "poetry.lock": _poetry_lock,
    "uv.lock": lambda p, t: _toml_packages(p, t, "pypi"),
    "Pipfile.lock": _pipfile_lock,
    "package-lock.json": _package_lock,
    "Cargo.lock": _cargo_lock,
}


# --- version ranges ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SemVer:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def key(self) -> tuple[Any, ...]:
        # A release sorts after its prereleases; numeric identifiers sort before alphanumeric ones.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)


_PARTIAL = re.compile(
    r"v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?"
)
_OPS = ("<=", ">=", "<", ">", "=", "^", "~")
_LOWEST = ("0",)  # 2.0.0-0: below every 2.0.0 prerelease, so `<2.0.0-0` shuts all of 2.0.0 out


def parse_semver(text: str) -> SemVer:
    m = _PARTIAL.fullmatch(text.strip().lstrip("="))
    if not m or any(g is None or not g.isdigit() for g in m.groups()[:3]):
        raise ValueError(f"not a semantic version: {text!r}")
    return SemVer(int(m[1]), int(m[2]), int(m[3]), tuple(m[4].split(".")) if m[4] else ())


Comparator = tuple[str, SemVer]


def _comparators(op: str, text: str, bare: str) -> list[Comparator]:
    """One written comparator (``^1.2``, ``>=1.2.3``, ``1.x``) as plain comparators."""
    m = _PARTIAL.fullmatch(text)
    if not m:
        raise ValueError(f"not a version: {text!r}")
    parts = [int(g) if g is not None and g.isdigit() else None for g in m.groups()[:3]]
    for i in range(1, 3):  # anything after a wildcard is a wildcard
        if parts[i - 1] is None:
            parts[i] = None
    pre = tuple(m[4].split(".")) if m[4] else ()
    major, minor, patch = parts
    if major is None:
        return [] if op in ("", "=", "^", "~", ">=", "<=") else [("<", SemVer(0, 0, 0, _LOWEST))]
    op = op or bare
    low = SemVer(major, minor or 0, patch or 0, pre)
    if op == "^":
        if major > 0 or minor is None:
            high = SemVer(major + 1, 0, 0, _LOWEST)
        elif minor > 0 or patch is None:
            high = SemVer(0, minor + 1, 0, _LOWEST)
        else:
            high = SemVer(0, 0, patch + 1, _LOWEST)
        return [(">=", low), ("<", high)]
    if op == "~":
        high = SemVer(major + 1, 0, 0, _LOWEST) if minor is None else SemVer(major, minor + 1, 0, _LOWEST)
        return [(">=", low), ("<", high)]
    # The first version after the written partial one: 1 → 2.0.0, 1.2 → 1.3.0 (None if complete).
    nxt = (major + 1, 0, 0) if minor is None else (major, minor + 1, 0) if patch is None else None
    if op == "=":
        return [("=", low)] if nxt is None else [(">=", low), ("<", SemVer(*nxt, _LOWEST))]
    if op == ">":
        return [(">", low)] if nxt is None else [(">=", SemVer(*nxt))]
    if op == "<=":
        return [("<=", low)] if nxt is None else [("<", SemVer(*nxt, _LOWEST))]
    if op == "<":
        return [("<", low if nxt is None or pre else SemVer(low.major, low.minor, low.patch, _LOWEST))]
    return [(">=", low)]


def _holds(v: SemVer, op: str, c: SemVer) -> bool:
    a, b = v.key(), c.key()
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a == b}[op]


def _semver_sets(range_: str, ecosystem: str) -> list[list[Comparator]]:
    bare = {"npm": "=", "cargo": "^", "go": "="}[ecosystem]
    sets: list[list[Comparator]] = []
    for alternative in range_.split("||"):
        text = re.sub(r"(<=|>=|[<>=^~])\s+", r"\1", alternative.strip())
        if ecosystem == "npm" and (h := re.fullmatch(r"(\S+)\s+-\s+(\S+)", text)):  # hyphen range
            low = _comparators(">=", h[1], "=")
            high = _comparators("<=", h[2], "=")
            sets.append(low + high)
            continue
        comps: list[Comparator] = []
        for token in re.split(r"[\s,]+", text):
            if not token or token in ("*", "x", "X", "latest"):
                continue
            op = next((o for o in _OPS if token.startswith(o)), "")
            comps += _comparators(op, token[len(op) :], bare)
        sets.append(comps)
    return sets


def _semver_in_range(version: str, range_: str, ecosystem: str) -> bool:
    v = parse_semver(version)
    for comps in _semver_sets(range_, ecosystem):
        if not all(_holds(v, op, c) for op, c in comps):
            continue
        if not v.pre or ecosystem == "go":
            return True
        # npm and Cargo: a prerelease matches only a comparator that names a prerelease of the
        # same major.minor.patch (`>=1.2.3-beta` admits 1.2.3-rc, not 1.2.4-rc).
        if any(c.pre and (c.major, c.minor, c.patch) == (v.major, v.minor, v.patch) for _, c in comps):
            return True
    return False


def _poetry_to_pep440(range_: str) -> str:
    """Poetry's ``^``, ``~``, ``*`` and bare versions as a PEP 440 specifier string."""
    out: list[str] = []
    # (spaces made one first: the split ran from every space of a run to its end, 13 s for 40 KB)
    for token in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", " ".join(range_.split())):
        if not token or token == "*":
            continue
        if token.startswith(("^", "~")) and not token.startswith("~="):
            comps = _comparators(token[0], token[1:].strip(), "=")
            out += [f"{op}{c.major}.{c.minor}.{c.patch}" for op, c in comps]
        elif token[0].isdigit():
            out.append(f"=={token}")
        else:
            out.append(token)
    return ",".join(out)


def version_in_range(ecosystem: str, version: str, range_: str) -> bool:
    """Whether ``version`` satisfies ``range_`` under the ecosystem's rules.

    Raises ValueError for an unknown ecosystem or a version or range it cannot read.
    """
    if ecosystem == "pypi":
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # on use, as in _pep508
        from packaging.version import InvalidVersion, Version

        try:
            if "||" in range_:
                return any(version_in_range("pypi", version, alt) for alt in range_.split("||"))
            spec = range_.strip()
            if re.search(r"\^|~(?!=)|(^|,\s*)\*$|^\d", spec):
                spec = _poetry_to_pep440(spec)
            return SpecifierSet(spec).contains(Version(version), prereleases=True)
        except (InvalidSpecifier, InvalidVersion) as exc:
            raise ValueError(str(exc)) from exc
    if ecosystem == "npm":
        range_ = range_.strip().removeprefix("workspace:")
        if range_.startswith("npm:"):  # an alias: npm:real-name@^1.2
            range_ = range_.rpartition("@")[2]
        return _semver_in_range(version, range_, "npm")
    if ecosystem in ("cargo", "go"):
        return _semver_in_range(version, range_, ecosystem)
    if ecosystem in NEWEST_OF_FILES:
        return toolchains.in_range(version, range_)
    raise ValueError(f"unknown ecosystem {ecosystem!r}; expected one of {', '.join(ECOSYSTEMS)}")


# (spaces after the operator only with it: `\s*(?:==|=)?\s*` split a run of spaces every way, minutes on 30 KB)
_PINNED = re.compile(r"\s*(?:(?:==|=|v(?=\d))\s*)?(v?\d[\w.+-]*)\s*")
# "this version and no other"
EXACT_RANGE = {"pypi": "==", "npm": "", "cargo": "=", "go": "=", "toolchain": "=", "actions": "="}
_EXACT = re.compile(r"\s*(?:(?:==|=)\s*)?(v?\d[\w.+-]*)\s*")


def exact_pin(version_range: str) -> str | None:
    """The version an exact range (`EXACT_RANGE`: `=4.5.35`, `==1.2`, npm's bare `1.2.3`) names:
    what a harvested change moved a dependency to, not a range someone declared."""
    m = _EXACT.fullmatch(version_range)
    return m.group(1) if m else None


def resolved_versions(deps: Iterable[Dependency]) -> dict[tuple[str, str], tuple[str, str]]:
    """(ecosystem, name) -> (version, path): the locked version, else an exact pin in a manifest.

    What a manifest declares wins over what a lockfile alone locks (another folder's lockfile pulling
    the package in at another version); locked alone at several versions, a package has no one version."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    pulled: dict[tuple[str, str], dict[str, str]] = {}  # locked by lockfiles alone: version → lockfile
    for d in deps:
        if d.ecosystem in NEWEST_OF_FILES:  # the newest, so a bump in any one file shows
            key = (d.ecosystem, d.name)
            if d.locked and (key not in out or toolchains.newer(d.locked, out[key][0], shorter=True)):
                out[key] = (d.locked, d.path)
            continue
        if d.declared is None and posixpath.basename(d.path) in _LOCKFILES:
            if d.locked:
                pulled.setdefault((d.ecosystem, d.name), {}).setdefault(d.locked, d.path)
            continue
        declared = d.declared or ""
        # Cargo reads a bare "4.5" as ^4.5: only "=4.5.1" pins (npm's bare "1.2.3" and go's "v1.2.3" do)
        pinned = _PINNED.fullmatch(declared) if d.ecosystem != "cargo" or declared.lstrip().startswith("=") else None
        version = d.locked or (pinned.group(1) if pinned else None)
        if version and ((d.ecosystem, d.name) not in out or d.locked):
            out[(d.ecosystem, d.name)] = (version, d.path)
    for key, versions in pulled.items():
        if key not in out and len(versions) == 1:
            out[key] = next(iter(versions.items()))
    return out


_MANIFESTS = (
    "pyproject.toml",
    "requirements",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "package.json",
    "package-lock.json",
    "go.mod",
    "Cargo.toml",
    "Cargo.lock",
    *toolchains.VERSION_FILES,
)


def is_manifest(path: str) -> bool:
    """A file `dependencies` reads (a change to it may move a dependency)."""
    name = path.rsplit("/", 1)[-1]
    return any(name.startswith(m) for m in _MANIFESTS) or toolchains.is_workflow(path)


_MANIFEST_ECOSYSTEMS = {
    "pyproject.toml": "pypi",
    "package.json": "npm",
    "go.mod": "go",
    "Cargo.toml": "cargo",
    **_LOCKFILES,
    **dict.fromkeys(toolchains.VERSION_FILES, "toolchain"),
}


def manifest_ecosystem(path: str) -> str | None:
    """The ecosystem whose dependencies a manifest or lockfile declares (None: not one)."""
    name = path.rsplit("/", 1)[-1]
    if toolchains.is_workflow(path):
        return "actions"
    return _MANIFEST_ECOSYSTEMS.get(name) or ("pypi" if _is_requirements(path) else None)


_ALSO_TOOLCHAINS = ("pyproject.toml", "package.json", "go.mod", "Cargo.toml")


def manifest_ecosystems(path: str) -> tuple[str, ...]:
    """Every ecosystem a manifest or lockfile may name: a package.json names npm packages and toolchains,
    a workflow actions and toolchains."""
    ecosystem = manifest_ecosystem(path)
    if ecosystem is None:
        return ()
    also = ecosystem == "actions" or path.rsplit("/", 1)[-1] in _ALSO_TOOLCHAINS
    return (ecosystem, "toolchain") if also else (ecosystem,)
