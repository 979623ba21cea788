"""Hostile configuration, rule files, secrets and control characters, through the command line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The classic billion-laughs document: 342 bytes that expand to 10^9 strings.
LAUGHS = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)

# Under 500 bytes: a graph check whose `forbid` list is a billion laughs.
RULE_LAUGHS = (
    "type: graph\nfrom: app/handlers/**\n"
    'x1: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "x2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "x3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "x4: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "x5: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "x6: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "x7: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "x8: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "x9: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "forbid: [*i]\n"
)


def one_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.code == 2 and result.err.count("\n") == 1 and "internal error" not in result.err, result.err
    return str(result.err)


@pytest.mark.parametrize("command", [["log"], ["check", "--base", "HEAD"], ["status"]])
def test_a_billion_laughs_config_is_one_line_error(repo: Path, cli, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    (repo / ".comind.yml").write_text(LAUGHS)
    assert "aliases (*name) are not allowed" in one_line(cli(repo, *command))


def test_a_billion_laughs_rule_file_is_one_line_error(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    rule = repo / "rule.yml"
    rule.write_text(RULE_LAUGHS)
    assert len(RULE_LAUGHS.encode()) < 500
    args = ["remember", "constraint", "--on", "a.py", "--title", "t", "--rule", "r", "--severity", "must"]
    said = one_line(cli(repo, *args, "--check", str(rule)))
    assert "aliases (*name) are not allowed" in said and str(rule) in said
    assert not (repo / ".comind" / "ledger").exists() or not list((repo / ".comind" / "ledger").rglob("*.json"))


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "deep", "inf", "digits"])
def test_hostile_config_files_are_one_line_errors(repo: Path, cli, kind: str) -> None:  # type: ignore[no-untyped-def]
    path = repo / ".comind.yml"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(
            {
                "deep": "store: " + "[" * 10_000 + "]" * 10_000,
                "inf": "dormant_days: .inf",
                "digits": "dormant_days: " + "7" * 5000,
            }[kind]
            + "\n"
        )
    assert one_line(cli(repo, "log")).startswith("comind: .comind.yml: ")
    rule = repo / "rule.yml"
    if kind == "dev-zero":
        rule.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(rule)
    else:
        rule.write_text("type: graph\nfrom: " + path.read_text())
    path.unlink()
    args = ["remember", "constraint", "--on", "a.py", "--title", "t", "--rule", "r", "--severity", "must"]
    assert str(rule) in one_line(cli(repo, *args, "--check", str(rule)))


@pytest.mark.parametrize("link", [".comind", ".comind/ledger/_ledger", ".comind/ledger/_ledger/inbox"])
def test_a_default_store_led_out_by_a_link_the_clone_holds_is_refused(repo: Path, cli, link: str) -> None:  # type: ignore[no-untyped-def]
    # no `store:` in .comind.yml: the default .comind/ledger, or its _ledger, is a link out of the repository
    outside = repo.parent / "outside"
    outside.mkdir()
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(outside)
    args = ["remember", "question", "--on", "a.py", "--title", "q", "--question", "?"]
    assert "store (the default): '.comind/ledger' is outside the repository" in one_line(cli(repo, *args))
    assert not any(outside.iterdir())
    chosen = cli(repo, "--store", ".comind/ledger", *args)  # the person running it may choose it
    assert chosen.code == 0 and any(outside.iterdir()), chosen.err


@pytest.mark.parametrize("store", ["''", "file:///etc", "/etc", "../outside"])
def test_a_store_outside_the_repository_is_refused(repo: Path, cli, store: str) -> None:  # type: ignore[no-untyped-def]
    (repo / ".comind.yml").write_text(f"store: {store}\n")
    args = ["remember", "question", "--on", "a.py", "--title", "q", "--question", "?"]
    assert "store: " in one_line(cli(repo, *args))
    assert not (repo / "_ledger").exists() and not (repo.parent / "outside").exists()


@pytest.mark.parametrize("command", [["log"], ["status"], ["why", "app/db.py"]])
def test_a_store_that_is_a_file_is_one_line(repo: Path, cli, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    (repo / ".comind.yml").write_text("store: app/db.py\n")
    assert "store 'app/db.py': " in one_line(cli(repo, *command))
    assert "is a file" in one_line(cli(repo, "--store", "app/db.py", *command))
