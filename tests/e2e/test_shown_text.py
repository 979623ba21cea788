"""Text shown to people carries no control of any kind (issue 24, item 7): terminal escapes, C0/C1
controls, bidi and tag characters are stripped when a record is made (CLI, harvest, import) and
again on every output path (log, show, search, why, check's formats), for stores written before."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from conftest import git

from comind.records import canonical, content_hash
from comind.store import INBOX

# OSC 8 link, window title, screen clear, reset, C1 CSI, a bidi override and a tag character.
TERMINAL = "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\x1b]0;pwned\x07\x1b[2J\x1bc\x9b31m\x07\x00"
HOSTILE = TERMINAL + "\u202etxt\u202c\U000e0041"
# What an older version stored raw: terminal controls (a bidi or tag character made a record corrupt).


def has_control(text: str) -> bool:
    return any(
        (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or unicodedata.category(c) == "Cf" for c in text
    )


@pytest.fixture
def old_store(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    """A record as an older version stored it: the controls in its text, its hash right."""
    assert cli(repo, "init").code == 0
    args = ["remember", "gotcha", "--on", "a.py::f", "--title", "Escapes", "--symptom", "symptom"]
    assert cli(repo, *args, "--cause", "because", "--body", "first line\nsecond line").code == 0
    folder = repo / ".comind" / "ledger" / INBOX
    (path,) = folder.iterdir()
    data = json.loads(path.read_bytes())
    data["title"] += TERMINAL
    data["fields"] = {"symptom": "symptom" + TERMINAL, "cause": "because" + TERMINAL}
    data["body"] = "first line" + TERMINAL + "\nsecond line"
    data["hash"] = content_hash(data)
    path.unlink()
    (folder / f"{data['id']}-{data['hash']}.json").write_bytes(canonical(data))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "records")
    return repo


@pytest.mark.parametrize(
    "command",
    [("log",), ("show", "placeholder"), ("search", "Escapes"), ("why", "a.py"), ("status",)],
)
def test_readers_print_no_control_from_an_old_store(old_store: Path, cli, command: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    if command[0] == "show":
        listed = cli(old_store, "log").out.split()
        command = ("show", listed[0])
    result = cli(old_store, *command)
    assert result.code in (0, 1), result.err
    assert "Escapes" in result.out or "symptom" in result.out or command[0] == "status", result.out
    assert not has_control(result.out + result.err), repr(result.out)


@pytest.mark.parametrize("fmt", ["github", "markdown", "text", "gitlab", "json", "sarif"])
def test_check_formats_print_no_control_from_an_old_store(old_store: Path, cli, fmt: str) -> None:  # type: ignore[no-untyped-def]
    (old_store / "a.py").write_text(
        "def f(items, limit):\n    total = sum(x * x for x in items)\n    return min(total, limit) or None\n"
    )
    git(old_store, "commit", "-qam", "change a")
    result = cli(old_store, "check", "--base", "HEAD~1", "--format", fmt, "--fail-level", "none")
    assert result.code == 0, result.err
    assert "Escapes" in result.out, result.out
    assert not has_control(result.out), repr(result.out)
    if fmt == "github":  # a workflow command is one line: no record text may start another
        assert all(line.startswith("::") or not line for line in result.out.splitlines()), result.out


def test_json_output_escapes_what_a_terminal_would_read(old_store: Path, cli) -> None:  # type: ignore[no-untyped-def]
    out = cli(old_store, "log", "--json").out
    assert not has_control(out)
    record = json.loads(out.splitlines()[0])
    assert record["title"].startswith("Escapes\x1b]8;;")  # the data itself is unchanged (its hash holds)


def test_remember_stores_no_control(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli(repo, "init").code == 0
    args = ["remember", "gotcha", "--on", "a.py", "--title", "T" + HOSTILE + "\nnext", "--symptom", "s" + HOSTILE]
    assert cli(repo, *args, "--cause", "c", "--body", "one" + HOSTILE + "\ntwo\tcol").code == 0
    stored = next((repo / ".comind" / "ledger" / INBOX).iterdir()).read_text()
    data = json.loads(stored)
    assert not has_control(data["title"]) and "\n" not in data["title"]
    assert data["body"] == "oneclicktxt\ntwo\tcol"  # a multi-line field keeps its lines and tabs
    assert not re.search(r"\\u00(1b|9b)|\\u202e", stored) and not has_control(stored.replace("\\n", ""))


def test_harvest_stores_no_control_from_a_commit_message(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (repo / "a.py").write_text("def f():\n    return 3\n")
    hostile = HOSTILE.replace("\x00", "")  # git refuses a NUL in a message
    git(repo, "commit", "-qam", "Use three" + hostile + "\n\nRejected: two" + hostile + " | breaks" + hostile)
    assert cli(repo, "harvest").code == 0
    stored = "".join(p.read_text() for p in (repo / ".git" / "comind").rglob("*.json"))
    assert "Rejected" in stored or "two" in stored
    assert "\x1b" not in stored and "\x9b" not in stored and "\u202e" not in stored
    assert not re.search(r"\\u00(1b|9b)|\\u202e", stored)
    assert not has_control(cli(repo, "log").out)


def test_import_strips_controls_an_older_export_holds(old_store: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "dump.ndjson"
    assert cli(old_store, "ledger", "export", "--output", str(dump)).code == 0
    assert "\\u001b" in dump.read_text()  # the export is the store's bytes
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "initial")
    assert cli(other, "init").code == 0
    assert cli(other, "ledger", "import", str(dump)).code == 0
    stored = "".join(p.read_text() for p in (other / ".comind" / "ledger").rglob("*.json"))
    assert "Escapes" in stored and not re.search(r"\\u00(1b|9b|07|00)", stored)


def runner_commands(log: str) -> list[str]:
    """The lines a GitHub runner reads as workflow commands: `::name::` first on the line (after the
    indent), `##[name]` anywhere (its older form, still honoured)."""
    return [line for line in log.splitlines() if line.lstrip().startswith("::") or "##[" in line]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_prints_no_workflow_command_a_history_wrote(repo: Path, cli, fmt: str) -> None:  # type: ignore[no-untyped-def]
    # a CI log is read by its runner: history may not mask words in it, stop its commands or annotate
    git(repo, "commit", "-q", "--allow-empty", "-m", "Set up\n\nConstraint: ##[add-mask]comind on app/db.py")
    (repo / "app" / "db.py").write_text("def raw_query(sql):\n    cache = {}\n    cache[sql] = sql\n    return sql\n")
    git(repo, "commit", "-qam", "Cache queries")
    reason = "It broke prod.\n\n::warning file=app/db.py::all clear\n\n##[stop-commands]x and ##[error]spoofed"
    git(repo, "revert", "--no-edit", "HEAD")
    git(repo, "commit", "-q", "--amend", "-m", f'Revert "Cache queries"\n\n{reason}')
    git(repo, "checkout", "-q", "-b", "again")
    (repo / "app" / "db.py").write_text("def raw_query(sql):\n    cache = {}\n    cache[sql] = sql\n    return sql\n")
    git(repo, "commit", "-qam", "Cache queries again")
    assert cli(repo, "harvest").code == 0
    result = cli(repo, "check", "--base", "main", "--format", fmt, "--fail-level", "none")
    assert result.code == 0, result.err
    assert "all clear" in result.out and "stop-commands" in result.out, result.out
    assert runner_commands(result.out + result.err) == [], result.out
    if fmt == "json":  # the same data: an escape, not a change
        report = json.loads(result.out)
        assert any("##[stop-commands]x" in f["message"] for f in report["findings"]), report


@pytest.mark.parametrize("command", [("log",), ("show", "placeholder"), ("search", "mask"), ("why", "a.py")])
def test_readers_print_no_workflow_command_a_record_holds(repo: Path, cli, command: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    # `comind log` in a CI job: a record's text may not mask words in its log, stop its commands or annotate it
    assert cli(repo, "init").code == 0
    args = ["remember", "gotcha", "--on", "a.py::f", "--title", "##[add-mask]comind", "--symptom", "mask"]
    assert cli(repo, *args, "--cause", "::warning::all clear", "--body", "ok\n::error file=a.py::spoofed").code == 0
    if command[0] == "show":
        command = ("show", cli(repo, "log").out.split()[0])
    result = cli(repo, *command)
    assert result.code in (0, 1), result.err
    assert "add-mask" in result.out, result.out
    assert runner_commands(result.out + result.err) == [], result.out
