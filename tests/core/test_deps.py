"""Dependency sets read from manifests and lockfiles at a revision, and version ranges."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pygit2
import pytest
from gitrepo import GitRepo, cargo_lock
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from comind.codeindex import CodeIndex
from comind.deps import Dependency, dependencies, resolved_versions, scan, version_in_range

PYPROJECT = """\
[project]
name = "shop"
version = "1.0"
dependencies = [
    "Requests>=2.31,<3",
    "pydantic[email]~=2.5",
    "typing_extensions; python_version < '3.12'",
]

[project.optional-dependencies]
s3 = ["boto3>=1.34"]

[dependency-groups]
test = ["pytest>=8", {include-group = "lint"}]
lint = ["ruff"]
"""

UV_LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "shop"
version = "1.0"
source = { editable = "." }

[[package]]
name = "requests"
version = "2.32.3"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pydantic"
version = "2.9.2"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "urllib3"
version = "2.2.3"
source = { registry = "https://pypi.org/simple" }
"""

POETRY_PYPROJECT = """\
[tool.poetry]
name = "legacy"
version = "0.1.0"

[tool.poetry.dependencies]
python = "^3.9"
Django = "^4.2"
celery = { version = "~5.3", optional = true }
internal-lib = { path = "../lib" }

[tool.poetry.group.dev.dependencies]
black = "*"
"""

POETRY_LOCK = """\
[[package]]
name = "django"
version = "4.2.16"
description = "web framework"
optional = false
python-versions = ">=3.8"

[[package]]
name = "celery"
version = "5.3.6"
optional = true
python-versions = ">=3.8"

[[package]]
name = "asgiref"
version = "3.8.1"
optional = false
python-versions = ">=3.8"
"""

REQUIREMENTS = """\
# pinned by pip-compile
-r requirements-base.txt
--index-url https://pypi.example.com/simple
flask==3.0.3 \\
    --hash=sha256:aaaa
gunicorn>=21 ; sys_platform != "win32"
git+https://github.com/acme/thing.git#egg=thing
pkg @ https://example.com/pkg-1.0.tar.gz
-e ./local
Jinja2  # templates
"""

PIPFILE_LOCK = {
    "_meta": {"hash": {"sha256": "x"}},
    "default": {"attrs": {"version": "==23.2.0", "hashes": []}},
    "develop": {"mypy": {"version": "==1.11.2"}},
}

PACKAGE_JSON = {
    "name": "web",
    "version": "1.0.0",
    "dependencies": {"react": "^18.2.0", "lodash": "~4.17.21", "local-lib": "file:../lib"},
    "devDependencies": {"vite": "^5.4.0", "@types/node": "^20.0.0"},
    "peerDependencies": {"react-dom": ">=18"},
    "optionalDependencies": {"fsevents": "2.x"},
}

PACKAGE_LOCK = {
    "name": "web",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {
        "": {"name": "web", "dependencies": {"react": "^18.2.0"}},
        "node_modules/react": {"version": "18.3.1"},
        "node_modules/lodash": {"version": "4.17.21"},
        "node_modules/vite": {"version": "5.4.8", "dev": True},
        "node_modules/@types/node": {"version": "20.16.10", "dev": True},
        "node_modules/vite/node_modules/esbuild": {"version": "0.21.5", "dev": True},
        "node_modules/esbuild": {"version": "0.23.1", "dev": True},
        "node_modules/local-lib": {"resolved": "../lib", "link": True},
    },
}

PACKAGE_LOCK_V1 = {
    "name": "old",
    "lockfileVersion": 1,
    "dependencies": {"express": {"version": "4.17.1", "dependencies": {"debug": {"version": "2.6.9"}}}},
}

GO_MOD = """\
module example.com/shop

go 1.22

require github.com/lib/pq v1.10.9

require (
\tgolang.org/x/sync v0.8.0
\tgithub.com/google/uuid v1.6.0 // indirect
)

replace github.com/lib/pq => ../pq-fork

exclude (
\tgithub.com/bad/mod v1.0.0
)
"""

CARGO_WORKSPACE = """\
[workspace]
members = ["crates/*"]

[workspace.dependencies]
serde = { version = "1.0", features = ["derive"] }
"""

CARGO_CRATE = """\
[package]
name = "core"
version = "0.1.0"

[dependencies]
serde = { workspace = true }
tokio = { version = "1.38", features = ["full"] }
rand = "0.8"
my-log = { package = "log", version = "0.4" }
local = { path = "../local" }

[dev-dependencies]
proptest = "1"

[target.'cfg(unix)'.dependencies]
libc = "0.2"
"""

CARGO_LOCK = """\
version = 3

[[package]]
name = "core"
version = "0.1.0"

[[package]]
name = "serde"
version = "1.0.210"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "tokio"
version = "1.40.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "rand"
version = "0.8.5"
source = "registry+https://github.com/rust-lang/crates.io-index"
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo(tmp_path)
    r.write("pyproject.toml", PYPROJECT)
    r.write("uv.lock", UV_LOCK)
    r.write("services/legacy/pyproject.toml", POETRY_PYPROJECT)
    r.write("services/legacy/poetry.lock", POETRY_LOCK)
    r.write("requirements.txt", REQUIREMENTS)
    r.write("requirements/dev.txt", "pytest==8.3.3\n")
    r.write("tools/Pipfile.lock", json.dumps(PIPFILE_LOCK))
    r.write("web/package.json", json.dumps(PACKAGE_JSON))
    r.write("web/package-lock.json", json.dumps(PACKAGE_LOCK))
    r.write("web/node_modules/react/package.json", json.dumps({"dependencies": {"loose": "1"}}))
    r.write("old/package-lock.json", json.dumps(PACKAGE_LOCK_V1))
    r.write("go.mod", GO_MOD)
    r.write("Cargo.toml", CARGO_WORKSPACE)
    r.write("crates/core/Cargo.toml", CARGO_CRATE)
    r.write("Cargo.lock", CARGO_LOCK)
    r.commit("manifests")
    return r


def deps_of(repo: GitRepo) -> dict[tuple[str, str, str], Dependency]:
    tree = pygit2.Repository(str(repo.path)).revparse_single("HEAD").peel(pygit2.Tree)
    return {(d.ecosystem, d.name, d.path): d for d in dependencies(tree)}


def test_pypi_manifests_and_locks(repo: GitRepo) -> None:
    deps = deps_of(repo)
    assert deps[("pypi", "requests", "pyproject.toml")] == Dependency(
        "pypi", "requests", "<3,>=2.31", "2.32.3", "pyproject.toml"
    )
    assert deps[("pypi", "pydantic", "pyproject.toml")].locked == "2.9.2"
    assert deps[("pypi", "typing-extensions", "pyproject.toml")].declared is None  # the marker is dropped
    assert deps[("pypi", "boto3", "pyproject.toml")].note == "optional:s3"
    assert deps[("pypi", "pytest", "pyproject.toml")].note == "group:test"
    assert deps[("pypi", "ruff", "pyproject.toml")].declared is None
    # uv.lock: the project itself is not a dependency; undeclared locked packages are listed.
    assert ("pypi", "shop", "uv.lock") not in deps
    assert deps[("pypi", "urllib3", "uv.lock")] == Dependency("pypi", "urllib3", None, "2.2.3", "uv.lock")
    assert ("pypi", "requests", "uv.lock") not in deps  # claimed by the declaration


def test_poetry(repo: GitRepo) -> None:
    deps = deps_of(repo)
    path = "services/legacy/pyproject.toml"
    assert deps[("pypi", "django", path)] == Dependency("pypi", "django", "^4.2", "4.2.16", path)
    assert deps[("pypi", "celery", path)].note == "optional"
    assert deps[("pypi", "celery", path)].locked == "5.3.6"
    assert deps[("pypi", "black", path)] == Dependency("pypi", "black", "*", None, path, "group:dev")
    assert deps[("pypi", "internal-lib", path)].declared is None
    assert ("pypi", "python", path) not in deps
    assert deps[("pypi", "asgiref", "services/legacy/poetry.lock")].locked == "3.8.1"


def test_requirements_files(repo: GitRepo) -> None:
    deps = deps_of(repo)
    reqs = {name: d for (eco, name, path), d in deps.items() if path == "requirements.txt"}
    assert set(reqs) == {"flask", "gunicorn", "jinja2"}
    assert (reqs["flask"].declared, reqs["flask"].locked) == ("==3.0.3", "3.0.3")  # an exact pin locks
    assert (reqs["gunicorn"].declared, reqs["gunicorn"].locked) == (">=21", None)
    assert reqs["jinja2"].declared is None
    assert deps[("pypi", "pytest", "requirements/dev.txt")].locked == "8.3.3"
    assert deps[("pypi", "attrs", "tools/Pipfile.lock")].locked == "23.2.0"
    assert deps[("pypi", "mypy", "tools/Pipfile.lock")].note == "dev"


def test_npm(repo: GitRepo) -> None:
    deps = deps_of(repo)
    p = "web/package.json"
    assert deps[("npm", "react", p)] == Dependency("npm", "react", "^18.2.0", "18.3.1", p)
    assert deps[("npm", "@types/node", p)] == Dependency("npm", "@types/node", "^20.0.0", "20.16.10", p, "dev")
    assert deps[("npm", "react-dom", p)].note == "peer" and deps[("npm", "react-dom", p)].locked is None
    assert deps[("npm", "fsevents", p)].note == "optional"
    assert deps[("npm", "local-lib", p)].locked is None
    all_deps = dependencies(pygit2.Repository(str(repo.path)).revparse_single("HEAD").peel(pygit2.Tree))
    # Locked but not declared: listed once per version, nested copies included.
    assert {(d.name, d.locked, d.note) for d in all_deps if d.path == "web/package-lock.json"} == {
        ("esbuild", "0.23.1", "dev"),
        ("esbuild", "0.21.5", "dev"),
    }
    assert not any(d.name == "loose" for d in all_deps)  # nothing under node_modules/ is a manifest
    assert deps[("npm", "debug", "old/package-lock.json")].locked == "2.6.9"  # lockfile v1, nested


def test_go_mod(repo: GitRepo) -> None:
    deps = deps_of(repo)
    assert deps[("go", "github.com/lib/pq", "go.mod")] == Dependency(
        "go", "github.com/lib/pq", "v1.10.9", "v1.10.9", "go.mod", "replaced by ../pq-fork"
    )
    assert deps[("go", "golang.org/x/sync", "go.mod")].note is None
    assert deps[("go", "github.com/google/uuid", "go.mod")].note == "indirect"
    assert not any(name == "github.com/bad/mod" for (_, name, _) in deps)


def test_cargo(repo: GitRepo) -> None:
    deps = deps_of(repo)
    c = "crates/core/Cargo.toml"
    assert deps[("cargo", "tokio", c)] == Dependency("cargo", "tokio", "1.38", "1.40.0", c)
    assert deps[("cargo", "serde", c)] == Dependency("cargo", "serde", None, "1.0.210", c, "workspace")
    assert deps[("cargo", "serde", "Cargo.toml")].declared == "1.0"
    assert deps[("cargo", "log", c)].declared == "0.4"  # renamed with package = "log"
    assert deps[("cargo", "proptest", c)].note == "dev"
    assert deps[("cargo", "libc", c)].declared == "0.2"
    assert deps[("cargo", "local", c)].declared is None
    assert ("cargo", "core", "Cargo.lock") not in deps  # a workspace member


def test_resolved_versions_are_locked_or_pinned() -> None:
    deps = [
        Dependency("cargo", "clap", "4.5", None, "Cargo.toml"),
        Dependency("cargo", "log", "=0.4.2", None, "Cargo.toml"),
        Dependency("cargo", "serde", "1.0", "1.0.210", "Cargo.toml"),
        Dependency("npm", "react", "18.2.0", None, "p.json"),
        Dependency("npm", "vue", "^3", None, "p.json"),
        Dependency("go", "x/mod", "v0.3.1", "v0.3.1", "go.mod"),
        Dependency("pypi", "lance", "==0.7.3", None, "requirements.txt"),
    ]
    assert resolved_versions(deps) == {
        ("cargo", "log"): ("0.4.2", "Cargo.toml"),
        ("cargo", "serde"): ("1.0.210", "Cargo.toml"),
        ("npm", "react"): ("18.2.0", "p.json"),
        ("go", "x/mod"): ("v0.3.1", "go.mod"),
        ("pypi", "lance"): ("0.7.3", "requirements.txt"),
    }


def test_resolved_versions_prefer_declarations_to_what_lockfiles_pull_in() -> None:
    deps = [
        Dependency("npm", "source-map", "^0.5.0", "0.5.7", "package.json"),
        Dependency("npm", "source-map", None, "0.6.1", "packages/env/package-lock.json"),  # another folder's
        Dependency("npm", "micromatch", None, "2.3.11", "package-lock.json"),  # declared nowhere, at two versions
        Dependency("npm", "micromatch", None, "3.1.10", "package-lock.json"),
        Dependency("cargo", "clap_builder", None, "4.5.35", "Cargo.lock"),
        Dependency("cargo", "clap_builder", None, "4.5.35", "tools/Cargo.lock"),
    ]
    assert resolved_versions(deps) == {
        ("npm", "source-map"): ("0.5.7", "package.json"),
        ("cargo", "clap_builder"): ("4.5.35", "Cargo.lock"),
    }


def test_snapshot_and_revisions(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("web/package.json", json.dumps({**PACKAGE_JSON, "dependencies": {"react": "^19.0.0"}}))
    repo.commit("react 19")
    ix = CodeIndex(repo.path, tmp_path / "ix.sqlite")
    now = {(d.name, d.declared) for d in dependencies(ix.snapshot("HEAD")) if d.path == "web/package.json"}
    before = {(d.name, d.declared) for d in dependencies(ix.snapshot("HEAD~1")) if d.path == "web/package.json"}
    assert ("react", "^19.0.0") in now and ("react", "^18.2.0") in before
    commit = pygit2.Repository(str(repo.path)).revparse_single("HEAD~1").peel(pygit2.Commit)
    assert ("react", "^18.2.0") in {(d.name, d.declared) for d in dependencies(commit)}


def test_a_manifest_unchanged_between_revisions_is_parsed_once(repo: GitRepo) -> None:
    """Both sides of every harvested change are scanned; deno's Cargo.lock takes 27 ms to parse."""
    from comind import deps

    repo.write("web/package.json", json.dumps({**PACKAGE_JSON, "dependencies": {"react": "^19.0.0"}}))
    repo.commit("react 19")
    git = pygit2.Repository(str(repo.path))
    deps._PARSED.clear()
    before, after = (scan(git.revparse_single(rev).peel(pygit2.Tree)) for rev in ("HEAD~1", "HEAD"))
    parsed = sorted(path for path, _ in deps._PARSED)
    assert parsed.count("crates/core/Cargo.toml") == 1 and parsed.count("web/package.json") == 2
    react = {d.declared for s in (before, after) for d in s.dependencies if d.name == "react"}
    assert react == {"^18.2.0", "^19.0.0"}


def test_malformed_manifests_are_problems_not_crashes(tmp_path: Path) -> None:
    r = GitRepo(tmp_path)
    r.write("a/pyproject.toml", "[project\ndependencies = [")
    r.write("b/package.json", "{not json")
    r.write("c/package.json", "[1, 2]")
    r.write("d/requirements.txt", "good>=1\nthis is not a requirement!!\n")
    r.write("e/Cargo.lock", "[[package]]\nversion = '1'\nsource = 'registry+x'\n")  # no name
    r.write("f/go.mod", "module x\nrequire (\n\tonly-a-path\n)\n")
    r.write("g/package-lock.json", textwrap.dedent('{"packages": {"node_modules/x": {"version": "1.0.0"}}}'))
    r.write("h/pyproject.toml", b"\xff\xfe[project]")
    r.write("i/package.json", b'\xef\xbb\xbf{"dependencies": {"bom": "^1.0.0"}}')
    r.commit("broken")
    result = scan(pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree))
    problems = "\n".join(result.problems)
    for path in (
        "a/pyproject.toml",
        "b/package.json",
        "c/package.json",
        "d/requirements.txt",
        "e/Cargo.lock",
        "f/go.mod",
        "h/pyproject.toml",
    ):
        assert path in problems, path
    names = {d.name for d in result.dependencies}
    assert {"good", "x", "bom"} <= names
    assert not any("i/package.json" in p for p in result.problems)


# --- version ranges ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ecosystem", "version", "range_", "expected"),
    [
        ("npm", "1.2.3", "^1.2.0", True),
        ("npm", "2.0.0", "^1.2.0", False),
        ("npm", "0.2.5", "^0.2.3", True),
        ("npm", "0.3.0", "^0.2.3", False),
        ("npm", "0.0.4", "^0.0.3", False),
        ("npm", "1.2.9", "~1.2.3", True),
        ("npm", "1.3.0", "~1.2.3", False),
        ("npm", "1.5.0", "1.x", True),
        ("npm", "2.0.0", "1.x", False),
        ("npm", "3.0.0", "*", True),
        ("npm", "3.0.0", "", True),
        ("npm", "1.5.0", "1.2.3 - 2.3.4", True),
        ("npm", "2.3.5", "1.2.3 - 2.3.4", False),
        ("npm", "2.3.9", "1.2.3 - 2.3", True),
        ("npm", "2.4.0", "1.2.3 - 2.3", False),
        ("npm", "1.0.0", "<1.0.0 || >=2.0.0", False),
        ("npm", "2.1.0", "<1.0.0 || >=2.0.0", True),
        ("npm", "1.2.4-beta.1", "^1.2.3", False),
        ("npm", "1.2.3-beta.2", ">=1.2.3-beta.1", True),
        ("npm", "1.2.4-beta.2", ">=1.2.3-beta.1", False),
        ("npm", "1.2.3", ">= 1.2.3 < 1.3", True),
        ("npm", "1.3.0-rc.1", "<1.3", False),
        ("npm", "2.0.0", ">1.x", True),
        ("npm", "1.9.9", ">1.x", False),
        ("npm", "1.2.3", "workspace:^1.0.0", True),
        ("npm", "1.2.3", "npm:other@^1.1", True),
        ("npm", "v1.2.3", "=1.2.3", True),
        ("cargo", "1.4.0", "1.2", True),
        ("cargo", "2.0.0", "1.2", False),
        ("cargo", "0.1.9", "0.1", True),
        ("cargo", "0.2.0", "0.1", False),
        ("cargo", "1.2.5", "=1.2.5", True),
        ("cargo", "1.2.6", "=1.2.5", False),
        ("cargo", "1.3.0", ">=1.2, <1.5", True),
        ("cargo", "1.5.0", ">=1.2, <1.5", False),
        ("cargo", "1.2.7", "~1.2", True),
        ("cargo", "1.9.0", "1.*", True),
        ("go", "v1.2.3", ">=v1.2.0,<v2", True),
        ("go", "v2.0.0", ">=v1.2.0,<v2", False),
        ("go", "v1.2.3", "v1.2.3", True),
        ("go", "v1.2.4", "v1.2.3", False),
        ("go", "v0.0.0-20210101000000-abcdef123456", "<v0.1.0", True),
        ("pypi", "2.31.0", ">=2,<3", True),
        ("pypi", "3.0", ">=2,<3", False),
        ("pypi", "1.4.0", "~=1.2", True),
        ("pypi", "2.0.0rc1", ">=1.0", True),
        ("pypi", "1.2.1", "==1.2.*", True),
        ("pypi", "1.2.5", "^1.2", True),
        ("pypi", "2.0", "^1.2", False),
        ("pypi", "1.2.9", "~1.2.3", True),
        ("pypi", "1.3.0", "~1.2.3", False),
        ("pypi", "1.2.3", "1.2.3", True),
        ("pypi", "1.5", "*", True),
        ("pypi", "1.5", "<1.0 || >=1.4", True),
    ],
)
def test_version_in_range(ecosystem: str, version: str, range_: str, expected: bool) -> None:
    assert version_in_range(ecosystem, version, range_) is expected


@pytest.mark.parametrize(
    ("ecosystem", "version", "range_"),
    [
        ("npm", "not-a-version", "^1"),
        ("npm", "1.0.0", "^banana"),
        ("pypi", "1.0", ">=>1"),
        ("pypi", "nope", ">=1"),
        ("maven", "1.0", "1.0"),
    ],
)
def test_bad_versions_and_ranges_raise_value_error(ecosystem: str, version: str, range_: str) -> None:
    with pytest.raises(ValueError):
        version_in_range(ecosystem, version, range_)


versions = st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6))
prereleases = st.sampled_from([(), ("alpha",), ("beta", "2"), ("rc", "1"), ("0",)])


def fmt(v: tuple[int, int, int], pre: tuple[str, ...] = ()) -> str:
    return ".".join(map(str, v)) + ("-" + ".".join(pre) if pre else "")


@given(v=versions, pre=prereleases, base=versions, eco=st.sampled_from(["npm", "cargo"]))
def test_caret_is_the_documented_range(
    v: tuple[int, int, int], pre: tuple[str, ...], base: tuple[int, int, int], eco: str
) -> None:
    x, y, z = base
    version, b = fmt(v, pre), fmt(base)
    if x > 0:
        upper = f"{x + 1}.0.0"
    elif y > 0:
        upper = f"0.{y + 1}.0"
    else:
        upper = f"0.0.{z + 1}"
    explicit = f">={b} <{upper}" if eco == "npm" else f">={b}, <{upper}"
    assert version_in_range(eco, version, f"^{b}") == version_in_range(eco, version, explicit)
    assert version_in_range(eco, version, f"~{b}") == version_in_range(
        eco, version, f">={b} <{x}.{y + 1}.0" if eco == "npm" else f">={b}, <{x}.{y + 1}.0"
    )
    if eco == "cargo":
        assert version_in_range("cargo", version, b) == version_in_range("cargo", version, f"^{b}")


@given(v=versions, lo=versions, hi=versions)
def test_comparators_agree_with_pep440_order_on_releases(
    v: tuple[int, int, int], lo: tuple[int, int, int], hi: tuple[int, int, int]
) -> None:
    pv, plo, phi = Version(fmt(v)), Version(fmt(lo)), Version(fmt(hi))
    for eco in ("npm", "cargo"):
        assert version_in_range(eco, fmt(v), f">={fmt(lo)}") == (pv >= plo)
        assert version_in_range(eco, fmt(v), f"<{fmt(hi)}") == (pv < phi)
    assert version_in_range("go", "v" + fmt(v), f">=v{fmt(lo)},<=v{fmt(hi)}") == (plo <= pv <= phi)
    assert version_in_range("npm", fmt(v), f"{fmt(lo)} - {fmt(hi)}") == (plo <= pv <= phi)
    assert version_in_range("npm", fmt(v), f"<{fmt(lo)} || >{fmt(hi)}") == (pv < plo or pv > phi)
    assert version_in_range("pypi", fmt(v), f">={fmt(lo)},<={fmt(hi)}") == (plo <= pv <= phi)


CARGO_LOCK = """# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 3

[[package]]
name = "app"
version = "0.1.0"
dependencies = [
 "serde",
 "tokio 1.40.0",
]

[[package]]
name = "serde"
version = "1.0.210"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "c8e3592472072e6e22e0a54d5904d9febf8508f65fb8552499a1abc7d1078c3a"

[[package]]
name = "tokio"
version = "1.40.0"
source = "git+https://github.com/tokio-rs/tokio?branch=master#0123abc"
dependencies = [
 "serde",
]

[metadata]
"checksum serde 1.0.210 (registry+https://github.com/rust-lang/crates.io-index)" = "c8e3"
"""


@pytest.mark.parametrize(
    "lock",
    [
        CARGO_LOCK,
        CARGO_LOCK.replace("\n", "\r\n"),  # written on Windows
        CARGO_LOCK.replace('name = "serde"', 'name = "se\\u0072de"'),  # an escape: tomllib reads it
        CARGO_LOCK.replace('[[package]]\nname = "tokio"', '[[package]]\nname = "tokio"\nfeatures = { x = 1 }'),
        CARGO_LOCK.replace(
            'name = "serde"\nversion = "1.0.210"', 'version = "1.0.210"\nname = "serde"'
        ),  # another order
        CARGO_LOCK.replace('checksum = "c8e3', 'source = "registry+x"\nchecksum = "c8e3'),
    ],
)
def test_a_cargo_lock_reads_as_toml_reads_it(lock: str) -> None:
    from comind.deps import _cargo_lock, _toml_packages

    fast = list(_cargo_lock("Cargo.lock", lock))
    if 'source = "registry+x"' not in lock:  # (tomllib: a key defined twice is an error)
        assert fast == list(_toml_packages("Cargo.lock", lock.replace("\r\n", "\n"), "cargo"))
    assert [(d.name, d.locked) for d in fast] == [("serde", "1.0.210"), ("tokio", "1.40.0")]  # not the member


def test_cargo_writes_its_lockfile_in_an_order_read_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Name, version and source first in every package: one `findall`, not a dict per package."""
    from comind import deps

    def slow(path: str, text: str) -> object:
        raise AssertionError("read package by package")

    monkeypatch.setattr(deps, "_cargo_lock_fields", slow)
    found = list(deps._cargo_lock("Cargo.lock", CARGO_LOCK))
    assert [(d.name, d.locked, d.declared) for d in found] == [("serde", "1.0.210", None), ("tokio", "1.40.0", None)]
    with pytest.raises(AssertionError):  # one package in another order: package by package
        list(
            deps._cargo_lock(
                "Cargo.lock", CARGO_LOCK.replace('name = "app"\nversion', 'version = "0"\nname = "app"\nv')
            )
        )


# --- toolchains ------------------------------------------------------

CI_WORKFLOW = """\
name: CI
on: push
jobs:
  test:
    strategy:
      matrix:
        node: [18, 20]
    runs-on: ubuntu-latest
    steps:
      - uses: pnpm/action-setup@v4
        with:
          version: 9.1.0
      - uses: actions/setup-node@v4
        with:
          node-version: ${{ matrix.node }}
      - uses: actions/setup-node@v4
        with:
          node-version: 18
"""


def test_a_cargo_lock_of_two_versions_locks_the_declared_one(tmp_path: Path) -> None:
    r = GitRepo(tmp_path)
    r.write("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nsyn = "2"\n')
    r.write("Cargo.lock", cargo_lock(syn="1.0.109") + cargo_lock(syn="2.0.52").removeprefix("version = 3\n"))
    r.commit("two syns")
    assert deps_of(r)[("cargo", "syn", "Cargo.toml")].locked == "2.0.52"


def test_toolchains(tmp_path: Path) -> None:
    r = GitRepo(tmp_path)
    r.write(".nvmrc", "20\n")
    r.write(".python-version", "3.12.1\n")
    r.write(".tool-versions", "nodejs 20.11.0\ngolang 1.22.0\n")
    r.write("rust-toolchain.toml", '[toolchain]\nchannel = "1.77"\n')
    r.write("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\nrust-version = "1.70"\n')
    r.write("go.mod", "module example.com/x\n\ngo 1.21\n\ntoolchain go1.21.3\n")
    r.write("pyproject.toml", '[project]\nname = "x"\nversion = "1"\nrequires-python = ">=3.9"\n')
    r.write("web/package.json", json.dumps({"packageManager": "yarn@4.1.0", "engines": {"node": ">=18"}}))
    r.write(".github/workflows/ci.yml", CI_WORKFLOW)
    r.write("vendor/.github/workflows/ci.yml", CI_WORKFLOW.replace("9.1.0", "7.0.0"))  # not the repository's
    r.commit("toolchains")
    tree = pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree)
    found = scan(tree)
    assert found.problems == []
    chains = {(d.name, d.path, d.declared, d.locked) for d in found.dependencies if d.ecosystem == "toolchain"}
    assert chains == {
        ("node", ".nvmrc", "20", "20"),
        ("python", ".python-version", "3.12.1", "3.12.1"),
        ("node", ".tool-versions", "20.11.0", "20.11.0"),
        ("go", ".tool-versions", "1.22.0", "1.22.0"),
        ("rust", "rust-toolchain.toml", "1.77", "1.77"),
        ("rust", "Cargo.toml", "1.70", "1.70"),
        ("go", "go.mod", "1.21", "1.21"),
        ("go", "go.mod", "go1.21.3", "1.21.3"),
        ("python", "pyproject.toml", ">=3.9", None),
        ("yarn", "web/package.json", "4.1.0", "4.1.0"),
        ("node", "web/package.json", ">=18", None),
        ("pnpm", ".github/workflows/ci.yml", "9.1.0", "9.1.0"),
        ("node", ".github/workflows/ci.yml", "18", "18"),  # the matrix left out
    }
    # named in several files, a toolchain resolves to the newest of them
    assert {k[1]: v for k, v in resolved_versions(found.dependencies).items() if k[0] == "toolchain"} == {
        "node": ("20.11.0", ".tool-versions"),
        "python": ("3.12.1", ".python-version"),
        "go": ("1.22.0", ".tool-versions"),
        "rust": ("1.77", "rust-toolchain.toml"),
        "yarn": ("4.1.0", "web/package.json"),
        "pnpm": ("9.1.0", ".github/workflows/ci.yml"),
    }


@pytest.mark.parametrize(
    ("path", "manifest", "ecosystems"),
    [
        ("yarn.lock", False, ()),  # not read yet: their entries raised flags and no reland (replay-audit, D11)
        (".nvmrc", True, ("toolchain",)),
        ("api/.python-version", True, ("toolchain",)),
        ("rust-toolchain.toml", True, ("toolchain",)),
        (".github/workflows/ci.yml", True, ("actions", "toolchain")),
        ("package.json", True, ("npm", "toolchain")),
        ("go.mod", True, ("go", "toolchain")),
        ("Cargo.lock", True, ("cargo",)),
        ("docs/.github/workflows/ci.yml", False, ()),
        (".github/dependabot.yml", False, ()),
    ],
)
def test_manifests_and_their_ecosystems(path: str, manifest: bool, ecosystems: tuple[str, ...]) -> None:
    from comind.deps import is_manifest, manifest_ecosystems

    assert is_manifest(path) is manifest
    assert manifest_ecosystems(path) == ecosystems


@pytest.mark.parametrize(
    ("files", "after", "moved_to"),
    [
        ({".nvmrc": "18\n"}, {".nvmrc": "20\n"}, {("toolchain", "node"): "20"}),
        (
            {"package.json": '{"packageManager": "pnpm@8.6.0"}'},
            {"package.json": '{"packageManager": "pnpm@9.1.0+sha512.abc"}'},
            {("toolchain", "pnpm"): "9.1.0"},
        ),
        (
            {".github/workflows/ci.yml": CI_WORKFLOW},
            {".github/workflows/ci.yml": CI_WORKFLOW.replace("node-version: 18", "node-version: 22")},
            {("toolchain", "node"): "22"},
        ),
        (
            {".github/workflows/ci.yml": CI_WORKFLOW},
            {".github/workflows/ci.yml": CI_WORKFLOW.replace("actions/setup-node@v4", "actions/setup-node@v5")},
            {("actions", "actions/setup-node"): "5"},
        ),
    ],
)
def test_moved_reads_the_new_files(
    tmp_path: Path, files: dict[str, str], after: dict[str, str], moved_to: dict[tuple[str, str], str]
) -> None:
    from comind.deps import moved

    r = GitRepo(tmp_path)
    for path, text in files.items():
        r.write(path, text)
    r.commit("before")
    for path, text in after.items():
        r.write(path, text)
    r.commit("after")
    git = pygit2.Repository(str(r.path))
    trees = [git.revparse_single(rev).peel(pygit2.Tree) for rev in ("HEAD~1", "HEAD")]
    for paths in (list(after), None):  # the changed files only, and both whole trees
        old, new, direct = moved(*trees, paths)
        moves = {k: v for k, (v, _) in new.items() if old.get(k, (None,))[0] != v}
        assert moves == moved_to
        assert set(moved_to) <= direct


ACTIONS_WORKFLOW = """\
jobs:
  build:
    steps:
      - uses: actions/checkout@v4
      - name: Cache
        uses: "actions/cache@v3.3.1"
      - uses: pnpm/action-setup@0e279bb959325dab635dd2c09392533439d90093 # v6.0.8
      - uses: Org/Tool/sub/action@11bd71901bbe5b1630ceea73d27597364c9af683
      - uses: owner/nightly@main
      - uses: ./.github/actions/install
      - uses: docker://alpine:3.19
  release:
    uses: org/workflows/.github/workflows/release.yml@v2 # a reusable workflow
  older:
    steps:
      - uses: actions/checkout@v3
"""


def test_the_actions_a_workflow_uses_are_dependencies(tmp_path: Path) -> None:
    """Dependabot and Renovate bump them: a commit pin's version is the comment they write after it;
    a branch, an uncommented commit, a local or a docker action names no version."""
    r = GitRepo(tmp_path)
    r.write(".github/workflows/ci.yml", ACTIONS_WORKFLOW)
    r.write("docs/.github/workflows/ci.yml", ACTIONS_WORKFLOW.replace("@v4", "@v9"))  # not the repository's
    r.commit("workflows")
    tree = pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree)
    found = [(d.name, d.declared, d.locked) for d in scan(tree).dependencies if d.ecosystem == "actions"]
    assert found == [
        ("actions/checkout", "v4", "4"),
        ("actions/cache", "v3.3.1", "3.3.1"),
        ("pnpm/action-setup", "0e279bb959325dab635dd2c09392533439d90093", "6.0.8"),
        ("org/workflows/.github/workflows/release.yml", "v2", "2"),
        ("actions/checkout", "v3", "3"),
    ]
    versions = resolved_versions(scan(tree).dependencies)
    assert versions[("actions", "actions/checkout")] == ("4", ".github/workflows/ci.yml")  # the newest
    r.write(".github/workflows/a.yml", "jobs:\n  a:\n    steps:\n      - uses: actions/checkout@v4.0.0\n")
    r.commit("v4.0.0 first")
    tree = pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree)
    versions = resolved_versions(scan(tree).dependencies)
    assert versions[("actions", "actions/checkout")] == ("4", ".github/workflows/ci.yml")  # v4 holds v4.0.0
    assert version_in_range("actions", "6.0.8", "=6") and not version_in_range("actions", "5.0.0", "=6")


def test_actions_are_read_from_steps_and_jobs_not_scripts_and_named_in_any_case(tmp_path: Path) -> None:
    from comind.deps import moved

    script = "      - run: |\n          cat > ci.yml <<'YAML'\n          - uses: actions/checkout@v9\n          YAML\n"
    before = "jobs:\n  a:\n    steps:\n      - uses: Swatinem/rust-cache@v2\n      - uses: actions/checkout@v4\n"
    r = GitRepo(tmp_path)
    r.write(".github/workflows/ci.yml", before + script)
    r.commit("before")
    tree = pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree)
    versions = resolved_versions(scan(tree).dependencies)
    assert versions[("actions", "actions/checkout")][0] == "4"  # not the script's v9
    r.write(".github/workflows/ci.yml", before.replace("rust-cache@v2", "rust-cache@v3") + script)
    r.commit("after")
    git = pygit2.Repository(str(r.path))
    trees = [git.revparse_single(rev).peel(pygit2.Tree) for rev in ("HEAD~1", "HEAD")]
    for paths in ([".github/workflows/ci.yml"], None):
        old, new, _direct = moved(*trees, paths)
        assert new[("actions", "swatinem/rust-cache")][0] == "3" and old[("actions", "swatinem/rust-cache")][0] == "2"


def test_toolchain_ranges_and_pins() -> None:
    from comind.deps import EXACT_RANGE, exact_pin

    assert EXACT_RANGE["toolchain"] == "="
    assert exact_pin("=20") == "20" and exact_pin("=1.21rc2") == "1.21rc2"
    assert version_in_range("toolchain", "20.11.1", "=20")
    assert not version_in_range("toolchain", "22", "=20")
    assert version_in_range("toolchain", "22", ">20")
    with pytest.raises(ValueError):
        version_in_range("toolchain", "lts/*", "=20")


def test_new_malformed_files_are_problems_not_crashes(tmp_path: Path) -> None:
    r = GitRepo(tmp_path)
    r.write("rust-toolchain.toml", "[toolchain\n")
    r.write(".github/workflows/ci.yml", "# uses: actions/setup-node\njobs: [\n")
    r.write(".nvmrc", b"\xff\xfe20")
    r.write("c/package.json", '{"dependencies": {"ok": "^1.0.0"}, "packageManager": ["pnpm"]}')
    r.commit("broken")
    result = scan(pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree))
    for path in ("rust-toolchain.toml", ".github/workflows/ci.yml", ".nvmrc"):
        assert sum(p.startswith(f"{path}: ") for p in result.problems) == 1, path
    assert [(d.name, d.declared) for d in result.dependencies] == [("ok", "^1.0.0")]


_FUZZ_REPO: list[pygit2.Repository] = []


def _blob(data: bytes) -> pygit2.Blob:
    if not _FUZZ_REPO:
        import tempfile

        _FUZZ_REPO.append(pygit2.init_repository(tempfile.mkdtemp(prefix="comind-fuzz-"), bare=True))
    repo = _FUZZ_REPO[0]
    blob = repo[repo.create_blob(data)]
    assert isinstance(blob, pygit2.Blob)
    return blob


_FRAGMENTS = st.sampled_from(
    [
        b"lockfileVersion: '9.0'\n",
        b"packages:\n",
        b"importers:\n  .:\n    dependencies:\n      a:\n        version: 1.0.0\n",
        b"  /a/1.0.0_b@2.0.0:\n    dev: true\n",
        b'"a@^1", a@~1.1:\n  version "1.2.3"\n',
        b"__metadata:\n  version: 8\n",
        b'{"packageManager": "pnpm@8.6.0", "engines": {"node": ">=18"}}',
        b'[toolchain]\nchannel = "1.75"\n',
        b"jobs:\n  a:\n    steps:\n      - uses: actions/setup-node@v4\n        with:\n          node-version: 20\n",
        b"v20\n",
        b"\xff\xfe",
        b"\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(
        [
            "yarn.lock",
            "pnpm-lock.yaml",
            ".nvmrc",
            ".tool-versions",
            "rust-toolchain",
            "rust-toolchain.toml",
            ".github/workflows/ci.yml",
            "package.json",
            "go.mod",
        ]
    ),
    parts=st.lists(st.one_of(_FRAGMENTS, st.binary(max_size=40)), max_size=8),
)
def test_parsing_any_bytes_never_raises(name: str, parts: list[bytes]) -> None:
    from comind.deps import _parsed

    found, problems = _parsed(name, _blob(b"".join(parts)))
    assert all(p.startswith(f"{name}: ") for p in problems)
    assert all(isinstance(d, Dependency) and d.path == name for d in found)


def test_a_manifest_crafted_for_the_version_patterns_is_read_in_one_pass(tmp_path: Path) -> None:
    # a change may carry any manifest: a run of spaces was split every way (30 KB took 20 s, quadratic)
    from comind.deps import exact_pin

    spaces = " " * 1_000_000
    r = GitRepo(tmp_path)
    r.write(
        "package.json", json.dumps({"dependencies": {"left-pad": spaces + "x", "react": f"{spaces}18.2.0{spaces}"}})
    )
    r.commit("crafted")
    tree = pygit2.Repository(str(r.path)).revparse_single("HEAD").peel(pygit2.Tree)
    versions = resolved_versions(scan(tree).dependencies)
    assert ("npm", "left-pad") not in versions and versions[("npm", "react")] == ("18.2.0", "package.json")
    assert exact_pin(spaces + "x") is None and exact_pin(f"=={spaces}1.2") == "1.2"
    assert version_in_range("pypi", "1.2.0", f"^1.0{spaces},<2")
