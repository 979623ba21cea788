"""Anchor syntax as people write it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from comind.anchors import AnchorError, format_anchor, parse_anchor


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("app/perm.py::Checker.check", {"scope": "symbol", "path": "app/perm.py", "symbol": "Checker.check"}),
        ("app/perm.py", {"scope": "file", "path": "app/perm.py"}),
        ("app/perm.py:42", {"scope": "file", "path": "app/perm.py", "line": 42}),
        ("app/perm.py:42-50", {"scope": "file", "path": "app/perm.py", "line": 42, "end_line": 50}),
        ("src/handlers/", {"scope": "file", "path": "src/handlers/"}),
        ("module:myapp.db", {"scope": "module", "module": "myapp.db"}),
        ("dep:pypi/lance", {"scope": "dependency", "dep": {"ecosystem": "pypi", "package": "lance"}}),
        (
            "dep:pypi/requests@>=2,<3",
            {"scope": "dependency", "dep": {"ecosystem": "pypi", "package": "requests", "version_range": ">=2,<3"}},
        ),
        (
            "dep:npm/@types/node@^20",
            {"scope": "dependency", "dep": {"ecosystem": "npm", "package": "@types/node", "version_range": "^20"}},
        ),
        (
            "dep:toolchain/node@=20",
            {"scope": "dependency", "dep": {"ecosystem": "toolchain", "package": "node", "version_range": "=20"}},
        ),
        ("repo:", {"scope": "repo"}),
    ],
)
def test_forms(raw: str, expected: dict[str, object]) -> None:
    anchor = parse_anchor(raw)
    assert {k: v for k, v in anchor.items() if k not in ("raw", "role")} == expected
    assert anchor["raw"] == raw and anchor["role"] == "subject"
    assert format_anchor(anchor) == raw


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "/etc/passwd",
        "../outside.py",
        "a/./b.py",
        "a//b.py",
        "x.py::",
        "x.py::a b",
        "x.py:0",
        "x.py:9-3",
        "dep:maven/x",
        "dep:pypi/",
        "dep:pypi/x@",
        "module:",
        "a\x00b",
        "x" * 1001,
    ],
)
def test_bad_anchors_are_refused(raw: str) -> None:
    with pytest.raises(AnchorError):
        parse_anchor(raw)


def test_role_is_checked() -> None:
    assert parse_anchor("a.py", "context")["role"] == "context"
    with pytest.raises(AnchorError, match="role"):
        parse_anchor("a.py", "owner")


@given(st.text(max_size=80))
def test_parser_only_raises_anchor_errors(raw: str) -> None:
    try:
        anchor = parse_anchor(raw)
    except AnchorError:
        return
    assert anchor["scope"] in ("symbol", "file", "module", "repo", "dependency")


def test_an_absolute_path_through_a_linked_root_keeps_a_tracked_link_as_itself(tmp_path: Path) -> None:
    """`/…/repo-link/alias.py` names alias.py, itself a tracked link to a.py: the folders are resolved,
    not the file."""
    from comind.anchors import repository_path

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "alias.py").symlink_to("a.py")
    (tmp_path / "repo-link").symlink_to(root)
    assert repository_path(str(tmp_path / "repo-link" / "alias.py"), root, root) == "alias.py"
    assert repository_path(str(tmp_path / "repo-link" / "a.py"), root, root) == "a.py"


def test_the_root_named_through_a_link_is_the_root(tmp_path: Path) -> None:
    from comind.anchors import repository_path

    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "repo-link").symlink_to(root)
    with pytest.raises(AnchorError, match="the path is the repository root"):
        repository_path(str(tmp_path / "repo-link"), root, root)
