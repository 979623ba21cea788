"""`comind preflight` on real repositories: uncommitted changes, renames, a binary file."""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import pytest
from gitrepo import GitRepo

PERM = (
    "class Checker:\n    def check(self, user, perm):\n"
    "        grants = load_grants(user.id)\n        return perm in grants\n"
)
CACHED = (
    "import redis\n\n_cache = redis.Redis(host='localhost', port=6379)\n\n\nclass Checker:\n"
    "    def check(self, user, perm):\n        cached = _cache.get(f'grants:{user.id}')\n"
    "        if cached is None:\n            cached = load_grants(user.id)\n"
    "            _cache.set(f'grants:{user.id}', cached, ex=300)\n        return perm in cached\n"
)


def _reverted(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.write("app/other.py", "def other():\n    return 1\n" * 5)
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache permission checks in Redis")
    repo.revert_head("Stale grants.")
    return repo


def test_a_history_never_harvested_says_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    repo.write("app/perm.py", CACHED)
    hint = "nothing harvested here yet: `comind harvest` reads"
    for args in (["preflight", "--diff"], ["check", "--staged"]):
        assert hint in cli(repo.path, *args).err
    assert cli(repo.path, "harvest").code == 0
    result = cli(repo.path, "preflight", "--diff")
    assert result.code == 1 and hint not in result.err and "Cache permission checks in Redis" in result.out


def test_an_expired_suppression_is_shown_with_the_constraints_of_what_it_is_on(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    spec = tmp_path / "no-eval.yml"
    spec.write_text("type: ast-grep\nlanguage: python\nrule: {pattern: 'eval($X)'}\nmessage: 'eval of $X'\n")
    must = ["--title", "No eval", "--rule", "no eval", "--severity", "must", "--check", str(spec)]
    constraint = cli(repo.path, "remember", "constraint", "--on", "app/perm.py", *must).out.strip()
    said = ["--title", "s", "--constraint", constraint, "--reason", "r", "--owner", "o", "--expires", "2020-02-01"]
    with pytest.MonkeyPatch.context() as clock:  # written while it held
        clock.setenv("COMIND_NOW", "2020-01-15T00:00:00Z")
        assert cli(repo.path, "remember", "suppression", "--on", "app/perm.py", *said).code == 0
    repo.git("add", "-A")
    repo.commit("records")

    def sections() -> list[tuple[str, str]]:
        result = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)
        return [(i["section"], i["kind"]) for i in result["items"]]

    repo.write("README.md", "x\n")
    assert ("breaks", "suppression") not in sections() and ("reproposes", "suppression") not in sections()
    repo.write("app/perm.py", PERM + "# touched\n")
    assert ("breaks", "suppression") in sections()


def test_working_tree_change_reproposing_a_dead_end_fails(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    assert cli(repo.path, "harvest").code == 0
    repo.write("app/perm.py", CACHED)  # uncommitted
    repo.write("app/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0binary")  # untracked, binary
    repo.git("mv", "app/other.py", "app/renamed.py")  # a rename
    result = cli(repo.path, "preflight", "--diff", "--format", "json")
    assert result.code == 1, result.err
    data = json.loads(result.out)
    assert next(i["section"] for i in data["items"]) == "reproposes"
    assert "Cache permission checks in Redis" in data["items"][0]["title"]
    agent = cli(repo.path, "preflight", "--diff", "--format", "agent")
    assert agent.out.startswith('<comind-ledger source="comind"')
    assert "[attempt · T" in agent.out and "verify: read app/perm.py" in agent.out
    assert repo.git("status", "--porcelain").count("\n") == 3  # nothing staged or written by preflight


def test_an_edit_git_must_read_to_see_is_seen(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An edit keeping a file's size and mtime, made in the second its index was written (racily
    clean: git reads the file to know), was missed: the copied index got a new mtime, so git trusted
    the stale stat data. ctime is left out (core.trustctime) so that the race is made, not waited for."""
    import os

    repo = GitRepo(tmp_path)
    repo.git("config", "core.trustctime", "false")
    repo.write("a.py", "def f():\n    return 1\n")
    when = 1_700_000_000
    os.utime(repo.path / "a.py", (when, when))
    repo.commit("initial")
    os.utime(repo.path / ".git" / "index", (when, when))  # written in the second the file was
    repo.write("a.py", "def f():\n    return 2\n")  # the same size
    os.utime(repo.path / "a.py", (when, when))
    assert repo.git("diff", "--name-only") == "a.py\n"  # git sees it
    result = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)
    assert result["touched"] == ["a.py::f"], result


def test_code_found_in_the_working_tree_is_said_to_be_verified_there(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`on` was said `verified at` the commit comind writes for the working tree, on no ref: it is
    verified in the working tree (or the index), on HEAD, and at HEAD where the tree is HEAD's."""
    repo = GitRepo(tmp_path)
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("initial")
    said = ["--title", "f caches forever", "--symptom", "stale values", "--cause", "no ttl"]
    assert cli(repo.path, "remember", "gotcha", "--on", "a.py::f", *said).code == 0
    repo.git("add", "-A")
    head = repo.commit("records")
    repo.write("a.py", "def f():\n    return 22\n")

    def on(*args: str) -> tuple[str, str, str]:
        agent = cli(repo.path, "preflight", *args, "--format", "agent").out
        [item] = json.loads(cli(repo.path, "preflight", *args, "--format", "json").out)["items"]
        [line] = [line for line in agent.splitlines() if line.startswith("  on: ")]
        return line, item["verified_at"], item["verified_in"]

    assert on("--diff") == ("  on: a.py::f (verified in the working tree)", head, "working_tree")
    repo.git("add", "a.py")
    assert on("--staged") == ("  on: a.py::f (verified in the index)", head, "index")
    now = repo.commit("f returns 22")
    assert on("--diff", head) == (f"  on: a.py::f (verified at {now[:7]})", now, "")  # a clean tree: HEAD's


def test_text_shows_the_whole_finding_each_line_indented(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    repo.write("app/perm.py", CACHED)
    message = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"][0]["message"]
    text = cli(repo.path, "preflight", "--diff").out.splitlines()
    assert "\nStrongest evidence: " in message and message.endswith("of the attempt by weight.")
    for line in message.splitlines():
        assert f"          {line}" in text


def test_clean_and_staged(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    clean = cli(repo.path, "preflight", "--staged")
    assert clean.code == 0 and "nothing re-proposed" in clean.out
    repo.write("app/perm.py", CACHED)
    assert cli(repo.path, "preflight", "--staged").code == 0  # not staged yet
    repo.git("add", "app/perm.py")
    assert cli(repo.path, "preflight", "--staged").code == 1


def test_bad_range_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    said = "comind: --diff 'nosuch': unknown revision (a commit, branch or tag)\n"  # not "unknown revision 'nosuch'"
    for spec in ("nosuch..HEAD", "HEAD...nosuch", "nosuch"):
        result = cli(repo.path, "preflight", "--diff", spec)
        assert (result.code, result.out, result.err) == (2, "", said), spec


def test_a_file_given_to_preflight_points_to_why(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`preflight FILE` and `preflight --diff FILE` meant "what should I know before editing FILE":
    one line, exit 2, naming `comind why` (a folder with its slash); a revision that names nothing is
    still an unknown revision, and no flag at all still asks for one."""
    repo = _reverted(tmp_path)
    why = "what is known about a file before you edit it: comind why "
    for args, said in [
        (["app/perm.py"], "comind: preflight 'app/perm.py': preflight checks a change"),
        (["--staged", "app/perm.py"], "comind: preflight 'app/perm.py': preflight checks a change"),
        (["--diff", "app/perm.py"], "comind: --diff 'app/perm.py': a path, not a revision; preflight checks"),
        (["--diff", "app"], "comind: --diff 'app': a path, not a revision;"),
    ]:
        result = cli(repo.path, "preflight", *args)
        assert (result.code, result.out, result.err.count("\n")) == (2, "", 1), (args, result.err)
        assert result.err.startswith(said), (args, result.err)
        assert why + ("app/\n" if args[-1] == "app" else "app/perm.py\n") in result.err, (args, result.err)
    unknown = cli(repo.path, "preflight", "--diff", "nosuch")
    assert unknown.err == "comind: --diff 'nosuch': unknown revision (a commit, branch or tag)\n"
    bare = cli(repo.path, "preflight")
    assert (bare.code, bare.err) == (2, "comind: preflight: one of the arguments --diff --staged --plan is required\n")


def test_plan_ranks_the_reverted_attempt_first(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    plan = tmp_path / "plan.md"
    plan.write_text("Cache the permission checks in Redis to speed up Checker.check\n")
    first = cli(repo.path, "preflight", "--plan", str(plan), "--on", "app/perm.py", "--format", "json")
    again = cli(repo.path, "preflight", "--plan", str(plan), "--on", "app/perm.py", "--format", "json")
    assert first.code == 0 and first.out == again.out  # deterministic
    items = json.loads(first.out)["items"]
    assert items and items[0]["kind"] == "attempt" and "Redis" in items[0]["title"]
    assert cli(repo.path, "preflight", "--plan", str(tmp_path / "missing.md")).code == 2
    typed = cli(repo.path, "preflight", "--plan", "cache grants in Redis to speed up every permission check")
    assert typed.code == 2 and typed.err == (  # the plan typed where its file goes: how to pass it
        "comind: --plan 'cache grants in Redis to speed up every permission check': no such file "
        "(--plan reads a file, or stdin with -: echo 'the plan' | comind preflight --plan -)\n"
    )


def test_a_plan_on_code_ranks_its_dead_end_before_a_tooling_bump_sharing_words(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reverted node bump sharing `speed` and `permission` was the best match (1.00) of a plan to
    speed up the permission check, ranked above that check's own dead end (0.72). A plan that names
    the tooling it bumped still ranks the bump first."""
    repo = _reverted(tmp_path)  # "Cache permission checks in Redis", reverted
    repo.write(".nvmrc", "20\n")
    repo.commit("Pin node")
    repo.write(".nvmrc", "22\n")
    repo.commit("Bump node to 22 to speed up the test run")
    repo.revert_head("The permission tests hang on 22.")
    assert cli(repo.path, "harvest").code == 0
    plan = tmp_path / "plan.md"

    def ranked(text: str) -> list[tuple[str, str]]:
        plan.write_text(text)
        result = cli(repo.path, "preflight", "--plan", str(plan), "--format", "json")
        assert result.code == 0, result.err
        return [(i["title"], i["why"]) for i in json.loads(result.out)["items"]]

    code, bump = "Cache permission checks in Redis", "Bump node to 22 to speed up the test run"
    [(first, _), (second, why)] = ranked("Speed up the permission check\n")
    assert (first, second) == (code, bump) and why.endswith("; only on tooling the plan does not name")
    [(first, why), (second, _)] = ranked("Bump node to 22 once the permission checks pass on it\n")
    assert (first, second) == (bump, code) and "tooling" not in why
    assert [t for t, _ in ranked("bump node\n")] == [bump]


def test_plan_reads_on_paths_from_the_folder_it_runs_in(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    plan = tmp_path / "plan.md"
    plan.write_text("Cache the permission checks in Redis\n")
    from_root = cli(repo.path, "preflight", "--plan", str(plan), "--on", "app/perm.py", "--format", "json")
    from_app = cli(repo.path / "app", "preflight", "--plan", str(plan), "--on", "./perm.py", "--format", "json")
    assert from_app.code == 0 and from_app.out == from_root.out and "on app/perm.py" in from_app.out
    outside = cli(repo.path / "app", "preflight", "--plan", str(plan), "--on", "../../perm.py")
    assert outside.code == 2 and outside.err == (
        f"comind: anchor '../../perm.py': the path is outside the repository ({repo.path.resolve()})\n"
    )


def test_plan_scores_are_shown_with_two_decimals(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A score is a weighted sum rounded to four places: printed as it came, a list read `score 0.835`,
    `score 0.4804`, `score 0.38`. Each is shown as the plan's relevance beside it is, `0.00`."""
    monkeypatch.setenv("COMIND_NOW", "2024-01-02T00:00:00Z")
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    for title in ("Grants come from the database", "Import order matters"):
        on = ["--on", "app/perm.py::Checker.check"]
        said = cli(repo.path, "remember", "gotcha", *on, "--title", title, "--symptom", "s", "--cause", "c")
        assert said.code == 0, said.err
    plan = tmp_path / "plan.md"
    plan.write_text("Cache the permission checks in Redis\n")
    result = cli(repo.path, "preflight", "--plan", str(plan), "--on", "app/perm.py")
    scores = re.findall(r"score (\S+):", result.out)
    assert result.code == 0 and len(scores) == 3
    assert all(re.fullmatch(r"[01]\.\d\d", s) for s in scores), scores


def _loaded(repo: Path, args: list[str], modules: tuple[str, ...], stdin: str = "") -> list[str]:
    """Which of `modules` (or a submodule of one) a `comind ARGS` process has loaded by its end."""
    import os
    import subprocess
    import sys

    code = (
        "import sys\nfrom comind.cli import main\n"
        f"sys.argv = ['comind', *{args!r}]\ncode = main()\n"
        f"print(sorted(m for m in {modules!r} if any(k == m or k.startswith(m + '.') for k in sys.modules)))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMIND_")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, input=stdin, capture_output=True, text=True, env=env, check=False
    )
    return list(json.loads(done.stdout.splitlines()[-1].replace("'", '"')))


def test_warm_preflight_diff_loads_only_what_a_plain_ledger_needs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """With no compiled check in the ledger, `preflight --diff` loads no check type, no
    evaluator, no harvester (reverts, trailers, Lore), no language module and no graph: its
    start-up is the diff and the records, not the machinery a ledger does not use."""
    repo = _reverted(tmp_path)
    assert cli(repo.path, "harvest").code == 0
    repo.write("app/perm.py", CACHED)
    assert cli(repo.path, "preflight", "--diff").code == 1  # warm: the index and the caches filled
    unused = (
        "comind.checks.types",
        "comind.checks.evaluate",
        "comind.checks.inline",
        "comind.checks.interface",
        "comind.harvest.run",
        "comind.harvest.markers",
        "comind.harvest.trailers",
        "comind.harvest.lorekeys",
        "comind.languages",
        "comind.graph",
        "concurrent.futures",
        "tomli",
    )
    assert _loaded(repo.path, ["preflight", "--diff"], unused) == []
    # a constraint with a compiled check brings in its type's module, and only that one
    check = tmp_path / "no-eval.yml"
    check.write_text("type: ast-grep\nlanguage: python\nrule: {pattern: 'eval($X)'}\nmessage: 'eval() of $X'\n")
    made = cli(
        repo.path, "remember", "constraint", "--on", "app/", "--title", "No eval", "--rule", "no eval",
        "--severity", "must", "--check", str(check),
    )  # fmt: skip
    assert made.code == 0, made.err
    types = ("comind.checks.types.astgrep", "comind.checks.types.semgrep", "comind.checks.types.graph")
    assert _loaded(repo.path, ["preflight", "--diff"], types) == ["comind.checks.types.astgrep"]


def _reverted_with_docs(cli, tmp_path: Path) -> GitRepo:  # type: ignore[no-untyped-def]
    """A harvested revert of an attempt that also wrote docs: README.md is its first anchor."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.write("README.md", "demo\n")
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.write("README.md", "demo\n\nPermission checks are cached in Redis for five minutes.\n")
    repo.commit("Cache permission checks in Redis")
    repo.git("revert", "--no-edit", "HEAD")
    assert cli(repo.path, "harvest").code == 0
    return repo


def test_verify_names_where_the_change_re_proposes_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An attempt that also wrote docs: what to read is the code the change brings back, not its first anchor."""
    repo = _reverted_with_docs(cli, tmp_path)
    repo.write("app/perm.py", CACHED)
    data = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)
    [item] = [i for i in data["items"] if i["section"] == "reproposes"]
    assert item["verify"].startswith("read app/perm.py:"), item["verify"]


def test_a_plan_shows_an_attempt_by_its_code_as_it_is_now(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An attempt that also wrote docs, ranked for a plan: what to read is its code, not its first
    anchor, and at the lines it has now."""
    repo = _reverted_with_docs(cli, tmp_path)
    repo.write("app/perm.py", "# Permissions.\n" * 10 + PERM)  # the code moves down ten lines
    repo.commit("Say what the module is")
    plan = repo.path.parent / "plan.txt"
    plan.write_text("cache the permission checks in redis\n")
    data = json.loads(cli(repo.path, "preflight", "--plan", str(plan), "--format", "json").out)
    [item] = [i for i in data["items"] if i["kind"] == "attempt"]
    assert item["verify"] == "read app/perm.py:12-14"  # Checker.check where it is now, not where it was


def test_a_record_on_a_file_comind_does_not_parse_still_says_to_read_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("pyproject.toml", '[project]\nname = "app"\nrequires-python = ">=3.11"\n')
    repo.commit("initial")
    made = cli(
        repo.path, "remember", "constraint", "--on", "pyproject.toml", "--title", "Python 3.11 is the floor",
        "--rule", "do not lower requires-python below 3.11", "--severity", "should",
    )  # fmt: skip
    assert made.code == 0, made.err
    plan = repo.path.parent / "plan.txt"
    plan.write_text("lower requires-python to support older Python\n")
    data = json.loads(cli(repo.path, "preflight", "--plan", str(plan), "--format", "json").out)
    [item] = [i for i in data["items"] if i["kind"] == "constraint"]
    assert item["verify"] == "read pyproject.toml"


def test_a_plan_follows_an_attempts_code_to_the_file_it_moved_to(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted_with_docs(cli, tmp_path)
    repo.write("app/perm.py", "")
    repo.write("app/checker.py", "import os\n\n\n" + PERM)  # Checker moves, its body the same
    repo.commit("Move the checker to a module of its own")
    plan = repo.path.parent / "plan.txt"
    plan.write_text("cache the permission checks in redis\n")
    data = json.loads(cli(repo.path, "preflight", "--plan", str(plan), "--format", "json").out)
    [item] = [i for i in data["items"] if i["kind"] == "attempt"]
    assert item["verify"] == "read app/checker.py:5-7" and item["on"] == "app/checker.py::Checker.check"


def test_a_check_whose_glob_matches_no_file_is_a_warning(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    check = tmp_path / "no-eval.yml"
    check.write_text("type: ast-grep\nlanguage: python\nfiles: [src/**]\nrule: {pattern: 'eval($X)'}\n")
    made = cli(
        repo.path, "remember", "constraint", "--on", "app/", "--title", "No eval", "--rule", "no eval",
        "--severity", "must", "--check", str(check),
    )  # fmt: skip
    assert made.code == 0, made.err
    repo.commit("record it")
    repo.write("app/other.py", "def other():\n    return eval('1')\n")  # uncommitted
    result = cli(repo.path, "preflight", "--diff")
    said = f"constraint {made.out.strip()[-8:]} (ast-grep): files glob 'src/**' matches no python file of this tree"
    assert result.code == 0 and f"comind: warning: {said}, so the check cannot fail" in result.err.splitlines()


def test_an_on_anchor_that_names_nothing_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--on` a file, symbol, line, folder or module that is not there at HEAD is one line and exit 2
    (a typo would otherwise rank the plan near nothing); what names something still ranks."""
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    plan = tmp_path / "plan.md"
    plan.write_text("Cache the permission checks in Redis\n")
    for anchor, said in [
        ("nosuch.py::X", "anchor 'nosuch.py::X': no file nosuch.py at "),
        ("nosuch.py", "anchor 'nosuch.py': no file nosuch.py at "),
        ("app/perm.py::Nosuch", "anchor 'app/perm.py::Nosuch': no symbol 'Nosuch' in app/perm.py at "),
        ("app/perm.py:99", "anchor 'app/perm.py:99': app/perm.py has 4 lines at "),
        ("nosuch/", "anchor 'nosuch/': no folder nosuch/ at "),
        ("app", "anchor 'app': no file app at "),  # (ends ": a folder, written app/")
        ("module:nosuch", "anchor 'module:nosuch': no module 'nosuch' at "),
    ]:
        result = cli(repo.path, "preflight", "--plan", str(plan), "--on", anchor)
        assert result.code == 2 and result.out == "", (anchor, result)
        assert result.err.startswith(f"comind: {said}") and result.err.count("\n") == 1, (anchor, result.err)
    for anchor in ("app/perm.py", "app/perm.py::Checker.check", "app/perm.py:3", "app/", "module:app.perm", "repo:",
                   "dep:pypi/redis"):  # fmt: skip
        result = cli(repo.path, "preflight", "--plan", str(plan), "--on", anchor, "--format", "json")
        assert result.code == 0 and json.loads(result.out)["items"], (anchor, result.err)


def test_on_and_limit_are_plan_flags_and_limit_is_at_least_1(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Outside --plan, --on and --limit would be ignored: refused as MCP refuses `on`; a --limit below 1
    would rank nothing: refused as MCP refuses it."""
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    for args, said in [
        (["--diff", "--on", "app/perm.py"], "comind: preflight: --on applies to --plan, not to --diff\n"),
        (["--staged", "--limit", "3"], "comind: preflight: --limit applies to --plan, not to --staged\n"),
        (["--diff", "HEAD~1..HEAD", "--on", "x", "--limit", "3"], "comind: preflight: --on applies to --plan"),
    ]:
        result = cli(repo.path, "preflight", *args)
        assert result.code == 2 and result.out == "" and result.err.startswith(said), (args, result.err)
    plan = tmp_path / "plan.md"
    plan.write_text("Cache the permission checks in Redis\n")
    for limit in ("0", "-3", "x"):
        result = cli(repo.path, "preflight", "--plan", str(plan), "--limit", limit)
        assert result.code == 2 and result.out == "" and result.err.count("\n") == 1, (limit, result.err)
        assert "--limit" in result.err and "at least 1" in result.err, result.err
    assert cli(repo.path, "preflight", "--plan", str(plan), "--limit", "1").code == 0


def test_a_plan_nothing_bears_on_says_so_in_its_own_words(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    plan = tmp_path / "plan.md"
    plan.write_text("Translate the onboarding emails into Welsh\n")
    result = cli(repo.path, "preflight", "--plan", str(plan))
    assert (result.code, result.out) == (0, "comind preflight: no record bears on this plan\n")
    assert "nothing re-proposed" in cli(repo.path, "preflight", "--diff").out  # a change keeps its words


def test_an_agent_block_cut_short_names_the_same_question_in_text(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _reverted(tmp_path)
    cli(repo.path, "harvest")
    for n in range(12):
        made = cli(
            repo.path, "remember", "gotcha", "--title", f"Gotcha {n}: the permission checks are slow when cold",
            "--on", "app/perm.py::Checker.check", "--symptom", "a symptom that takes some room " * 3,
            "--cause", "a cause " * 5,
        )  # fmt: skip
        assert made.code == 0, made.err
    plan = tmp_path / "plan.md"
    plan.write_text("Speed up the permission checks\n")
    args = ["--plan", str(plan), "--on", "app/perm.py", "--limit", "12"]
    block = cli(repo.path, "preflight", *args, "--format", "agent").out
    assert f"more not shown (run: comind preflight --plan {plan} --on app/perm.py --limit 12)\n" in block, block
    assert len(cli(repo.path, "preflight", *args).out.splitlines()) > 12 * 2  # the text has them all
    monkeypatch.setattr("sys.stdin", io.StringIO("Speed up the permission checks\n"))  # asked once: no command
    piped = cli(repo.path, "preflight", "--plan", "-", "--limit", "12", "--format", "agent").out
    assert "more not shown (comind preflight --format text lists every one)\n" in piped, piped
    long = tmp_path / ("a-plan-with-a-long-name-" * 8 + ".md")  # a command past 200 characters: not cut, left out
    long.write_text("Speed up the permission checks\n")
    far = cli(repo.path, "preflight", "--plan", str(long), "--limit", "12", "--format", "agent").out
    assert "more not shown\n" in far and "run: comind" not in far, far
    repo.write("app/perm.py", PERM.replace("load_grants(user.id)", "load_grants(user.id, fresh=True)"))
    assert (
        "more not shown (run: comind preflight --diff)\n"
        in cli(repo.path, "preflight", "--diff", "--format", "agent").out
    )
    repo.git("add", "-A")
    assert (
        "more not shown (run: comind preflight --staged)\n"
        in cli(repo.path, "preflight", "--staged", "--format", "agent").out
    )


def test_a_folder_written_without_its_slash_says_how_to_write_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _reverted(tmp_path)
    plan = tmp_path / "plan.md"
    plan.write_text("Cache the permission checks in Redis\n")
    result = cli(repo.path, "preflight", "--plan", str(plan), "--on", "app")
    assert result.code == 2 and result.err.endswith(": a folder, written app/\n"), result.err
    why = cli(repo.path, "why", "app")
    assert why.code == 2 and why.err.endswith(": a folder, written app/\n"), why.err


def test_a_record_is_verified_at_head_where_its_subject_was_found_there(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A record's `on` followed to where its code is now was said to be verified at the commit it was
    anchored at, which had no such file; a subject gone is shown as anchored, at that commit."""
    repo = GitRepo(tmp_path)
    repo.write("a.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    anchored = repo.commit("initial")
    for symbol, title in (("f", "f caches values forever"), ("g", "g is slow on cold caches")):
        said = ["--symptom", "stale values", "--cause", "no ttl"]
        assert cli(repo.path, "remember", "gotcha", "--on", f"a.py::{symbol}", "--title", title, *said).code == 0
    repo.commit("records")
    repo.git("mv", "a.py", "b.py")
    repo.write("b.py", "def f():\n    return 1\n")
    head = repo.commit("move a.py to b.py; g goes")
    plan = tmp_path / "plan.md"
    plan.write_text("caches values are slow and stale\n")
    result = cli(repo.path, "preflight", "--plan", str(plan), "--format", "json")
    items = {i["title"]: i for i in json.loads(result.out)["items"]}
    moved, gone = items["f caches values forever"], items["g is slow on cold caches"]
    assert (moved["on"], moved["verified_at"]) == ("b.py::f", head)
    assert (gone["on"], gone["verified_at"]) == ("a.py::g", anchored)


def test_a_record_is_shown_by_a_subject_that_is_still_there(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reverted attempt on two files, the first deleted since, was shown by the file gone, with
    nothing to read; it is shown by the one still there, verified at head."""
    repo = GitRepo(tmp_path)
    repo.write(".gitpod.yml", "tasks:\n  - init: yarn\n")
    repo.write("settings.example.json", '{"editor.defaultFormatter": "old.prettier"}\n')
    repo.commit("initial")
    repo.write(".gitpod.yml", "tasks:\n  - init: yarn\nvscode:\n  extensions: [new.prettier]\n")
    repo.write("settings.example.json", '{"editor.defaultFormatter": "new.prettier"}\n')
    repo.commit("Switch to the new prettier extension")
    repo.revert_head("The new extension breaks formatting on save.")
    repo.rm(".gitpod.yml")
    head = repo.commit("Drop the gitpod configuration")
    assert cli(repo.path, "harvest").code == 0
    plan = tmp_path / "plan.md"
    plan.write_text("switch to the new prettier extension\n")
    items = json.loads(cli(repo.path, "preflight", "--plan", str(plan), "--format", "json").out)["items"]
    [attempt] = [i for i in items if i["kind"] == "attempt"]
    assert (attempt["on"], attempt["verified_at"], attempt["verify"]) == (
        "settings.example.json",
        head,
        "read settings.example.json",
    )


def test_on_says_where_the_code_is_now_as_verify_does(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`on` named the file as anchored (app/perm.py) while `verify` followed its rename; both now
    name where it is, and `anchored` where it was. A symbol gone from its file is on that file."""
    repo = _reverted(tmp_path)
    assert cli(repo.path, "harvest").code == 0
    said = ["--symptom", "slow", "--cause", "no index"]
    assert (
        cli(repo.path, "remember", "gotcha", "--on", "app/other.py::other", "--title", "Other is slow", *said).code == 0
    )
    repo.git("mv", "app/perm.py", "app/permissions.py")
    repo.write("app/other.py", "def another():\n    return 2\n")
    repo.commit("Rename the permissions module; other goes")
    repo.write("app/permissions.py", CACHED)
    repo.write("app/other.py", "def another():\n    return 3\n")
    [attempt] = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"]
    assert attempt["on"] == "app/permissions.py::Checker.check"
    assert attempt["verify"].startswith("read app/permissions.py:")
    assert attempt["anchored"] == "app/perm.py::Checker.check"
    plan = tmp_path / "plan.md"
    plan.write_text("other is slow\n")
    items = json.loads(cli(repo.path, "preflight", "--plan", str(plan), "--format", "json").out)["items"]
    [gotcha] = [i for i in items if i["kind"] == "gotcha"]
    assert (gotcha["on"], gotcha["anchored"], gotcha["verify"]) == (
        "app/other.py",
        "app/other.py::other",
        "read app/other.py",
    )
    block = cli(repo.path, "preflight", "--diff", "--format", "agent").out
    assert "; anchored as app/perm.py::Checker.check)\n" in block


def test_a_dead_end_is_found_on_code_whose_file_and_name_both_changed_since(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A dead end on app/perm.py::Checker.check, then the file moved to app/perms.py and the method
    became `allowed`: an edit of `Checker.allowed` listed nothing (records were looked up by the names
    as written), nor did `--on` the new name rank it as on that code, though `why` and the hooks find it."""
    repo = _reverted(tmp_path)
    assert cli(repo.path, "harvest").code == 0
    renamed = PERM.replace("def check", "def allowed")
    repo.git("mv", "app/perm.py", "app/perms.py")
    repo.write("app/perms.py", renamed)
    repo.commit("Move the permissions module; check becomes allowed")
    repo.write("app/perms.py", renamed.replace("perm in grants", "perm in set(grants)"))
    result = cli(repo.path, "preflight", "--diff", "--format", "json")
    [attempt] = json.loads(result.out)["items"]
    assert (attempt["title"], attempt["section"]) == ("Cache permission checks in Redis", "anchored")
    assert (attempt["on"], attempt["anchored"]) == ("app/perms.py::Checker.allowed", "app/perm.py::Checker.check")
    assert attempt["why"] == "on app/perms.py::Checker.allowed, which the change touches"
    assert attempt["verify"] == "read app/perms.py:2-4"
    block = cli(repo.path, "preflight", "--diff", "--format", "agent").out
    assert "; anchored as app/perm.py::Checker.check)\n" in block
    plan = tmp_path / "plan.md"
    plan.write_text("tidy up\n")  # no word in common: only `--on` ranks it
    on = ["--on", "app/perms.py::Checker.allowed", "--format", "json"]
    [ranked] = json.loads(cli(repo.path, "preflight", "--plan", str(plan), *on).out)["items"]
    assert ranked["why"].endswith(": on app/perms.py::Checker.allowed")
    assert (ranked["on"], ranked["anchored"]) == ("app/perms.py::Checker.allowed", "app/perm.py::Checker.check")


@pytest.mark.parametrize(
    ("partial", "what"),
    [(True, ["--staged"]), (False, ["--staged"]), (False, ["--diff"]), (False, ["--diff", "HEAD~1"])],
)
def test_an_index_naming_a_missing_blob_is_one_line_and_exit_2(
    cli, tmp_path: Path, partial: bool, what: list[str]
) -> None:  # type: ignore[no-untyped-def]
    """A partial clone whose promisor is out of reach, or a clone that lost a blob: git's write-tree
    cannot read one the index names, and says so in several lines (a fetch's advice among them).
    (git fetches no blob of a partial clone's sparse entries for write-tree: those do not fail.)"""
    origin = GitRepo(tmp_path, "origin")
    origin.write("app/perm.py", PERM)
    origin.commit("initial")
    origin.write("app/perm.py", CACHED)
    origin.commit("Cache grants")
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    how = ["--filter=blob:none"] if partial else []
    subprocess.run(["git", "clone", "-q", "--no-local", *how, f"file://{origin.path}", str(clone)], check=True)
    old = origin.git("rev-parse", "HEAD~1:app/perm.py").strip()
    if partial:
        origin.path.rename(origin.path.with_name("moved"))  # the promisor is out of reach
    else:
        _drop_object(clone, old)
    # the index names the old blob: staged, or (outside a sparse checkout) kept by `git add -A`
    git = ["git", "-C", str(clone), "update-index"]
    subprocess.run([*git, "--add", "--cacheinfo", f"100644,{old},app/old.py"], check=True)
    if not partial:
        subprocess.run([*git, "--skip-worktree", "app/old.py"], check=True)
    result = cli(clone, "preflight", *what)
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and old in result.err, result.err
    assert result.err.startswith("comind: git write-tree: ")
    assert "Please make sure" not in result.err and "fatal:" not in result.err and "error:" not in result.err


def _drop_object(clone: Path, oid: str) -> None:
    """Unpack the clone's packs into loose objects, then delete one of them."""
    objects = clone / ".git" / "objects"
    for pack in sorted((objects / "pack").glob("*.pack")):
        data = pack.read_bytes()
        for stale in pack.parent.glob(pack.stem + ".*"):
            stale.unlink()
        subprocess.run(["git", "-C", str(clone), "unpack-objects", "-q"], input=data, check=True)
    (objects / oid[:2] / oid[2:]).unlink()


def _blobless_past_change(cli, tmp_path: Path) -> tuple[GitRepo, Path]:  # type: ignore[no-untyped-def]
    """An origin with a gotcha on Checker.check and two later changes to it, and a blobless clone of
    it: the clone lacks the contents of app/perm.py before its last change."""
    origin = GitRepo(tmp_path, "origin")
    origin.write("app/perm.py", PERM + "\n\ndef other():\n    return 1\n")
    origin.commit("initial")
    said = ["--symptom", "slow", "--cause", "no cache"]
    assert (
        cli(
            origin.path, "remember", "gotcha", "--on", "app/perm.py::Checker.check", "--title", "check is slow", *said
        ).code
        == 0
    )
    origin.git("add", ".comind")
    origin.commit("records")
    for strict in ("True", "False"):
        origin.write(
            "app/perm.py", PERM.replace("user.id", f"user.id, strict={strict}") + "\n\ndef other():\n    return 1\n"
        )
        origin.commit(f"strict={strict}")
    origin.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", "--filter=blob:none", f"file://{origin.path}", str(clone)], check=True
    )
    return origin, clone


def test_a_past_range_in_a_blobless_clone_fetches_its_blobs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, clone = _blobless_past_change(cli, tmp_path)
    result = cli(clone, "preflight", "--diff", "HEAD~2..HEAD~1", "--format", "json")
    out = json.loads(result.out)
    assert result.code == 0 and (out["partial"], out["unread"], out["warnings"]) == (False, [], [])
    assert [i["title"] for i in out["items"]] == ["check is slow"]
    assert "app/perm.py::Checker.check" in out["touched"]


@pytest.mark.parametrize("partial", [True, False])
def test_a_range_whose_blobs_cannot_be_had_is_a_partial_result(cli, tmp_path: Path, partial: bool) -> None:  # type: ignore[no-untyped-def]
    """The promisor out of reach, or a clone that lost a blob: the changed file is unread, so the
    records on the symbols it touches are missed; it says so, once on stderr and in the output, and
    exits as `comind check` does (0: a warning is no finding)."""
    origin, clone = _blobless_past_change(cli, tmp_path)
    if partial:
        origin.path.rename(origin.path.with_name("moved"))
        why = f"not fetched from the promisor remote: '{origin.path}' does not appear to be a git repository"
    else:
        full = tmp_path / "full"
        subprocess.run(["git", "clone", "-q", "--no-local", str(origin.path), str(full)], check=True)
        _drop_object(full, origin.git("rev-parse", "HEAD~1:app/perm.py").strip())
        clone, why = full, "not in this clone, which has no promisor remote to fetch them from"
    warning = (
        f"partial result: 1 changed file could not be read ({why}): app/perm.py; "
        "the symbols the change touches there, and the records on them, are not known"
    )
    result = cli(clone, "preflight", "--diff", "HEAD~2..HEAD~1", "--format", "json")
    out = json.loads(result.out)
    assert result.code == 0 and (out["partial"], out["unread"], out["warnings"]) == (True, ["app/perm.py"], [warning])
    assert result.err.splitlines()[-1:] == [f"comind: warning: {warning}"]
    assert sum("warning" in line for line in result.err.splitlines()) == 1
    text = cli(clone, "preflight", "--diff", "HEAD~2..HEAD~1")
    assert (
        text.code == 0
        and text.out.splitlines()[-1] == "comind preflight: partial result, 1 changed file could not be read"
    )
    check = cli(clone, "check", "--base", "HEAD~2", "--head", "HEAD~1", "--format", "json")
    report = json.loads(check.out)
    assert check.code == 0 and (report["partial"], report["unread"]) == (True, ["app/perm.py"])
    [said] = [w for w in report["warnings"] if w.startswith("partial")]  # one, saying both
    assert said.startswith(warning)
    assert not report["findings"]  # its record is not "orphaned": the file is unread, not gone


def test_blobs_fetched_after_a_failed_fetch_are_read(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A snapshot indexed while the promisor was out of reach left app/perm.py out; once a later
    run fetches it, the snapshot is indexed again instead of missing the file for good."""
    origin, clone = _blobless_past_change(cli, tmp_path)
    moved = origin.path.rename(origin.path.with_name("moved"))
    assert json.loads(cli(clone, "preflight", "--diff", "HEAD~2..HEAD~1", "--format", "json").out)["partial"]
    moved.rename(origin.path)
    out = json.loads(cli(clone, "preflight", "--diff", "HEAD~2..HEAD~1", "--format", "json").out)
    assert not out["partial"] and "app/perm.py::Checker.check" in out["touched"]
    assert [i["title"] for i in out["items"]] == ["check is slow"]


def test_check_fetches_the_change_s_blobs_before_it_indexes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`comind check` indexed head and base before the diff fetched their blobs: a blobless clone's
    app/perm.py was missing at head, its gotcha reported orphaned."""
    _, clone = _blobless_past_change(cli, tmp_path)
    result = cli(clone, "check", "--base", "HEAD~2", "--head", "HEAD~1", "--format", "json")
    report = json.loads(result.out)
    assert result.code == 0 and (report["partial"], report["warnings"]) == (False, [])
    assert [(f["type"], f["title"]) for f in report["findings"]] == [("context", "gotcha: check is slow")]


def test_json_head_is_the_repository_s_head_and_the_written_commit_is_named_apart(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`head` held the commit comind writes for the working tree (on no ref, unknown to the user);
    it is HEAD's id, and that commit is `uncommitted_commit`, for a range none."""
    repo = _reverted(tmp_path)
    head = repo.head()
    repo.write("app/perm.py", CACHED)
    for args in (["--diff"], ["--diff", "HEAD~1"], ["--staged"]):
        if args == ["--staged"]:
            repo.git("add", "app/perm.py")
        out = json.loads(cli(repo.path, "preflight", *args, "--format", "json").out)
        written = out["uncommitted_commit"]
        assert out["head"] == head and written != head, (args, out)
        assert repo.git("rev-parse", f"{written}^").strip() == out["base"]  # the change as a child of its base
    out = json.loads(cli(repo.path, "preflight", "--diff", "HEAD~2..HEAD", "--format", "json").out)
    assert (out["head"], out["uncommitted_commit"]) == (head, None)
