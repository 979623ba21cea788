"""Toolchain versions read from version files, manifests and workflows, and how they compare."""

from __future__ import annotations

import json
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from comind import toolchains
from comind.toolchains import in_range, key, version, version_file


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("20", "20"),
        ("v20.11.0", "20.11.0"),
        (" 18.17.1\n", "18.17.1"),
        ("20.x", "20"),
        ("3.12.*", "3.12"),
        ("go1.22.3", "1.22.3"),
        ("1.21rc2", "1.21rc2"),
        ("3.13.0b1", "3.13.0b1"),
        ("9.0.0-rc.1", "9.0.0-rc.1"),
        ("8.15.8+sha256.691fe176eea9a8a80df20e4976f3dfb44a04841ceb885638fe2a26174f81e65e", "8.15.8"),
        ("'1.75'", "1.75"),
        # channels, aliases and the like are not versions
        ("stable", None),
        ("nightly", None),
        ("nightly-2024-01-01", None),
        ("beta", None),
        ("lts/*", None),
        ("lts/iron", None),
        ("node", None),
        ("latest", None),
        ("system", None),
        ("16-nightly", None),
        ("3.13-dev", None),
        ("pypy3.10", None),
        ("1.75.0-x86_64-unknown-linux-gnu", None),
        ("${{ matrix.node }}", None),
        (">=18", None),
        ("", None),
    ],
)
def test_version(written: str, expected: str | None) -> None:
    assert version(written) == expected


def test_versions_compare_part_by_part() -> None:
    order = ["16.20.2", "18", "18.1", "18.10", "20rc1", "20.0.0-rc.2", "20", "20.0.1", "22"]
    assert sorted(order, key=key) == order
    assert key("20") == key("20.0.0") == key("v20.0")


@pytest.mark.parametrize(
    ("v", "range_", "expected"),
    [
        ("20", "=20", True),
        ("20.11.1", "=20", True),  # a partial version stands for its releases
        ("21.0.0", "=20", False),
        ("20.11.1", "=20.11.0", False),
        ("22", ">20", True),
        ("20.9", ">20", False),
        ("20.9", "<=20", True),
        ("19.9", "<20", True),
        ("20", "<20", False),
        ("18.17.0", ">=18", True),
        ("17.9.1", ">=18", False),
        ("18.2.0", "^18.0.0", True),
        ("19.0.0", "^18.0.0", False),
        ("0.8.9", "^0.8", True),
        ("0.9.0", "^0.8", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("18.2", "18 || 20", True),
        ("19", "18 || 20", False),
        ("19.5", "18.1 - 19", True),
        ("20", "18.1 - 19", False),
        ("20", ">=18 <21", True),
        ("21.1", ">= 18 < 21", False),
        ("3.12.1", ">=3.9", True),
        ("3.8.18", ">=3.9,<4", False),
        ("3.11.4", "~=3.10", True),
        ("4.0", "~=3.10", False),
        ("3.11.2", "==3.11.*", True),
        ("3.10.2", "!=3.9", True),
        ("3.9.1", "!=3.9", False),
        ("1.75.0", ">=1.70", True),
        ("v20.1.0", "=20", True),
        ("1.22rc1", ">=1.22", False),  # a prerelease comes before its release
        ("20", "*", True),
        ("20", "", True),
    ],
)
def test_in_range(v: str, range_: str, expected: bool) -> None:
    assert in_range(v, range_) is expected


@pytest.mark.parametrize(("v", "range_"), [("lts/*", ">=18"), ("20", "lts/*"), ("20", ">="), ("3.11", "~=3")])
def test_unreadable_versions_and_ranges_raise_value_error(v: str, range_: str) -> None:
    with pytest.raises(ValueError):
        in_range(v, range_)


# --- version files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (".nvmrc", "v20.11.0\n", [("node", "v20.11.0", "20.11.0", None)]),
        (".nvmrc", "# the LTS we ship on\n18\n", [("node", "18", "18", None)]),
        (".nvmrc", "lts/iron\n", []),
        (".node-version", "20.11.1", [("node", "20.11.1", "20.11.1", None)]),
        (".python-version", "3.12.1\n3.11.7\n", [("python", "3.12.1", "3.12.1", None)]),  # pyenv's first
        (".python-version", "pypy3.10-7.3.12\n", []),
        (
            ".tool-versions",
            "# asdf\nnodejs 20.11.0\npython 3.12.1 3.11.7 system  # fallbacks\ngolang 1.22.0\nruby 3.3.0\n"
            "pnpm 8.15.1\nrust nightly\n",
            [
                ("node", "20.11.0", "20.11.0", None),
                ("python", "3.12.1", "3.12.1", None),
                ("go", "1.22.0", "1.22.0", None),
                ("pnpm", "8.15.1", "8.15.1", None),
            ],
        ),
        ("rust-toolchain", "1.75.0\n", [("rust", "1.75.0", "1.75.0", None)]),
        ("rust-toolchain", "nightly-2024-01-01\n", []),
        (
            "rust-toolchain",
            '# rustup 1.23 reads TOML here too\n[toolchain]\nchannel = "1.76.0"\ncomponents = ["rustfmt"]\n',
            [("rust", "1.76.0", "1.76.0", None)],
        ),
        (
            "rust-toolchain.toml",
            '[toolchain]\nchannel = "1.77"\ncomponents = ["rustfmt", "clippy"]\ntargets = ["wasm32-unknown-unknown"]\n',
            [("rust", "1.77", "1.77", None)],
        ),
        ("rust-toolchain.toml", '[toolchain]\nchannel = "stable"\nprofile = "minimal"\n', []),
        ("rust-toolchain.toml", '[toolchain]\npath = "/opt/rust"\n', []),
    ],
)
def test_version_files(name: str, text: str, expected: list[toolchains.Entry]) -> None:
    assert list(version_file(name, text)) == expected


def test_a_malformed_rust_toolchain_toml_raises_value_error() -> None:
    with pytest.raises(ValueError):
        list(version_file("rust-toolchain.toml", "[toolchain\nchannel = "))


# --- manifests ----------------------------------------------------------------------------------


def test_package_json() -> None:
    doc = {
        "name": "web",
        "packageManager": "pnpm@8.15.8+sha256.691fe176eea9a8a80df20e4976f3dfb44a04841ceb885638fe2a26174f81e65e",
        "engines": {"node": ">=18.12", "pnpm": ">=8", "vscode": "^1.80.0"},
        "volta": {"node": "20.11.0", "yarn": "1.22.19", "extends": "../package.json"},
    }
    assert list(toolchains.package_json(doc)) == [
        ("pnpm", "8.15.8", "8.15.8", "packageManager"),
        ("node", "20.11.0", "20.11.0", "volta"),
        ("yarn", "1.22.19", "1.22.19", "volta"),
        ("node", ">=18.12", None, "engines"),  # a range: nothing locked
        ("pnpm", ">=8", None, "engines"),
    ]
    assert list(toolchains.package_json({"packageManager": "yarn@https://example.com/yarn.js"})) == []
    assert list(toolchains.package_json({"packageManager": 7, "engines": ["node"], "volta": "20"})) == []


def test_go_mod() -> None:
    text = "module example.com/shop\n\ngo 1.21\n\ntoolchain go1.21.3\n\nrequire golang.org/x/sync v0.8.0\n"
    assert list(toolchains.go_mod(text)) == [("go", "1.21", "1.21", "go"), ("go", "go1.21.3", "1.21.3", "toolchain")]
    prerelease = "module x\n\ngo 1.22rc1\ntoolchain default\n"
    assert list(toolchains.go_mod(prerelease)) == [("go", "1.22rc1", "1.22rc1", "go")]


def test_cargo_toml_and_pyproject() -> None:
    cargo = tomllib.loads(
        '[package]\nname = "app"\nrust-version = "1.70"\n[workspace.package]\nrust-version = "1.74"\n'
    )
    assert list(toolchains.cargo_toml(cargo)) == [
        ("rust", "1.70", "1.70", "rust-version"),
        ("rust", "1.74", "1.74", "rust-version"),
    ]
    member = tomllib.loads('[package]\nname = "core"\nrust-version = { workspace = true }\n')
    assert list(toolchains.cargo_toml(member)) == []
    pep621 = tomllib.loads('[project]\nname = "shop"\nrequires-python = ">=3.9"\n')
    assert list(toolchains.pyproject(pep621)) == [("python", ">=3.9", None, "requires-python")]
    poetry = tomllib.loads('[tool.poetry.dependencies]\nPython = "^3.10"\nDjango = "^4.2"\n')
    assert list(toolchains.pyproject(poetry)) == [("python", "^3.10", None, "requires-python")]


# --- workflows ----------------------------------------------------------------------------------

WORKFLOW = """\
name: CI
on: [push, pull_request]
jobs:
  test:
    strategy:
      matrix:
        node: [18, 20, 22]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v4
        with:
          version: 9.1.0
      - uses: actions/setup-node@v4
        with:
          node-version: ${{ matrix.node }}
          cache: pnpm
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-node@v4
        with:
          node-version: 20.x
      - uses: actions/setup-python@v5
        with:
          python-version: |
            3.11
            3.12
      - uses: actions/setup-python@v5
        with:
          python-version: '3.12'
      - uses: actions/setup-go@v5
        with:
          go-version-file: go.mod
      - uses: actions/setup-go@v5
        with:
          go-version: 1.22
  rust:
    runs-on: ubuntu-latest
    steps:
      - uses: dtolnay/rust-toolchain@1.75
      - uses: dtolnay/rust-toolchain@master
        with:
          toolchain: 1.76.0
      - uses: dtolnay/rust-toolchain@stable
      - uses: actions/setup-node@v4
        with:
          node-version: lts/*
"""


def test_workflow_reads_literal_setup_versions() -> None:
    assert list(toolchains.workflow(WORKFLOW)) == [
        ("pnpm", "9.1.0", "9.1.0", "pnpm/action-setup"),
        ("node", "20.x", "20", "actions/setup-node"),
        ("python", "3.12", "3.12", "actions/setup-python"),
        ("go", "1.22", "1.22", "actions/setup-go"),
        ("rust", "1.75", "1.75", "dtolnay/rust-toolchain"),
        ("rust", "1.76.0", "1.76.0", "dtolnay/rust-toolchain"),
    ]  # the matrix, the list of Pythons, the version file, `stable` and `lts/*` left out


def test_workflow_paths() -> None:
    assert toolchains.is_workflow(".github/workflows/ci.yml")
    assert toolchains.is_workflow(".github/workflows/release.yaml")
    assert not toolchains.is_workflow("packages/a/.github/workflows/ci.yml")  # GitHub reads the root's only
    assert not toolchains.is_workflow(".github/workflows/README.md")
    assert not toolchains.is_workflow(".github/dependabot.yml")


@pytest.mark.parametrize("text", ["jobs: [\n", "a: b: c\n", "[" * 5000])
def test_a_malformed_workflow_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        list(toolchains.workflow(f"# uses: actions/setup-node\n{text}"))
    assert list(toolchains.workflow(text)) == []  # naming no setup action, it is not parsed at all


# --- never raises but ValueError -----------------------------------------------------------------

_VALUES = st.one_of(
    st.text(max_size=20),
    st.integers(),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.sampled_from(["20", "v18.1.0", "pnpm@8.6.0", "1.75", "${{ matrix.x }}", ">=3.9", "lts/*"]),
)
_JSON = st.recursive(
    _VALUES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_KEYS = st.sampled_from(["packageManager", "engines", "volta", "node", "pnpm", "yarn", "name"])


@settings(max_examples=200, deadline=None)
@given(doc=st.dictionaries(_KEYS, _JSON, max_size=4))
def test_package_json_reader_never_raises(doc: dict[str, object]) -> None:
    for name, declared, locked, _ in toolchains.package_json(json.loads(json.dumps(doc, allow_nan=True))):
        assert name in ("node", "npm", "pnpm", "yarn", "bun") and isinstance(declared, str)
        assert locked is None or version(locked) == locked


_FILE_LINES = st.sampled_from(
    [
        "nodejs 20.11.0",
        "python 3.12.1 system",
        "v20",
        "lts/*",
        "[toolchain]",
        'channel = "1.75"',
        "channel = 1",
        "go 1.22",
        "toolchain go1.22.3",
        "jobs:",
        "  a:",
        "    steps:",
        "      - uses: actions/setup-node@v4",
        "        with:",
        "          node-version: 20",
        "      - uses: dtolnay/rust-toolchain@1.75",
        "# comment",
        "",
    ]
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.one_of(_FILE_LINES, st.text(max_size=25)), max_size=12))
def test_text_readers_raise_nothing_but_value_error(lines: list[str]) -> None:
    text = "\n".join(lines)
    readers = [lambda t, n=n: version_file(n, t) for n in toolchains.VERSION_FILES]
    for read in [*readers, toolchains.go_mod, toolchains.workflow]:
        try:
            found = list(read(text))
        except ValueError:
            continue
        for name, _, locked, _ in found:
            assert name in ("node", "python", "go", "rust", "npm", "pnpm", "yarn", "bun")
            assert locked is None or in_range(locked, f"={locked}")


def test_a_workflow_repeating_steps_by_alias_reads_each_once_and_a_huge_one_not_at_all() -> None:
    """Content of a merge request: YAML aliases may name one list of steps from every job."""
    steps = "s: &s\n" + "".join(
        f"  - uses: actions/setup-node@v4\n    with:\n      node-version: '{i}'\n" for i in range(50)
    )
    jobs = "jobs:\n" + "".join(f"  j{i}: {{steps: *s}}\n" for i in range(50))
    assert len(list(toolchains.workflow(steps + jobs))) == 50
    with pytest.raises(ValueError, match="not read"):
        list(toolchains.workflow("jobs: {}\n" + "#" * toolchains.WORKFLOW_BYTES))
