"""Anchors that follow the code: resolution, re-anchoring, drift and status, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo, cargo_lock, reverted_clap_bump

PERM = """\
class Checker:
    def check(self, user, perm):
        if user.is_admin:
            return True
        grants = load_grants(user)
        return perm in grants

    def audit(self, user):
        log(user)
"""


@pytest.fixture
def gr(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    return repo


def remember(cli, repo: GitRepo, anchor: str, *extra: str, title: str = "Grants are cached") -> str:  # type: ignore[no-untyped-def]
    result = cli(
        repo.path,
        "remember",
        "gotcha",
        "--on",
        anchor,
        "--title",
        title,
        "--symptom",
        "stale",
        "--cause",
        "cache",
        *extra,
    )
    assert result.code == 0, result.err
    return str(result.out.strip())


def status_of(cli, repo: GitRepo, record_id: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = cli(repo.path, "show", record_id, "--json")
    assert result.code == 0, result.err
    return dict(json.loads(result.out))


def test_remember_resolves_symbol_and_line(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    anchor = status_of(cli, gr, rid)["anchors"][0]
    assert anchor["commit"] == gr.head() and anchor["span"] == [2, 6] and anchor["kind"] == "method"
    assert {"sig_hash", "body_hash", "shape_hash", "blob"} <= set(anchor)
    line = status_of(cli, gr, remember(cli, gr, "app/perm.py:9"))["anchors"][0]
    assert (line["scope"], line["symbol"], line["raw"]) == ("symbol", "Checker.audit", "app/perm.py:9")


@pytest.mark.parametrize(
    ("anchor", "message"),
    [
        ("app/perm.py::Checker.chek", "no symbol 'Checker.chek' in app/perm.py (nearest: Checker.check"),
        ("app/prem.py", "no file app/prem.py"),
        ("app", "anchor 'app': no file app at "),  # a folder written without its slash: said so
        ("app/prem.py::f", "(nearest: app/perm.py"),
        ("Checker.check", "no file Checker.check at "),  # a bare symbol: how one is written
        ("app/perm.py::Checker::check", "expected path::Qualified.name (app/perm.py::Checker.check)"),  # as Rust
        ("module:app.nothing", "no module 'app.nothing'"),
        ("app/perm.py:10", "anchor 'app/perm.py:10': app/perm.py has 9 lines at "),
        ("app/perm.py:8-12", "app/perm.py has 9 lines"),
        ("app/__init__.py:1", "app/__init__.py has 0 lines"),
    ],
)
def test_unknown_anchors_are_errors_listing_nearest_names(cli, gr: GitRepo, anchor: str, message: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(gr.path, "remember", "gotcha", "--on", anchor, "--title", "t", "--symptom", "s", "--cause", "c")
    assert result.code == 2 and message in result.err
    assert result.err.rstrip().endswith(": a folder, written app/") == (anchor == "app"), result.err
    hint = "(a symbol is written PATH::Qual.name, e.g. app/cart.py::Cart.total)"
    assert result.err.rstrip().endswith(hint) == (anchor == "Checker.check"), result.err
    if anchor == "Checker.check":  # `why` reads anchors the same way
        asked = cli(gr.path, "why", anchor)
        assert asked.code == 2 and asked.err.count("\n") == 1 and asked.err.rstrip().endswith(hint), asked.err


@pytest.mark.parametrize(
    ("anchor", "hint"),
    [
        # one colon where two belong: the file is there, so the anchor meant is said whole
        ("app/perm.py:Checker.check", "(a symbol is written PATH::Qual.name: app/perm.py::Checker.check)"),
        # one colon short, then a member as C++ writes it: read as the file `app/perm.py:Checker`
        # and the symbol `check`, whose member the hint kept not (it said `app/perm.py::Checker`)
        ("app/perm.py:Checker::check", "(a symbol is written PATH::Qual.name: app/perm.py::Checker.check)"),
        # a bare name a file is named like: no file ends in `.check`, so the file is no answer
        ("Checker.check", "(a symbol is written PATH::Qual.name, e.g. app/cart.py::Cart.total)"),
    ],
)
def test_a_symbol_written_as_a_file_says_how_a_symbol_is_written(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo, anchor: str, hint: str
) -> None:
    gr.write("app/checker.py", "def run():\n    return 1\n")  # named like `Checker.check`
    gr.commit("add checker")
    result = cli(gr.path, "remember", "gotcha", "--on", anchor, "--title", "t", "--symptom", "s", "--cause", "c")
    assert result.code == 2 and result.err.count("\n") == 1 and result.err.rstrip().endswith(hint), result.err
    asked = cli(gr.path, "why", anchor)  # `why` reads anchors the same way
    assert asked.code == 2 and asked.err.count("\n") == 1 and asked.err.rstrip().endswith(hint), asked.err


def test_namesakes_are_numbered_as_the_docs_and_the_help_say(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three `def f` in a file are `f#1`, `f#2` and `f` (the last, plain); a `why` of `f` answers for
    them all. The anchors' docs and the help of `why` and `remember` say so (they said nothing of `#N`)."""
    gr.write("app/util.py", "def f():\n    return 1\n\n\ndef f():\n    return 2\n\n\ndef f():\n    return 3\n")
    gr.commit("three namesakes")
    for name, lines in (("f#1", "1-2"), ("f#2", "5-6"), ("f", "9-10")):
        remember(cli, gr, f"app/util.py::{name}", title=f"on {name}")
        assert f"app/util.py::{name} (function, lines {lines} at " in cli(gr.path, "why", f"app/util.py::{name}").out
    assert all(f"on {name}" in cli(gr.path, "why", "app/util.py::f").out for name in ("f#1", "f#2", "f"))
    docs = Path(__file__).resolve().parents[2] / "docs"
    records = " ".join((docs / "records.md").read_text(encoding="utf-8").split())
    assert "are `app/util.py::f#1`, `app/util.py::f#2` and `app/util.py::f`" in records
    from comind.cli import main

    for command, form in (("why", "path::name#1, path::name#2"), ("remember", "PATH::name#1, PATH::name#2")):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert form in " ".join(capsys.readouterr().out.split())


def test_file_renamed_with_edits_is_reanchored_and_active(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.mv("app/perm.py", "app/permissions.py")
    gr.write("app/permissions.py", PERM.replace("log(user)", "log(user, level=2)") + "\n\ndef helper():\n    pass\n")
    gr.commit("rename perm module")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active"
    assert any("file renamed: now app/permissions.py::Checker.check" in n for n in s["notes"])


def test_function_renamed_in_place_is_found_by_shape(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write(
        "app/perm.py",
        PERM.replace("def check(self, user, perm)", "def allowed(self, who, perm)")
        .replace("user.is_admin", "who.is_admin")
        .replace("load_grants(user)", "load_grants(who)"),
    )
    gr.commit("rename check to allowed")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active"
    assert any("renamed in place: now app/perm.py::Checker.allowed" in n for n in s["notes"])


def test_moved_to_another_file(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", "")
    gr.write("app/checks.py", PERM)
    gr.commit("move")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active" and any("moved: now app/checks.py::Checker.check" in n for n in s["notes"])


CHECK_EDITED = """\
class Checker:
    def check(self, user, perm):
        if user.is_admin or user.is_owner:
            return True
        grants = load_grants(user)
        return perm in grants
"""


def test_moved_to_another_file_and_edited_in_the_same_landing_is_followed(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A method moved out of its file (which stays) and edited on the way was reported removed:
    the same qualified name, of the same kind, appears in another file in that landing."""
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", "class Auditor:\n    def audit(self, user):\n        log(user)\n")
    gr.write("app/checks.py", CHECK_EDITED)
    gr.commit("move check to its own module, owners too")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active", s
    assert "app/perm.py::Checker.check moved: now app/checks.py::Checker.check" in s["notes"], s
    assert any("body changed since" in n for n in s["notes"]), s
    # and on from there, through later landings (renamed in the next one)
    gr.mv("app/checks.py", "app/checking.py")
    gr.commit("rename checks")
    s = status_of(cli, gr, rid)
    assert (
        s["status"] == "active" and "app/perm.py::Checker.check moved: now app/checking.py::Checker.check" in s["notes"]
    ), s


@pytest.mark.parametrize("kept", [32 << 20, 1])  # 1 byte: each landing's files read again
def test_symbols_one_landing_moved_and_edited_apart_are_each_followed(cli, gr: GitRepo, monkeypatch, kept: int) -> None:  # type: ignore[no-untyped-def]
    """One landing takes two methods out of a file into two others, each edited: its edited files
    are read once for both (and read again once no longer kept), each found where it went."""
    from comind import anchoring

    monkeypatch.setattr(anchoring, "EDITED_BYTES", kept)
    check = remember(cli, gr, "app/perm.py::Checker.check")
    audit = remember(cli, gr, "app/perm.py::Checker.audit", title="Audits are logged")
    gr.write("app/perm.py", "class Checker:\n    pass\n")
    gr.write("app/checks.py", CHECK_EDITED)
    gr.write("app/audits.py", "class Checker:\n    def audit(self, user):\n        log(user)\n        flush()\n")
    gr.commit("split the checker")
    result = cli(gr.path, "log", "--json")
    assert result.code == 0, result.err
    notes = {r["id"]: r.get("notes") or [] for r in map(json.loads, result.out.splitlines())}
    assert "app/perm.py::Checker.check moved: now app/checks.py::Checker.check" in notes[check], notes
    assert "app/perm.py::Checker.audit moved: now app/audits.py::Checker.audit" in notes[audit], notes


def test_moved_out_of_a_renamed_file_and_edited_is_followed(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """black f2ea461e: a module renamed (black.py to src/black/__init__.py), then split into several
    with edits: its symbols were said to be gone ("no longer exists (anchored at …)"), since the
    landing that took one out of a renamed file was never looked for."""
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.mv("app/perm.py", "app/permissions.py")
    gr.commit("rename the permissions module")
    gr.write("app/permissions.py", "class Auditor:\n    def audit(self, user):\n        log(user)\n")
    gr.write("app/checks.py", CHECK_EDITED)
    gr.commit("split the permissions module")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active", s
    assert "app/perm.py::Checker.check moved: now app/checks.py::Checker.check" in s["notes"], s


def test_removed_from_a_renamed_file_says_which_landing(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.audit")
    gr.mv("app/perm.py", "app/permissions.py")
    gr.commit("rename the permissions module")
    gr.write("app/permissions.py", PERM.split("    def audit")[0])
    gr.commit("stop auditing")
    s = status_of(cli, gr, rid)
    assert "app/perm.py::Checker.audit no longer exists (removed in " in s["status_reason"], s
    assert "“stop auditing”" in s["status_reason"], s


def test_moved_out_of_a_deleted_file_and_edited_is_followed(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/users.py", "def name_of(user):\n    return user.name\n")
    gr.commit("users")
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.git("rm", "-q", "app/perm.py")  # deleted, not renamed: what it held went into an existing file
    gr.write("app/users.py", "def name_of(user):\n    return user.name\n\n\n" + CHECK_EDITED)
    gr.commit("fold the checker into users")
    s = status_of(cli, gr, rid)
    assert (
        s["status"] == "active" and "app/perm.py::Checker.check moved: now app/users.py::Checker.check" in s["notes"]
    ), s


def test_a_latin1_symbol_moved_and_edited_is_followed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Lines that are no UTF-8 count as `_lines_of` reads them (decoded with replacement): the text
    search before the parse must not miss them."""
    gr = GitRepo(tmp_path)
    body = "\n".join(f"        n{i} = user.r\u00f4le_{i}  # r\u00f4le {i}" for i in range(6))
    old = f"class Checker:\n    def check(self, user, perm):\n{body}\n        return perm in grants\n"
    gr.write("app/perm.py", old.encode("latin-1"))
    gr.commit("initial")
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", "class Auditor:\n    def audit(self, user):\n        log(user)\n")
    gr.write("app/checks.py", old.replace("return perm in grants", "return perm in load(user)").encode("latin-1"))
    gr.commit("move check to its own module")
    s = status_of(cli, gr, rid)
    assert "app/perm.py::Checker.check moved: now app/checks.py::Checker.check" in s["notes"], s


def test_moved_and_renamed_with_an_edit_is_followed_only_when_mostly_the_same(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    check = remember(cli, gr, "app/perm.py::Checker.check")
    audit = remember(cli, gr, "app/perm.py::Checker.audit", title="Audits are logged")
    gr.write("app/perm.py", "")
    gr.write("app/policy.py", CHECK_EDITED.replace("class Checker", "class Policy"))  # the same name, mostly
    gr.write(  # an `audit` of another class, nothing like it: not where it went
        "app/report.py",
        "class Report:\n    def audit(self, rows):\n        total = sum(r.amount for r in rows)\n"
        "        return format_total(total, currency='EUR')\n",
    )
    removed = gr.commit("policies and reports")
    s = status_of(cli, gr, check)
    assert s["status"] == "active", s
    assert "app/perm.py::Checker.check moved and renamed: now app/policy.py::Policy.check" in s["notes"], s
    s = status_of(cli, gr, audit)
    assert s["status"] == "orphaned", s
    reason = f"app/perm.py::Checker.audit no longer exists (removed in {removed[:10]} “policies and reports”)"
    assert s["status_reason"] == reason


def test_an_edited_namesake_in_a_later_landing_is_not_followed(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", "class Checker:\n    def audit(self, user):\n        log(user)\n")
    removed = gr.commit("drop check")
    gr.write("app/checks.py", CHECK_EDITED)
    gr.commit("a new check, later")
    s = status_of(cli, gr, rid)
    assert s["status"] == "orphaned" and f"removed in {removed[:10]}" in s["status_reason"], s


STREAM = (
    "class Stream:\n    def __init__(self, reader, writer, timeout):\n        self.reader = reader\n"
    "        self.writer = writer\n        self.timeout = timeout\n"
)
LIMITS = (
    "class Limits:\n    def __init__(self, connections, keepalive, expiry):\n        self.connections = connections\n"
    "        self.keepalive = keepalive\n        self.expiry = expiry\n"
)


def test_a_shape_elsewhere_is_the_same_definition_only_under_its_name(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/stream.py", STREAM)
    gr.commit("stream")
    gone = remember(cli, gr, "app/stream.py::Stream.__init__")
    gr.git("rm", "-q", "app/stream.py")
    gr.write("app/config.py", LIMITS)  # the same shape (three fields set), another class's
    gr.commit("drop the stream; limits")
    s = status_of(cli, gr, gone)
    assert s["status"] == "orphaned" and not any("Limits" in n for n in s["notes"]), s
    gr.write("app/io.py", STREAM.replace("reader", "source").replace("writer", "sink"))  # itself, words changed
    gr.commit("the stream again, elsewhere")
    s = status_of(cli, gr, gone)
    assert s["status"] == "active" and any("moved: now app/io.py::Stream.__init__" in n for n in s["notes"]), s


def test_a_body_word_for_word_elsewhere_is_the_same_only_under_its_name(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/stream.py", "class Stream:\n    def close(self):\n        raise NotImplementedError\n")
    gr.commit("stream")
    gone = remember(cli, gr, "app/stream.py::Stream.close")
    gr.git("rm", "-q", "app/stream.py")
    gr.write("app/config.py", "class Limits:\n    def validate(self):\n        raise NotImplementedError\n")
    gr.commit("drop the stream; limits")
    s = status_of(cli, gr, gone)
    assert s["status"] == "orphaned" and not any("Limits" in n for n in s["notes"]), s
    gr.write("app/io.py", "class Sink:\n    def close(self):\n        raise NotImplementedError\n")
    gr.commit("a sink that closes the same way")
    s = status_of(cli, gr, gone)  # its own name, another class: moved and renamed
    assert s["status"] == "active" and any("now app/io.py::Sink.close" in n for n in s["notes"]), s


def test_body_rewritten_is_stale_with_the_drift(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write(
        "app/perm.py",
        PERM.replace(
            "        if user.is_admin:\n            return True\n        grants = load_grants(user)\n"
            "        return perm in grants\n",
            "        cache = redis.get(user.id)\n        if cache is None:\n            cache = compute(user)\n"
            "            redis.set(user.id, cache, ttl=60)\n        return any(p.matches(perm) for p in cache)\n",
        ),
    )
    gr.commit("rewrite check")
    s = status_of(cli, gr, rid)
    assert s["status"] == "stale"
    assert "body drifted since" in s["status_reason"] and "% similar" in s["status_reason"]
    assert "threshold 60%" in s["status_reason"]
    # a confirmation at the new commit resets the baseline: active again
    assert cli(gr.path, "review", "confirm", rid).code == 0
    assert status_of(cli, gr, rid)["status"] == "active"


def test_small_edit_stays_active_with_a_note(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", PERM.replace("return True", "return bool(True)"))
    gr.commit("tweak")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active" and any("body changed since" in n for n in s["notes"])


def test_a_body_nearly_unchanged_is_never_said_to_be_100_percent_similar(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """One token changed in a body of hundreds is 99.5% similar: rounded, it read "changed (100% similar)"."""
    long = "def table():\n" + "".join(f"    row_{i} = load(cell_{i}, {i})\n" for i in range(60)) + "    return row_0\n"
    gr.write("app/table.py", long)
    gr.commit("table")
    rid = remember(cli, gr, "app/table.py::table")
    gr.write("app/table.py", long.replace("return row_0", "return row_1"))
    gr.commit("return the second row")
    (note,) = [n for n in status_of(cli, gr, rid)["notes"] if "body changed since" in n]
    assert note.endswith("(99% similar)"), note


def test_function_deleted_is_orphaned(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.audit")
    gr.write("app/perm.py", PERM.split("    def audit")[0])
    gr.commit("drop audit")
    s = status_of(cli, gr, rid)
    assert s["status"] == "orphaned" and "no longer exists" in s["status_reason"]


def test_signature_change_is_active_with_a_note(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", PERM.replace("def check(self, user, perm)", "def check(self, user, perm, strict=False)"))
    gr.commit("strict flag")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active" and any("signature changed" in n for n in s["notes"])


def test_context_anchor_change_makes_stale(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("config/settings.yml", "ttl: 60\n")
    gr.commit("settings")
    rid = remember(cli, gr, "app/perm.py::Checker.check", "--context", "config/settings.yml")
    gr.write("config/settings.yml", "ttl: 3600\n")
    gr.commit("longer ttl")
    s = status_of(cli, gr, rid)
    assert s["status"] == "stale" and "context file config/settings.yml changed" in s["status_reason"]


def test_ambiguous_candidates_are_not_guessed(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.audit")
    gr.write("app/perm.py", PERM.split("    def audit")[0])
    gr.write("app/a.py", "class A:\n    def audit(self, user):\n        log(user)\n")
    gr.write("app/b.py", "class B:\n    def audit(self, user):\n        log(user)\n")
    gr.commit("split audit")
    s = status_of(cli, gr, rid)
    assert s["status"] == "stale" and "several candidates" in s["status_reason"]
    assert "app/a.py::A.audit" in s["status_reason"] and "app/b.py::B.audit" in s["status_reason"]


GO = """package store

type Store struct{ items map[string]int }

func (s *Store) Get(key string) int {
\tv, ok := s.items[key]
\tif !ok {
\t\treturn -1
\t}
\treturn v
}
"""

TS = """export class Cart {
  total(items: Item[]): number {
    let sum = 0;
    for (const item of items) {
      sum += item.price * item.quantity;
    }
    return sum;
  }
}
"""


@pytest.mark.parametrize(
    ("path", "source", "symbol", "renamed", "rewritten"),
    [
        (
            "store/store.go",
            GO,
            "Store.Get",
            GO.replace("func (s *Store) Get(key string)", "func (s *Store) Fetch(name string)").replace(
                "[key]", "[name]"
            ),
            GO.replace(
                "\tv, ok := s.items[key]\n\tif !ok {\n\t\treturn -1\n\t}\n\treturn v\n",
                "\tfor k, v := range s.items {\n\t\tif strings.EqualFold(k, key) {\n\t\t\treturn v * 2\n\t\t}"
                '\n\t}\n\tpanic("missing")\n',
            ),
        ),
        (
            "web/cart.ts",
            TS,
            "Cart.total",
            TS.replace("total(items: Item[])", "sum(lines: Item[])").replace("of items", "of lines"),
            TS.replace(
                "    let sum = 0;\n    for (const item of items) {\n      sum += item.price * item.quantity;\n    }"
                "\n    return sum;\n",
                "    return items.reduce((acc, it) => acc + discount(it.price), 0) / rates.get(currency());\n",
            ),
        ),
    ],
)
def test_go_and_typescript(
    cli,
    tmp_path: Path,
    path: str,
    source: str,
    symbol: str,
    renamed: str,  # type: ignore[no-untyped-def]
    rewritten: str,
) -> None:
    repo = GitRepo(tmp_path)
    repo.write(path, source)
    repo.commit("add")
    rid = remember(cli, repo, f"{path}::{symbol}")
    repo.write(path, renamed)
    repo.commit("rename")
    s = status_of(cli, repo, rid)
    assert s["status"] == "active" and any("renamed in place" in n for n in s["notes"]), s
    repo.write(path, rewritten)
    repo.commit("rewrite")
    s = status_of(cli, repo, rid)
    assert s["status"] in ("stale", "orphaned"), s
    repo.write(path, source.replace("\n}\n", "\n}\n", 1))
    repo.write(path, source)
    repo.commit("back")
    assert status_of(cli, repo, rid)["status"] == "active"


def test_lockfile_bump_out_of_range_meets_the_retry_condition(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "1"\ndependencies = ["lance>=0.7"]\n')
    repo.write("uv.lock", 'version = 1\n\n[[package]]\nname = "lance"\nversion = "0.7.3"\n')
    head = repo.commit("lance")
    attempt = cli(
        repo.path,
        "remember",
        "attempt",
        "--on",
        "dep:pypi/lance@<0.8",
        "--title",
        "Vector search on lance",
        "--approach",
        "lance dataset",
        "--outcome",
        "failed",
        "--evidence",
        head[:10],
        "--retry-when",
        "lance 0.8 fixes the deadlock",
    ).out.strip()
    constraint = cli(
        repo.path,
        "remember",
        "constraint",
        "--on",
        "dep:pypi/lance@<0.8",
        "--title",
        "Pin lance",
        "--rule",
        "stay below 0.8",
        "--severity",
        "must",
    ).out.strip()
    assert status_of(cli, repo, attempt)["notes"] == []
    repo.write("uv.lock", 'version = 1\n\n[[package]]\nname = "lance"\nversion = "0.9.1"\n')
    repo.commit("bump lance")
    a = status_of(cli, repo, attempt)
    assert a["status"] == "active" and any(
        "retry condition met: lance is now 0.9.1, outside <0.8" in n for n in a["notes"]
    )
    c = status_of(cli, repo, constraint)
    assert c["status"] == "stale" and "re-check: lance is now 0.9.1" in c["status_reason"]


def test_a_reverted_bump_meets_its_retry_condition_only_past_the_version_it_moved_to(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    reverted_clap_bump(repo, clap_builder=("4.5.34", "4.5.35"))
    cli(repo.path, "harvest")
    attempt = json.loads(cli(repo.path, "log", "--kind", "attempt", "--json").out)
    # the direct dependency it moved, not what the lockfile pulled along (clap_builder)
    assert [a["raw"] for a in attempt["anchors"] if a["scope"] == "dependency"] == ["dep:cargo/clap@=4.5.35"]
    assert status_of(cli, repo, attempt["id"])["notes"] == []  # back at 4.5.34: the revert, not a fix
    repo.write("Cargo.lock", cargo_lock(clap="4.5.36"))
    repo.commit("Update Rust crate clap to v4.5.36")
    assert "retry condition met: clap is now 4.5.36, outside =4.5.35" in status_of(cli, repo, attempt["id"])["notes"]


def test_evidence_on_the_default_branch_promotes_to_t2(cli, gr: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMIND_AUTHOR_KIND", "agent")
    rid = cli(
        gr.path,
        "remember",
        "attempt",
        "--on",
        "app/perm.py::Checker.check",
        "--title",
        "Cache grants",
        "--approach",
        "lru_cache",
        "--outcome",
        "reverted",
        "--evidence",
        gr.head(),
    ).out.strip()
    assert status_of(cli, gr, rid)["trust"] == 2
    text = cli(
        gr.path,
        "remember",
        "attempt",
        "--on",
        "app/perm.py",
        "--title",
        "No commit",
        "--approach",
        "x",
        "--outcome",
        "failed",
        "--evidence",
        "it broke in staging",
    ).out.strip()
    assert status_of(cli, gr, text)["trust"] == 1


def test_shallow_clone_missing_the_anchor_commit_is_unverifiable(cli, gr: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.check")
    for n in range(3):
        gr.write("app/other.py", f"X = {n}\n")
        gr.commit(f"other {n}")
    (gr.path / ".comind.yml").write_text("store: .comind/ledger\n")
    gr.commit("config and ledger")
    clone = tmp_path / "shallow"
    gr.git("clone", "-q", "--depth", "1", f"file://{gr.path}", str(clone))
    s = json.loads(cli(clone, "show", rid, "--json").out)
    assert s["status"] == "unverifiable" and "fetch-depth: 0" in s["status_reason"]


def test_why_direct_hop_order_and_at(cli, gr: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/db.py", "def raw_query(sql):\n    return sql\n")
    gr.write(
        "app/views.py",
        "from app import db\nfrom app.perm import Checker\n\n\ndef view(user):\n"
        "    Checker().check(user, 'read')\n    return db.raw_query('select 1')\n",
    )
    first = gr.commit("views")
    monkeypatch.setenv("COMIND_NOW", "2024-01-01T00:30:00Z")  # after `first` (00:02), before later commits
    gotcha = remember(cli, gr, "app/views.py::view", title="View checks permissions first")
    constraint = cli(
        gr.path,
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
    ).out.strip()
    intent = cli(
        gr.path, "remember", "intent", "--on", "app/views.py", "--title", "Views are thin", "--need", "n"
    ).out.strip()
    rows = [json.loads(line) for line in cli(gr.path, "why", "app/views.py::view", "--json").out.splitlines()]
    assert [(r["id"], r["relevance"]) for r in rows] == [
        (intent, "direct"),
        (gotcha, "direct"),
        (constraint, "one hop: app/views.py imports app.db"),
    ]
    assert all(r["status"] == "active" and r["status_reason"] for r in rows)
    text = cli(gr.path, "why", "app/views.py::view").out
    assert "one hop away:\n" in text and "raw_query only in migrations  (app/views.py imports app.db)" in text, text
    assert text.count("one hop") == 1, text  # (the heading says it: each item names only the relation)
    line_rows = [json.loads(x)["id"] for x in cli(gr.path, "why", "app/views.py:6", "--json").out.splitlines()]
    assert gotcha in line_rows

    gr.write("docs/readme.md", "views\n")
    known = gr.commit("docs", date="2024-01-01T00:40:00Z")
    monkeypatch.setenv("COMIND_NOW", "2024-01-01T01:00:00Z")
    gr.write("app/views.py", "def view(user):\n    return render(user, template='v.html', strict=True, cache=None)\n")
    gr.commit("rewrite view", date="2024-01-01T00:50:00Z")
    lines = cli(gr.path, "why", "app/views.py::view", "--json").out.splitlines()
    now = {json.loads(x)["id"]: json.loads(x) for x in lines}
    assert now[gotcha]["status"] == "stale"
    then = {
        json.loads(x)["id"]: json.loads(x)
        for x in cli(gr.path, "why", "app/views.py::view", "--at", known, "--json").out.splitlines()
    }
    assert then[gotcha]["status"] == "active"
    assert cli(gr.path, "why", "app/views.py::view", "--at", first, "--json").out == ""  # nothing known yet
    unknown = cli(gr.path, "why", "app/views.py", "--at", "nope").err
    assert unknown == "comind: --at 'nope': unknown revision (a commit, branch or tag)\n"
    past = cli(gr.path, "why", "app/perm.py:10")  # PERM has 9 lines: no record can be about line 10
    assert past.code == 2 and past.err == f"comind: app/perm.py has 9 lines at {gr.head()[:10]}\n"


def test_status_lists_stale_and_orphaned_with_reasons(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.audit")
    remember(cli, gr, "app/perm.py::Checker.check")
    gr.write("app/perm.py", PERM.split("    def audit")[0])
    gr.commit("drop audit")
    text = cli(gr.path, "status").out
    assert "active 1" in text and "orphaned 1" in text and rid[-8:] in text and "no longer exists" in text
    rows = cli(gr.path, "status", "--json").out.splitlines()
    assert json.loads(rows[0])["counts"]["orphaned"] == 1 and json.loads(rows[1])["id"] == rid


def test_a_record_is_orphaned_only_when_all_its_subjects_are_gone(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/perm.py::Checker.audit", "--on", "app/perm.py::Checker.check")
    for n in range(3):  # landings around the one that takes audit out: a search finds it
        gr.write("README", f"notes {n}\n")
        gr.commit(f"notes {n}")
    gr.write("app/perm.py", PERM.split("    def audit")[0])
    audit = gr.commit("drop Checker's audit")  # (an apostrophe: repr would quote it otherwise)
    for n in range(4):
        gr.write("app/perm.py", PERM.split("    def audit")[0] + f"\nLIMIT = {n}\n")
        gr.commit(f"limit {n}")
    s = status_of(cli, gr, rid)  # it is still about Checker.check: to review, not lost
    assert s["status"] == "stale"  # the reason names the landing that took it out of its file
    assert (
        s["status_reason"]
        == f"app/perm.py::Checker.audit no longer exists (removed in {audit[:10]} “drop Checker's audit”)"
    )
    gr.git("rm", "-q", "app/perm.py")
    dropped = gr.commit("drop the checker")
    s = status_of(cli, gr, rid)  # the file went: the reason names the landing that deleted it
    assert s["status"] == "orphaned"
    assert (
        s["status_reason"]
        == (  # one landing took both: said once
            f"2 anchors no longer exist (deleted in {dropped[:10]} “drop the checker”): "
            "app/perm.py::Checker.audit, app/perm.py::Checker.check"
        )
    )


def test_a_symbol_anchored_on_a_merged_branch_is_searched_from_its_merge(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.branch("topic")
    gr.checkout("topic")
    gr.write("app/perm.py", PERM + "\n\ndef grant(user):\n    return user.grants\n")
    gr.commit("add grant")
    rid = remember(cli, gr, "app/perm.py::grant")  # anchored at the branch's commit, off main's chain
    gr.checkout("main")
    gr.merge("topic")
    for n in range(3):
        gr.write("README", f"notes {n}\n")
        gr.commit(f"notes {n}")
    gr.write("app/perm.py", PERM)
    dropped = gr.commit("drop grant")
    gr.write("README", "more\n")
    gr.commit("more notes")
    s = status_of(cli, gr, rid)
    assert s["status"] == "orphaned"
    assert s["status_reason"] == f"app/perm.py::grant no longer exists (removed in {dropped[:10]} “drop grant”)"


def test_status_keeps_a_long_reason_to_one_line_and_show_has_it_all(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    for name in ("a", "b", "c", "d"):
        gr.write(f"app/{name}.py", f"def {name}():\n    return {name!r}\n")
    gr.commit("four modules")
    rid = remember(cli, gr, "app/a.py", "--on", "app/b.py", "--on", "app/c.py", "--on", "app/d.py")
    for name in ("a", "b", "c", "d"):  # a landing each: four reasons
        gr.git("rm", "-q", f"app/{name}.py")
        gr.commit(f"drop {name}")
    (reason,) = [ln.strip() for ln in cli(gr.path, "status").out.splitlines() if "no longer exists" in ln]
    assert reason.count("no longer exists") == 2 and reason.endswith(f"; and 2 more (comind show {rid[-8:]})")
    assert status_of(cli, gr, rid)["status_reason"].count("no longer exists") == 4


def test_subjects_one_landing_deleted_are_said_once_and_a_listing_cuts_their_names(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A revert anchored to twelve example files, all deleted by one merge: its reason named that
    merge twelve times, 1,500 characters on one line of `status` and `why`."""
    paths = [f"examples/app_{n}/tests/test_app_{n}_views.py" for n in range(12)]
    for path in paths:
        gr.write(path, "def test_index():\n    assert True\n")
    gr.commit("examples")
    rid = remember(cli, gr, paths[0], *[a for p in paths[1:] for a in ("--on", p)])
    gr.rm("examples")
    gone = gr.commit("Merge the tutorial")
    reason = status_of(cli, gr, rid)["status_reason"]
    assert reason == f"12 anchors no longer exist (deleted in {gone[:10]} “Merge the tutorial”): " + ", ".join(paths)
    (line,) = [ln.strip() for ln in cli(gr.path, "status").out.splitlines() if "no longer exist" in ln]
    assert line.startswith(f"12 anchors no longer exist (deleted in {gone[:10]}")
    assert line.endswith(f"… (comind show {rid[-8:]})")
    assert len(line) < 270  # 240 of reason, then the pointer to `show ID`


def test_a_file_converted_to_another_format_is_followed(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """click's `CHANGES.rst` became `CHANGES.md`: every heading rewritten, so rename detection pairs
    nothing, yet it is the same file. Only one file of that name went and one came, in one folder."""
    gr.write("CHANGES.rst", "".join(f"Version 8.{i}\n-----------\n\n-   Fixed bug {i}.\n\n" for i in range(9)))
    gr.commit("changelog")
    rid = remember(cli, gr, "CHANGES.rst")
    gr.rm("CHANGES.rst")
    gr.write("CHANGES.md", "".join(f"## Version 8.{i}\n\n- Fixed issue number {i}.\n\n" for i in range(9)))
    gr.commit("Move changes to markdown")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active" and "CHANGES.rst file renamed: now CHANGES.md" in s["notes"]
    gr.rm("CHANGES.md")  # made two files of that name: no way to tell which it became
    gr.write("CHANGES.txt", "changes\n")
    gr.write("CHANGES.html", "<p>changes</p>\n")
    gr.commit("Split the changes")
    s = status_of(cli, gr, rid)
    assert s["status"] == "orphaned" and "CHANGES.rst no longer exists (deleted in " in s["status_reason"]


def test_index_command(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    result = cli(gr.path, "index")
    assert result.code == 0 and "indexed" in result.out and "2 files" in result.out
    bad = cli(gr.path, "index", "--rev", "deadbeef")
    assert (bad.code, bad.err) == (2, "comind: --rev 'deadbeef': unknown revision (a commit, branch or tag)\n")


# --- following a file through history (Anchorer.follow_path) and citing commits (evidence_verifier) ---


def grown(text: str, step: int) -> str:
    """`text` and as much again of new code: each step keeps git's rename similarity above 50%."""
    helpers = len(text) // 60 + 1
    return text + "".join(f"\ndef helper_{step}_{i}(value):\n    return value * {i} + {step}\n" for i in range(helpers))


def test_a_file_renamed_a_little_at_a_time_is_followed_to_its_last_name(gr: GitRepo) -> None:
    from comind.anchoring import Anchorer
    from comind.codeindex import CodeIndex

    start, text, path = gr.head(), PERM, "app/perm.py"
    for step, new_path in enumerate(("app/permissions.py", "app/auth/permissions.py", "app/auth/checks.py")):
        text = grown(text, step)
        gr.mv(path, new_path)
        gr.write(new_path, text)
        gr.commit(f"move {path} to {new_path}")
        path = new_path
    anchorer = Anchorer(CodeIndex(gr.path))
    # years apart the two versions share under half their lines: the trees alone say it was deleted
    assert anchorer._follow_between("app/perm.py", start, gr.head()) == (None, False)
    assert anchorer.follow_path("app/perm.py", start, gr.head()) == ("app/auth/checks.py", True, None)
    assert anchorer.follow_path("app/__init__.py", start, gr.head()) == ("app/__init__.py", False, None)
    gr.rm("app/auth/checks.py")
    dropped = gr.commit("drop the checks")
    assert Anchorer(CodeIndex(gr.path)).follow_path("app/perm.py", start, gr.head()) == (None, False, dropped)


def test_a_big_move_is_followed_by_content_then_by_name_or_folder_then_in_full(gr: GitRepo) -> None:
    """git's order (2.33+): unchanged content first, then a file name unique among what is left
    deleted and added, or the place where its folder's unchanged files went; full rename detection
    only for what is left."""
    from comind.anchoring import Anchorer
    from comind.codeindex import CodeIndex

    files = {
        "app/perm.py": PERM,
        "app/mod.py": grown("X = 1\n", 0),
        "lib/mod.py": grown("Y = 2\n", 1),
        "lib/same.py": grown("Z = 3\n", 2),
    }
    for path, text in files.items():
        gr.write(path, text)
    start = gr.commit("add the modules")
    gr.mv("app", "src/app")
    gr.mv("lib", "src/lib")
    gr.mv("src/app/mod.py", "core/mod.py")
    gr.write("src/app/perm.py", PERM + "\n\ndef audit(user):\n    return user.id\n")  # edited; a unique name
    gr.write("src/lib/mod.py", files["lib/mod.py"] + "V = 5\n")  # edited; `mod.py` is not unique
    gr.write("core/mod.py", files["app/mod.py"] + "W = 4\n")  # edited, elsewhere
    gr.commit("move everything under src/, and one module to core/")
    anchorer = Anchorer(CodeIndex(gr.path))
    assert anchorer.follow_path("lib/same.py", start, gr.head()) == ("src/lib/same.py", True, None)
    assert anchorer.follow_path("app/perm.py", start, gr.head()) == ("src/app/perm.py", True, None)
    assert anchorer.follow_path("lib/mod.py", start, gr.head()) == ("src/lib/mod.py", True, None)  # its folder's way
    assert anchorer._renames == {}  # no full rename detection so far
    assert anchorer.follow_path("app/mod.py", start, gr.head()) == ("core/mod.py", True, None)
    assert anchorer._renames != {}
    fresh = Anchorer(CodeIndex(gr.path))  # the moves are kept in the index cache
    assert fresh.follow_path("lib/same.py", start, gr.head()) == ("src/lib/same.py", True, None)
    assert fresh._renames == {}


def test_trees_far_apart_pair_edited_files_as_git_does_past_its_rename_limit(gr: GitRepo) -> None:
    """Past `diff.renameLimit` (1000) git computes no similarity for more than a million deleted-added
    pairs: unchanged moves and unique file names are renames, the rest deleted and added; comind also
    compares a file with the few of its name. Two trees a branch forked long ago apart cost 30 s a
    pair otherwise."""
    from comind.anchoring import RENAME_LIMIT, Anchorer
    from comind.codeindex import CodeIndex

    count = RENAME_LIMIT + 1

    def body(name: object) -> str:
        return "".join(f"line {j} of module {name}\n" for j in range(12))

    for i in range(count):
        gr.write(f"old/p{i}/mod.txt", f"module {i}\n{body(i)}")
    gr.write("old/kept.txt", body("kept"))
    gr.write("old/unique.txt", f"unique\n{body('unique')}")
    gr.write("old/a/keys.txt", f"a\n{body('a')}")
    gr.write("old/b/keys.txt", f"b\n{body('b')}")
    start = gr.commit("many modules")
    gr.git("rm", "-rq", "old")
    for i in range(count):
        gr.write(f"new/q{i}/mod.txt", f"module {i}, edited\n{body(i)}")  # moved and edited, a common name
    gr.write("new/kept.txt", body("kept"))
    gr.write("new/unique.txt", f"unique, edited\n{body('unique')}")
    gr.write("new/x/keys.txt", f"b, edited\n{body('b')}")
    gr.write("new/y/keys.txt", f"a, edited\n{body('a')}")
    gr.commit("move and edit them all")

    def git_says(limit: int) -> list[str]:
        status = gr.git("-c", f"diff.renameLimit={limit}", "diff", "-M", "--name-status", start, "HEAD")
        return [line.split("\t")[0][0] for line in status.splitlines() if "p7/" in line or "q7/" in line]

    assert git_says(RENAME_LIMIT) == ["A", "D"]  # git skips it
    assert git_says(10 * RENAME_LIMIT) == ["R"]
    anchorer = Anchorer(CodeIndex(gr.path))
    assert anchorer._follow_between("old/p7/mod.txt", start, gr.head()) == (None, False)
    assert anchorer._follow_between("old/kept.txt", start, gr.head()) == ("new/kept.txt", True)
    assert anchorer._follow_between("old/unique.txt", start, gr.head()) == ("new/unique.txt", True)
    # a name a few files share: the most similar of them, where git would compare none
    assert anchorer._follow_between("old/a/keys.txt", start, gr.head()) == ("new/y/keys.txt", True)
    assert anchorer._follow_between("old/b/keys.txt", start, gr.head()) == ("new/x/keys.txt", True)
    # one landing is followed in full, as `git log --follow` does (it looks for one file)
    assert anchorer.follow_path("old/p7/mod.txt", start, gr.head()) == ("new/q7/mod.txt", True, None)


def test_every_unchanged_move_is_paired_however_many(gr: GitRepo) -> None:
    """libgit2 stops pairing even unchanged files after 1000 of them unless told otherwise."""
    from comind.anchoring import _exact_moves
    from comind.codeindex import CodeIndex

    for i in range(1500):
        gr.write(f"old/f{i}.txt", f"file {i}\n")
    start = gr.commit("many files")
    gr.git("mv", "old", "new")
    gr.commit("move them")
    index = CodeIndex(gr.path)
    trees = [index.commit_info(rev)[1] for rev in (start, gr.head())]
    moved, deleted, added = _exact_moves(index, *trees)
    assert (len(moved), deleted, added) == (1500, [], [])


def test_unchanged_moves_of_one_content_pair_as_libgit2_pairs_them(gr: GitRepo) -> None:
    """Files of one content (empty ones) moved together: each added file, in path order, takes the
    first deleted one not yet taken, in path order, and the pairs come sorted by the new path, as
    libgit2's `find_similar` with exact matches only lists them."""
    import pygit2

    from comind.anchoring import _changes, _exact_moves
    from comind.codeindex import CodeIndex

    for path in ("a/z.txt", "a/b.txt", "m/y.txt", "keep.txt"):
        gr.write(path, "")
    gr.write("a/c.txt", "other\n")
    start = gr.commit("empty files")
    gr.rm("a/z.txt", "a/b.txt", "m/y.txt", "a/c.txt")
    for path in ("q/x.txt", "b/y.txt", "n/w.txt", "p/c.txt"):
        gr.write(path, "")
    gr.commit("move them")
    index = CodeIndex(gr.path)
    trees = [index.commit_info(rev)[1] for rev in (start, gr.head())]
    diff = index.repo[trees[0]].diff_to_tree(index.repo[trees[1]])
    find = pygit2.enums.DiffFind
    diff.find_similar(flags=find.FIND_RENAMES | find.FIND_EXACT_MATCH_ONLY, rename_limit=1 << 30)
    moved, deleted, added = _exact_moves(index, *trees)
    assert (list(moved.items()), deleted, added) == (list(_changes(diff)[0].items()), *_changes(diff)[1:])
    assert list(moved.items()) == [("a/b.txt", "b/y.txt"), ("a/z.txt", "n/w.txt"), ("m/y.txt", "p/c.txt")]
    assert (deleted, added) == (["a/c.txt"], ["q/x.txt"])


def test_a_file_on_a_merged_branch_is_followed_from_the_merge(gr: GitRepo) -> None:
    from comind.anchoring import Anchorer
    from comind.codeindex import CodeIndex

    gr.branch("topic")
    gr.checkout("topic")
    gr.write("app/perm.py", PERM.replace("log(user)", "log(user, level=1)"))
    on_branch = gr.commit("louder audit")
    gr.mv("app/perm.py", "app/permissions.py")
    gr.commit("rename on the branch")
    gr.checkout("main")
    gr.write("README", "main moves on\n")
    gr.commit("readme")
    gr.merge("topic")
    gr.mv("app/permissions.py", "app/auth/permissions.py")
    gr.commit("rename on main")
    anchorer = Anchorer(CodeIndex(gr.path))
    assert anchorer.follow_path("app/perm.py", on_branch, gr.head()) == ("app/auth/permissions.py", True, None)
    gr.checkout("topic")
    gr.write("app/late.py", "x = 1\n")
    unmerged = gr.commit("never merged")
    gr.checkout("main")
    assert anchorer.follow_path("app/late.py", unmerged, gr.head()) == (None, False, None)  # main never had it
    assert anchorer.follow_path("app/auth/permissions.py", gr.head(), unmerged) == ("app/permissions.py", True, None)


def test_a_blob_missing_from_the_clone_leaves_renames_by_object_id(gr: GitRepo) -> None:
    from comind.anchoring import Anchorer
    from comind.codeindex import CodeIndex

    gr.write("app/big.py", "".join(f"VALUE_{i} = {i}\n" for i in range(200)))
    start = gr.commit("big")
    big_blob = gr.git("rev-parse", f"{start}:app/big.py").strip()
    gr.rm("app/big.py")
    gr.mv("app/perm.py", "app/permissions.py")
    gr.write("app/values.py", "".join(f"VALUE_{i} = {i}\n" for i in range(190)))
    split = gr.commit("split")
    (gr.path / ".git" / "objects" / big_blob[:2] / big_blob[2:]).unlink()  # as in a partial clone
    anchorer = Anchorer(CodeIndex(gr.path))
    assert anchorer.follow_path("app/perm.py", start, gr.head()) == ("app/permissions.py", True, None)
    assert anchorer.follow_path("app/big.py", start, gr.head()) == (None, False, split)


def test_cited_commits_count_when_the_default_branch_contains_them(gr: GitRepo) -> None:
    from comind.anchoring import evidence_verifier
    from comind.anchors import parse_anchor
    from comind.codeindex import CodeIndex
    from comind.records import new_record

    def citing(*shas: str):  # type: ignore[no-untyped-def]
        return new_record(
            "gotcha",
            title="t",
            anchors=[parse_anchor("a.txt")],
            fields={"symptom": "s", "cause": "c"},
            provenance={"actor": "p-1", "author_kind": "human", "source": "cli"},
            evidence=[{"type": "commit", "ref": sha, "role": "cited"} for sha in shas],
        )

    first = gr.head()
    gr.write("a.txt", "1\n")
    skewed = gr.commit("committed with a clock a week behind", date="2023-12-25T00:00:00")
    gr.branch("topic")
    gr.checkout("topic")
    gr.write("b.txt", "2\n")
    unmerged = gr.commit("never merged")
    gr.checkout("main")
    gr.write("d.txt", "3\n")
    ahead = gr.commit("committed with a clock two years ahead", date="2026-01-01T00:00:00")
    for i in range(5):
        gr.write("c.txt", f"{i}\n")
        gr.commit(f"c {i}")
    verify = evidence_verifier(CodeIndex(gr.path), gr.head())
    assert verify(citing(ahead))  # the walk passes older times first: asked of git
    assert verify(citing(gr.head()))
    assert verify(citing(first)) and verify(citing(skewed))  # the walk, resumed; the older commit again
    assert not verify(citing(unmerged)) and not verify(citing(first, unmerged))
    assert not verify(citing("0" * 40)) and not verify(citing())
    assert not evidence_verifier(CodeIndex(gr.path), None)(citing(first))


def test_a_folder_anchor_is_found_while_the_folder_exists(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = remember(cli, gr, "app/")
    gr.write("app/perm.py", PERM + "\n# touched\n")
    gr.commit("touch")
    assert status_of(cli, gr, rid)["status"] == "active"
    gr.git("rm", "-q", "-r", "app")
    gr.commit("drop app")
    s = status_of(cli, gr, rid)
    gone = gr.head()[:10]
    assert s["status"] == "orphaned" and f"app/ no longer exists (deleted in {gone} “drop app”)" in s["status_reason"]


def test_a_folder_moved_with_its_files_is_followed_there(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # git records no folder renames: the folder went where its unchanged files went, twice over
    rid = remember(cli, gr, "app/")
    gr.mv("app/perm.py", "lib/perm.py")
    gr.mv("app/__init__.py", "lib/__init__.py")
    gr.commit("app is lib now")
    gr.write("lib/perm.py", PERM + "\n# touched\n")
    gr.commit("touch")
    gr.mv("lib", "src/lib")
    gr.commit("src layout")
    s = status_of(cli, gr, rid)
    assert s["status"] == "active", s
    assert "app/ folder moved: now src/lib/" in s["notes"]


def test_each_commit_off_the_chain_lands_with_the_first_merge_that_brought_it(gr: GitRepo) -> None:
    """`_merged` against its definition, asked of git commit by commit: a branch merged into a
    branch, an octopus, and a branch off an already merged one."""
    import pygit2

    from comind.anchoring import Anchorer
    from comind.codeindex import CodeIndex

    def on(branch: str, *messages: str) -> None:
        gr.checkout(branch)
        for message in messages:
            gr.write(f"{message}.txt", message)
            gr.commit(message)

    base = gr.head()
    gr.branch("f"), on("f", "f1"), gr.branch("g"), on("g", "g1", "g2"), gr.checkout("f"), gr.merge("g")
    gr.branch("x"), on("x", "x1")
    on("main", "m1"), gr.merge("f")
    for name in ("h", "k"):
        gr.branch(name, base), on(name, f"{name}1")
    gr.checkout("main")
    gr.git("merge", "-q", "--no-ff", "-m", "octopus", "h", "k")
    on("main", "m2"), gr.merge("x")
    repo = pygit2.Repository(str(gr.path))
    anchorer = Anchorer(CodeIndex(gr.path))
    chain = anchorer._chain(gr.head())[0]
    expected = {}
    for commit in repo.walk(repo.head.target):
        sha = str(commit.id)
        if sha in chain:
            continue
        for i, landing in enumerate(chain):
            parents = repo[landing].peel(pygit2.Commit).parent_ids[1:]
            holding = [p for p in parents if p == commit.id or repo.descendant_of(p, commit.id)]
            if holding:
                expected[sha] = (i, str(holding[0]))
                break
    assert anchorer._merged(gr.head()) == expected
    assert len(expected) == 7  # f1, g1, g2, the merge of g, h1, k1, x1


def test_what_the_search_for_a_removal_found_is_written_to_the_index_cache_at_once(gr: GitRepo) -> None:
    """Which versions define a symbol (a dozen asked per removed symbol, ~1,000 in a cold status)
    is written to the index cache with the locations, in one write, and read back by the next run."""
    from comind.anchoring import Anchorer
    from comind.codeindex import CodeIndex

    start = gr.head()
    for i in range(6):
        gr.write("app/notes.py", f"N = {i}\n")
        gr.commit(f"note {i}")
    gr.write("app/perm.py", PERM.replace("    def audit(self, user):\n        log(user)\n", ""))
    removed = gr.commit("drop audit")
    gr.write("app/notes.py", "N = 9\n")
    gr.commit("note 9")

    def facts(index: CodeIndex) -> int:
        return int(index.db.execute("SELECT count(*) FROM memo WHERE kind = 'defines'").fetchone()[0])

    anchorer = Anchorer(CodeIndex(gr.path))
    assert anchorer._removed_in("app/perm.py", "Checker.audit", start, gr.head()) == removed
    assert facts(anchorer.index) == 0  # not yet: one write at the flush
    anchorer.flush()
    written = facts(anchorer.index)
    assert written >= 2
    fresh = Anchorer(CodeIndex(gr.path))
    assert fresh._removed_in("app/perm.py", "Checker.audit", start, gr.head()) == removed
    fresh.flush()
    assert facts(fresh.index) == written  # all read back, none found again


def test_file_moves_says_each_file_renamed_once_and_keeps_the_other_notes() -> None:
    from comind.anchoring import file_moves

    notes = [
        "a/x.rs::Ignore file renamed: now b/x.rs::Ignore",
        "a/x.rs::Ignore.add file renamed: now b/x.rs::Ignore.add",
        "a/x.rs::Inner: body changed since 5714dbde09 (85% similar)",
        "a/y.md file renamed: now b/y.md",  # a file anchor: no symbols to count
        "a/z.rs::f moved: now a/w.rs::f",  # not a file renamed
    ]
    assert file_moves(notes) == (
        ["file renamed: a/x.rs → b/x.rs (2 symbols)", "file renamed: a/y.md → b/y.md"],
        ["a/x.rs::Inner: body changed since 5714dbde09 (85% similar)", "a/z.rs::f moved: now a/w.rs::f"],
    )
