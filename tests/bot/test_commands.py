"""/comind commands: finding them in comments, parsing them, and the records they make."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from comind.bot.commands import (
    MAX_COMMANDS,
    USAGE,
    Command,
    CommandError,
    Origin,
    Resolver,
    answered_keys,
    command_lines,
    command_records,
    parse_command,
    parse_commands,
    why_answer,
)
from comind.mergerequests import Note
from comind.records import harvested_id
from comind.workspace import Workspace

# --- finding command lines ---------------------------------------------------------------------


def test_only_lines_starting_with_the_prefix_outside_code_and_quotes() -> None:
    body = "\n".join(
        [
            "Thanks! Two things:",
            '/comind remember gotcha "Cache is per process" --symptom stale --cause local',
            "> /comind help",
            "```",
            "/comind why a.py",
            "```",
            "~~~~",
            "/comind why b.py",
            "~~~",  # shorter: does not close the ~~~~ fence
            "/comind why c.py",
            "~~~~~",
            "   /comind confirm 0123abcd",  # up to three spaces, as Markdown allows
            "    /comind confirm 4567abcd",  # four: an indented code block
            "see /comind help inline",
            "/cominder help",
            "/comind",
        ]
    )
    assert command_lines(body) == [
        '/comind remember gotcha "Cache is per process" --symptom stale --cause local',
        "/comind confirm 0123abcd",
        "/comind",
    ]


def test_crlf_bodies_and_the_cap_on_commands_per_comment() -> None:
    body = "\r\n".join(["/comind help"] * (MAX_COMMANDS + 5))
    assert command_lines(body) == ["/comind help"] * MAX_COMMANDS


# --- parsing ---------------------------------------------------------------------------------------


def test_remember_with_quotes_flags_and_lists() -> None:
    command = parse_command(
        "/comind remember decision “Sessions live in Redis” --chosen redis "
        '--alternative "memcached | no persistence" --alternative=jwt --because "we revoke sessions" '
        "--on app/session.py::Store --context app/auth.py --evidence https://example.com/adr/7 --until 2027-01"
    )
    assert command.action == "remember" and command.kind == "decision"
    assert command.title == "Sessions live in Redis"
    assert command.because == "we revoke sessions"
    assert command.on == ("app/session.py::Store",) and command.context == ("app/auth.py",)
    assert command.evidence == ("https://example.com/adr/7",) and command.until == "2027-01"
    assert command.kind_values() == {"chosen": "redis", "alternative": ["memcached | no persistence", "jwt"]}


def test_an_unquoted_title_is_the_words_before_the_first_flag() -> None:
    command = parse_command("/comind remember question Why is the retry   loop unbounded --question why?")
    assert command.title == "Why is the retry loop unbounded"
    assert command.kind_values() == {"question": "why?"}


def test_review_actions_why_and_help() -> None:
    assert parse_command("/comind confirm 0123ABCD still true after the move") == Command(
        "confirm",
        "/comind confirm 0123ABCD still true after the move",
        target="0123abcd",
        reason="still true after the move",
    )
    assert parse_command("/comind retract 01234567-89ab-cdef-0123-456789abcdef").target.endswith("abcdef")
    assert parse_command("/comind why app/auth.py::Session").anchor == "app/auth.py::Session"
    assert parse_command("/comind HELP me").action == "help"
    supersede = parse_command('/comind supersede 0123abcd "Sessions live in Postgres" --chosen postgres')
    assert (supersede.action, supersede.target, supersede.title) == (
        "supersede",
        "0123abcd",
        "Sessions live in Postgres",
    )
    assert supersede.kind_values() == {"chosen": "postgres"}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("/comind", "which command"),
        ("/comind frobnicate", "unknown command"),
        ("/comind remember", "needs a kind"),
        ('/comind remember wish "x"', "unknown kind"),
        ("/comind remember decision", "title is required"),
        ("/comind remember decision --chosen x", "title is required"),
        ('/comind remember decision "unbalanced', "quotes"),
        ("/comind remember decision T --rule r", "--rule does not apply to a decision"),
        ("/comind remember decision T --colour blue", "unknown flag --colour"),
        ("/comind remember decision T --chosen", "--chosen needs a value"),
        ("/comind remember decision T --chosen a --chosen b", "--chosen is given twice"),
        ("/comind remember decision T --because a stray", "unexpected 'stray'"),
        ("/comind remember decision T --alternative '| why'", "option | why not"),
        ("/comind remember decision " + "x" * 130, "at most 120"),
        ("/comind confirm", "needs the id"),
        ("/comind confirm d-1", "not a record id"),
        ("/comind why", "one anchor"),
        ("/comind why a.py b.py", "one anchor"),
        ("/comind supersede 0123abcd", "title is required"),
    ],
)
def test_malformed_commands_name_the_problem_and_carry_the_usage(line: str, problem: str) -> None:
    with pytest.raises(CommandError) as info:
        parse_command(line)
    assert problem in info.value.problem
    assert info.value.usage.startswith("/comind")


def test_parse_commands_keeps_errors_in_place() -> None:
    parsed = parse_commands("/comind help\n/comind nope\n/comind why a.py")
    assert isinstance(parsed[0], Command) and isinstance(parsed[1], CommandError)
    assert isinstance(parsed[2], Command) and parsed[2].anchor == "a.py"
    assert "remember" in USAGE and "--alternative" in USAGE


# --- fuzzing -------------------------------------------------------------------------------------

WORDS = st.sampled_from(
    [
        "remember",
        "confirm",
        "retract",
        "dispute",
        "supersede",
        "why",
        "help",
        "decision",
        "attempt",
        "constraint",
        "gotcha",
        "question",
        "intent",
        "suppression",
        "--on",
        "--because",
        "--chosen",
        "--alternative",
        "--rule",
        "--severity",
        "must",
        "--outcome",
        "failed",
        "--evidence",
        "--until",
        "--on=a.py",
        "--x",
        "--",
        "-",
        "a.py:3",
        "a.py::A.b",
        "0123abcd",
        '"',
        "'",
        "“",
        "”",
        "\\",
        "|",
        "title words",
        "=",
        "repo:",
        "dep:pypi/x",
        "\u202e",
        "\x00",
        "#",
        "`",
        "\n",
        "--retry-when",
    ]
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=12))
def test_fuzz_structured_commands_only_ever_raise_command_errors(words: list[str]) -> None:
    line = "/comind " + " ".join(words)
    try:
        command = parse_command(line)
    except CommandError as exc:
        assert exc.problem and exc.usage.startswith("/comind")
    else:
        assert command.action in ("remember", "confirm", "retract", "dispute", "supersede", "why", "help")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_any_comment_body(body: str) -> None:
    for parsed in parse_commands(body):
        assert isinstance(parsed, Command | CommandError)
    for line in command_lines("/comind " + body):
        try:
            parse_command(line)
        except CommandError as exc:
            assert exc.usage


# --- the records a command makes ----------------------------------------------------------------

WHEN = datetime(2024, 5, 1, 12, 0, 7, 250000, tzinfo=UTC)


def note(body: str, *, inline: bool = False, nid: str = "1001", author: str = "alice") -> Note:
    url = (
        f"https://forge.test/o/r/pull/5#discussion_r{nid}"
        if inline
        else f"https://forge.test/o/r/pull/5#issuecomment-{nid}"
    )
    return Note(
        id=nid,
        author=author,
        body=body,
        created_at=WHEN,
        updated_at=WHEN,
        url=url,
        thread_id="T1" if inline else None,
        path="app/session.py" if inline else None,
        line=12 if inline else None,
        is_inline=inline,
        in_reply_to=None,
        resolved=False if inline else None,
    )


def origin(n: Note, index: int = 0) -> Origin:
    return Origin("github", "o/r", 5, "https://forge.test/o/r/pull/5", n, index, repo="r")


@pytest.fixture
def ws(repo: Path) -> Workspace:
    return Workspace(repo)


def test_remember_on_an_inline_comment_anchors_to_the_line(ws: Workspace) -> None:
    n = note(
        '/comind remember gotcha "Cache is per process" --symptom stale --cause local '
        '--because "each worker has its own"',
        inline=True,
    )
    (command,) = parse_commands(n.body)
    assert isinstance(command, Command)
    (record,) = command_records(ws, command, origin(n), Resolver(ws.ledger()))
    assert record.id == harvested_id("mr:github:o/r:5:discussion_r1001")
    assert record.kind == "gotcha" and record.title == "Cache is per process"
    assert record.body == "each worker has its own"
    assert record.anchors == [
        {"raw": "app/session.py:12", "role": "subject", "scope": "file", "path": "app/session.py", "line": 12}
    ]
    assert record.evidence[:2] == [
        {"type": "url", "ref": n.url},
        {"type": "mr", "ref": "https://forge.test/o/r/pull/5"},
    ]
    provenance = record.provenance
    assert provenance["source"] == "mr" and provenance["author_kind"] == "human"
    assert provenance["actor"].startswith("p-") and "alice" not in provenance["actor"]
    assert record.data["trust"] == 3 and record.created_at == "2024-05-01T12:00:07.250Z"
    # the same comment gives the same record, byte for byte: a re-run writes nothing new
    (again,) = command_records(ws, command, origin(n), Resolver(ws.ledger()))
    assert again.hash == record.hash
    # the n-th command of a comment has its own id
    (second,) = command_records(ws, command, origin(n, 1), Resolver(ws.ledger()))
    assert second.id == harvested_id("mr:github:o/r:5:discussion_r1001:1")


def test_remember_in_a_general_comment_needs_an_anchor(ws: Workspace) -> None:
    n = note('/comind remember question "Why two caches" --question why?')
    (command,) = parse_commands(n.body)
    assert isinstance(command, Command)
    with pytest.raises(CommandError, match="--on ANCHOR"):
        command_records(ws, command, origin(n), Resolver(ws.ledger()))
    n = note('/comind remember question "Why two caches" --question why? --on "app/a b.py" --evidence HEAD')
    (command,) = parse_commands(n.body)
    assert isinstance(command, Command)
    (record,) = command_records(ws, command, origin(n), Resolver(ws.ledger()))
    assert record.anchors[0]["path"] == "app/a b.py" and record.evidence[2]["type"] == "commit"


def test_missing_kind_fields_are_a_command_error(ws: Workspace) -> None:
    n = note('/comind remember constraint "No raw SQL" --on app/db.py')
    (command,) = parse_commands(n.body)
    assert isinstance(command, Command)
    with pytest.raises(CommandError, match=r"fields\.rule: required"):
        command_records(ws, command, origin(n), Resolver(ws.ledger()))


def test_a_suppression_expiring_before_the_comment_was_written_is_a_command_error(ws: Workspace) -> None:
    # the day of the comment (WHEN, 2024-05-01) is the clock: the harvester derives the same answer later
    for expires, ok in (("2024-04-30", False), ("2024-04", False), ("2024-05-01", True), ("2024-05", True)):
        n = note(
            f'/comind remember suppression "Flaky here" --on app/db.py --constraint c1 --reason r '
            f"--owner o --expires {expires}"
        )
        (command,) = parse_commands(n.body)
        assert isinstance(command, Command)
        if ok:
            (record,) = command_records(ws, command, origin(n), Resolver(ws.ledger()))
            assert record.fields["expires"] == expires
        else:
            with pytest.raises(
                CommandError, match=rf"^--expires {expires}: the date has passed \(today is 2024-05-01\)$"
            ):
                command_records(ws, command, origin(n), Resolver(ws.ledger()))


def test_supersede_and_review_actions_resolve_their_target(ws: Workspace) -> None:
    resolver = Resolver(ws.ledger())
    first = note(
        '/comind remember decision "Sessions in Redis" --chosen redis --alternative "jwt | leaks roles" '
        "--on app/session.py",
        nid="1",
    )
    (command,) = parse_commands(first.body)
    assert isinstance(command, Command)
    (old,) = command_records(ws, command, origin(first), resolver)
    resolver.add([old])
    later = note(
        f'/comind supersede {old.id[-8:]} "Sessions in Postgres" --chosen postgres --because "one db"\n'
        f"/comind confirm {old.id[:8]} still holds\n/comind dispute 00000000",
        nid="2",
    )
    supersede, confirm, dispute = parse_commands(later.body)
    assert isinstance(supersede, Command) and isinstance(confirm, Command) and isinstance(dispute, Command)
    new, relation = command_records(ws, supersede, origin(later), resolver)
    assert new.kind == "decision" and new.fields["chosen"] == "postgres"
    assert new.fields["alternatives"] == [{"option": "jwt", "why_not": "leaks roles"}]  # kept from the old one
    assert new.anchors == old.anchors  # no --on: the replaced record's subject
    assert relation.fields == {"relation": "supersedes", "target": old.id, "source": new.id, "reason": "one db"}
    (confirms,) = command_records(ws, confirm, origin(later, 1), resolver)
    assert confirms.fields == {"relation": "confirms", "target": old.id, "reason": "still holds"}
    assert confirms.data["trust"] == 3
    with pytest.raises(CommandError, match="no record"):
        command_records(ws, dispute, origin(later, 2), resolver)


def test_answer_markers_are_read_only_from_the_bots_own_comments() -> None:
    mine = note("<!-- comind:answer issuecomment-7 -->\nRemembered", author="bot", nid="9")
    theirs = note("<!-- comind:answer issuecomment-8 -->", author="mallory", nid="10")
    assert answered_keys([mine, theirs], "bot") == {"issuecomment-7"}


def test_why_lists_the_records_about_a_file(ws: Workspace) -> None:
    resolver = Resolver(ws.ledger())
    n = note('/comind remember gotcha "Cache is per process" --symptom s --cause c', inline=True)
    (command,) = parse_commands(n.body)
    assert isinstance(command, Command)
    (record,) = command_records(ws, command, origin(n), resolver)
    ws.harvest_store.put(record)
    ledger = ws.ledger()
    ledger.sync(warn=False)
    answer = why_answer(ws, ledger, "app/session.py")
    assert record.id[-8:] in answer and "gotcha · dormant · Cache is per process" in answer  # old comment
    assert why_answer(ws, ledger, "app/other.py") == "No records about `app/other.py`."
    with pytest.raises(CommandError, match="file or symbol anchor"):
        why_answer(ws, ledger, "repo:")


def test_why_on_code_in_the_checkout_follows_the_code(ws: Workspace, repo: Path) -> None:
    import subprocess

    from comind.cli import main

    assert (
        main(
            [
                "-C",
                str(repo),
                "remember",
                "constraint",
                "--on",
                "app/db.py::raw_query",
                "--title",
                "raw_query only in migrations",
                "--rule",
                "r",
                "--severity",
                "must",
            ]
        )
        == 0
    )
    (repo / "app" / "db.py").write_text("# moved\n")
    (repo / "app" / "sql.py").write_text("def raw_query(sql):\n    return sql\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "move raw_query"], cwd=repo, check=True)
    ledger = ws.ledger()
    ledger.sync(warn=False)
    answer = why_answer(ws, ledger, "app/sql.py::raw_query")  # found where the code went, not where it was
    assert "constraint · active ·" in answer and "only in migrations" in answer
