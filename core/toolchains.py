"""Toolchain versions a revision names: the runtime and package manager a project builds with.

A toolchain is a dependency of the ecosystem ``toolchain`` (:mod:`comind.deps` registers the
readers), named ``node``, ``python``, ``go``, ``rust``, ``npm``, ``pnpm``, ``yarn`` or ``bun``:

* ``.nvmrc``, ``.node-version`` (node), ``.python-version`` (python; pyenv's first line),
  ``.tool-versions`` (asdf: ``<tool> <version> [<fallback> …]``, the first version;
  https://asdf-vm.com/manage/configuration.html);
* ``rust-toolchain`` and ``rust-toolchain.toml`` (``[toolchain] channel``, or the legacy single
  line; ``<channel>[-<date>]`` with channel ``stable|beta|nightly|<major.minor.patch>``:
  https://rust-lang.github.io/rustup/overrides.html);
* ``go.mod``'s ``go 1.22`` and ``toolchain go1.22.3`` directives (https://go.dev/doc/toolchain);
* ``package.json``'s ``packageManager`` (corepack's ``pnpm@8.6.0+sha512.…``, the hash dropped:
  https://nodejs.org/api/packages.html#packagemanager), ``volta`` and ``engines`` (a range);
  Cargo.toml's ``rust-version``; pyproject's ``requires-python`` and Poetry's ``python`` (ranges);
* GitHub Actions workflows (``.github/workflows/*.yml``): the ``with:`` of a setup action
  (``actions/setup-node`` ``node-version``, ``pnpm/action-setup`` ``version``, ``dtolnay/rust-toolchain``
  ``toolchain`` or its ``@1.75`` ref, …), a literal value only.

Only a version is read: channels and aliases (``stable``, ``nightly-2024-01-01``, ``lts/*``,
``node``, ``system``), expressions (``${{ matrix.node }}``) and lists (a matrix is several
toolchains at once, not one) are left out. A file that cannot be read raises ValueError.

Versions compare part by part (``18`` < ``18.1`` < ``20``; a ``v`` or ``go`` prefix and build
metadata dropped; ``20.x`` is ``20``); a prerelease (``1.21rc2``, ``3.13.0b1``, ``9.0.0-rc.1``) sorts
before its release. In a range, a version written with fewer parts stands for all of its releases:
``=20`` holds 20.11.1, ``>20`` starts at 21 (node-semver's partial versions, which nvm, rustup and
the setup actions resolve the same way).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

# (name, declared as written, the version it fixes or None for a range, note)
Entry = tuple[str, str | None, str | None, str | None]

VERSION_FILES = (
    ".nvmrc",
    ".node-version",
    ".python-version",
    ".tool-versions",
    "rust-toolchain",
    "rust-toolchain.toml",
)

_VERSION = re.compile(
    r"(?:v|go)?(\d{1,9}(?:\.\d{1,9}){0,5})(?:[-.]?(a|b|c|rc|alpha|beta|pre|preview)\.?(\d{1,9}))?(?:\+[0-9A-Za-z.-]*)?",
    re.ASCII,
)
_WILDCARD = re.compile(r"(?:\.[xX*])+$")
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_WIDTH = 6  # parts compared; a shorter version is padded with zeros


def version(text: str) -> str | None:
    """The version a literal names (`v20.11.0` → `20.11.0`, `go1.22rc1` → `1.22rc1`, `20.x` → `20`),
    or None for a channel, an alias or anything else."""
    text = _WILDCARD.sub("", text.strip().strip("'\""))
    m = _VERSION.fullmatch(text)
    return None if m is None else text[m.start(1) :].split("+", 1)[0]


def _parse(text: str) -> tuple[tuple[int, ...], tuple[int, int, int]]:
    """(the numbers as written, (1, 0, 0) for a release or (0, rank, n) for a prerelease)."""
    m = _VERSION.fullmatch(_WILDCARD.sub("", text.strip()))
    if m is None:
        raise ValueError(f"not a toolchain version: {text!r}")
    nums = tuple(int(n) for n in m[1].split("."))
    pre = (0, _PRE_RANK[m[2]], int(m[3])) if m[2] else (1, 0, 0)
    return nums, pre


def key(text: str) -> tuple[Any, ...]:
    """A sort key: `key("18") < key("18.1") < key("20rc1") < key("20")`. Raises ValueError."""
    nums, pre = _parse(text)
    return (*nums, *(0,) * (_WIDTH - len(nums)), *pre)


def newer(a: str, b: str, shorter: bool = False) -> bool:
    """Is version `a` after version `b` (False when either is unreadable)? With `shorter`, an equal
    version written shorter counts as after: `6` stands for all of 6.0.0's releases."""
    try:
        return key(a) > key(b) or (shorter and key(a) == key(b) and len(a) < len(b))
    except ValueError:
        return False


_TOKEN = re.compile(r"(===|==|!=|~=|<=|>=|<|>|=|\^|~)?(.*)")


def _holds(v: str, op: str, bound: str) -> bool:
    vk = key(v)
    bk = key(bound)
    nums, pre = _parse(bound)
    k = len(nums)
    vn = vk[:_WIDTH]
    prefix, whole = vn[:k], nums
    if op in ("", "=", "==", "==="):
        return vk == bk if pre[0] == 0 else prefix == whole
    if op == "!=":
        return not _holds(v, "=", bound)
    if op == ">=":
        return vk >= bk
    if op == "<":
        return vk < bk
    if op == ">":
        return vk > bk if pre[0] == 0 or k == _WIDTH else prefix > whole
    if op == "<=":
        return vk <= bk if pre[0] == 0 else prefix <= whole
    # ^1.70 keeps the first non-zero part (^0.8 the first two); ~1.2.3 the first two; ~=3.10 all but the last
    if op == "^":
        keep = next((i + 1 for i, n in enumerate(nums) if n), k)
    elif op == "~":
        keep = min(k, 2)
    else:  # ~=
        if k < 2:
            raise ValueError(f"~= needs two parts or more: {bound!r}")
        keep = k - 1
    return vk >= bk and vn[:keep] == nums[:keep]


def in_range(version_: str, range_: str) -> bool:
    """Whether a toolchain version is in a range: node-semver's operators (`^`, `~`, `>=`, `||`,
    hyphen ranges) and PEP 440's (`~=`, `==`, `!=`, `3.*`), parts compared as numbers.

    Raises ValueError for a version or range it cannot read.
    """
    key(version_)  # unreadable versions raise, whatever the range
    for alternative in range_.split("||"):
        text = re.sub(r"(===|==|!=|~=|<=|>=|[<>=^~])\s+", r"\1", alternative.strip())
        if h := re.fullmatch(r"(\S+)\s+-\s+(\S+)", text):
            comparators = [(">=", h[1]), ("<=", h[2])]
        else:
            comparators = []
            for token in re.split(r"[\s,]+", text):
                if token in ("", "*", "x", "X"):
                    continue
                m = _TOKEN.fullmatch(token)
                assert m is not None  # the pattern matches every string
                comparators.append((m[1] or "", m[2]))
        if all(_holds(version_, op, bound) for op, bound in comparators):
            return True
    return False


# --- version files ------------------------------------------------------------------------------

# asdf's plugin names, and mise's short ones
_ASDF = {
    "nodejs": "node",
    "node": "node",
    "python": "python",
    "golang": "go",
    "go": "go",
    "rust": "rust",
    "pnpm": "pnpm",
    "yarn": "yarn",
    "bun": "bun",
    "npm": "npm",
}


def _entry(name: str, written: object, note: str | None = None) -> Iterator[Entry]:
    if isinstance(written, (str, int, float)) and not isinstance(written, bool):
        text = str(written).strip()
        if (found := version(text)) is not None:
            yield (name, text, found, note)


def _lines(text: str) -> Iterator[str]:
    """The lines that say something: comments (`#`) and blanks left out."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            yield line


def read_toml(text: str) -> dict[str, Any]:
    """A TOML document, read as TOML 1.1 (a superset of the 1.0 that Python 3.11's tomllib reads:
    a manifest using 1.1's additions is read, not reported). tomli is tomllib's code, compiled: 3x
    faster on a workspace's Cargo.toml, read on both sides of every harvested change touching one."""
    import tomli  # on use: a check that reads no TOML file does not load the parser

    return tomli.loads(text)


def _rust_toolchain(text: str, toml: bool) -> Iterator[Entry]:
    if toml or "[toolchain]" in text or "=" in text:  # rustup reads TOML when it is not one bare line
        table = read_toml(text).get("toolchain", {})
        channel = table.get("channel") if isinstance(table, dict) else None
    else:
        channel = next(_lines(text), None)
    yield from _entry("rust", channel)


def version_file(name: str, text: str) -> Iterator[Entry]:
    """The toolchains a version file (one of `VERSION_FILES`, by name) names."""
    if name in (".nvmrc", ".node-version"):
        yield from _entry("node", next((line.split()[0] for line in _lines(text)), None))
    elif name == ".python-version":
        yield from _entry("python", next((line.split()[0] for line in _lines(text)), None))
    elif name == ".tool-versions":
        for line in _lines(text):
            tool, *versions = line.split()
            if tool in _ASDF and versions:
                yield from _entry(_ASDF[tool], versions[0])
    elif name in ("rust-toolchain", "rust-toolchain.toml"):
        yield from _rust_toolchain(text, name.endswith(".toml"))


# --- manifests ----------------------------------------------------------------------------------

_PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")
_ENGINES = ("node", *_PACKAGE_MANAGERS)


def package_json(doc: Mapping[str, Any]) -> Iterator[Entry]:
    manager = doc.get("packageManager")
    if isinstance(manager, str) and "@" in manager[1:]:
        name, _, written = manager.partition("@")
        if name in _PACKAGE_MANAGERS:
            yield from _entry(name, written.split("+", 1)[0], "packageManager")
    volta = doc.get("volta")
    if isinstance(volta, dict):
        for name in _ENGINES:
            yield from _entry(name, volta.get(name), "volta")
    engines = doc.get("engines")
    if isinstance(engines, dict):
        for name in _ENGINES:
            if isinstance(engines.get(name), str):
                yield (name, engines[name], None, "engines")


def go_mod(text: str) -> Iterator[Entry]:
    for raw in text.splitlines():
        words = raw.split("//", 1)[0].split()
        if len(words) != 2:
            continue
        if words[0] == "go":
            yield from _entry("go", words[1], "go")
        elif words[0] == "toolchain":  # go1.22.3, or go1.22.3-suffix for a custom build
            yield from _entry("go", words[1].split("-", 1)[0], "toolchain")


def cargo_toml(doc: Mapping[str, Any]) -> Iterator[Entry]:
    workspace = doc.get("workspace")
    for table in (doc.get("package"), workspace.get("package") if isinstance(workspace, dict) else None):
        if isinstance(table, dict):
            yield from _entry("rust", table.get("rust-version"), "rust-version")


def pyproject(doc: Mapping[str, Any]) -> Iterator[Entry]:
    project = doc.get("project")
    if isinstance(project, dict) and isinstance(project.get("requires-python"), str):
        yield ("python", project["requires-python"], None, "requires-python")
    poetry: Any = doc.get("tool")
    for key_ in ("poetry", "dependencies"):
        poetry = poetry.get(key_) if isinstance(poetry, dict) else None
    if isinstance(poetry, dict):
        python = next((v for k, v in poetry.items() if k.lower() == "python"), None)
        if isinstance(python, str):
            yield ("python", python, None, "requires-python")


# --- GitHub Actions workflows -------------------------------------------------------------------

# action → (toolchain, the `with:` input naming its version)
_SETUP_ACTIONS = {
    "actions/setup-node": ("node", "node-version"),
    "actions/setup-python": ("python", "python-version"),
    "actions/setup-go": ("go", "go-version"),
    "pnpm/action-setup": ("pnpm", "version"),
    "oven-sh/setup-bun": ("bun", "bun-version"),
    "dtolnay/rust-toolchain": ("rust", "toolchain"),
    "actions-rs/toolchain": ("rust", "toolchain"),
}


def is_workflow(path: str) -> bool:
    """A GitHub Actions workflow: GitHub reads them from the root's `.github/workflows/` only."""
    folder, _, name = path.rpartition("/")
    return folder == ".github/workflows" and name.endswith((".yml", ".yaml"))


@lru_cache(maxsize=4)  # a workflow is read for its toolchains and for its actions
def _yaml(text: str) -> Any:
    import yaml  # on use: only workflows need it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except (yaml.YAMLError, RecursionError) as exc:
        raise ValueError(f"not YAML: {exc}") from None


WORKFLOW_BYTES = 512 * 1024  # a workflow larger than this is not read (GitHub's own limit is lower)


def workflow_uses(text: str) -> set[str]:
    """The `owner/repo@ref` each step and each job of a workflow uses (not what a script says)."""
    if len(text) > WORKFLOW_BYTES:
        raise ValueError(f"over {WORKFLOW_BYTES // 1024} KiB: not read")
    doc = _yaml(text)
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    used: set[str] = set()
    for job in jobs.values() if isinstance(jobs, dict) else ():
        steps = job.get("steps") if isinstance(job, dict) else None
        for item in [job, *(steps if isinstance(steps, list) else ())]:
            uses = item.get("uses") if isinstance(item, dict) else None
            if isinstance(uses, str):
                used.add(uses.strip())
    return used


def workflow(text: str) -> Iterator[Entry]:
    if len(text) > WORKFLOW_BYTES:
        raise ValueError(f"over {WORKFLOW_BYTES // 1024} KiB: not read")
    if not any(action in text for action in _SETUP_ACTIONS):
        return  # no setup action named: nothing to parse (most workflows)
    doc = _yaml(text)
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, dict):
        return
    seen: set[int] = set()  # YAML aliases repeat one object: each read once, not once per alias
    for job in jobs.values():
        steps = job.get("steps") if isinstance(job, dict) else None
        if id(steps) in seen:
            continue
        seen.add(id(steps))
        for step in steps if isinstance(steps, list) else ():
            uses = step.get("uses") if isinstance(step, dict) else None
            if not isinstance(uses, str) or id(step) in seen:
                continue
            seen.add(id(step))
            action, _, ref = uses.partition("@")
            if action not in _SETUP_ACTIONS:
                continue
            name, field = _SETUP_ACTIONS[action]
            given = step.get("with")
            written = given.get(field) if isinstance(given, dict) else None
            if written is None and action == "dtolnay/rust-toolchain":
                written = ref  # dtolnay/rust-toolchain@1.75: the ref names the toolchain
            if isinstance(written, str) and ("${{" in written or "\n" in written.strip()):
                continue  # an expression or several versions: not one toolchain
            yield from _entry(name, written, action)
