"""The dead-end matcher (`checks.deadends.match_lines` / `is_match`) on the approaches of real commits."""

from __future__ import annotations

from pathlib import Path

import pytest
from harvest_repo import CACHE, HarvestRepo

from comind.checks.deadends import ChangeLines, is_match, judge, match_lines
from comind.harvest.approach import approach, approach_of_range, bookkeeping, release_notes
from comind.rulebook import book

THRESHOLD, MIN_LINES = 0.6, 3


@pytest.fixture
def repo(tmp_path: Path) -> HarvestRepo:
    r = HarvestRepo(tmp_path / "r")
    r.commit("Initial\n", {"app.py": "def lookup(key):\n    return load_from_disk(key)\n", "README.md": "demo\n"})
    return r


def matches(repo: HarvestRepo, attempt: str, change: str) -> bool:
    return is_match(match_lines(approach(repo.path, attempt), approach(repo.path, change)))


def test_a_reproposal_reformatted_and_moved_is_matched(repo: HarvestRepo) -> None:
    attempt_sha = repo.commit("Cache lookups\n", {"app.py": CACHE})
    attempt = approach(repo.path, attempt_sha)
    repo.revert(attempt_sha)
    repo.checkout("-b", "mr")
    moved = CACHE.replace("    ", "\t").replace("import functools\n", "")
    repo.commit("Speed up lookups\n", {"lib/cache.py": moved, "app.py": "from lib.cache import lookup\n"})
    m = match_lines(attempt, approach_of_range(repo.path, "main", "mr"))
    # informative: four added (the signature and three assignments), two removed (the old signature
    # and `return load_from_disk(key)`); `if value is None:` and `return value` say too little
    assert (m.matched, m.total) == (6, 6) and is_match(m)
    unrelated = repo.commit("Docs\n", {"README.md": "demo\nmore docs about the cache\n"})
    assert match_lines(attempt, approach(repo.path, unrelated)).matched == 0


def test_lines_are_a_multiset(repo: HarvestRepo) -> None:
    a1 = repo.commit("Thrice\n", {"x.py": "retry(session)\nretry(session)\nretry(session)\n"})
    a2 = repo.commit("Once more\n", {"x.py": "retry(session)\nretry(session)\nretry(session)\nretry(session)\n"})
    m = match_lines(approach(repo.path, a1), approach(repo.path, a2))
    assert (m.matched, m.total) == (1, 3) and not is_match(m)


def test_a_line_brought_back_with_more_words_counts_in_a_file_of_the_same_name(repo: HarvestRepo) -> None:
    base = "for name, pkg in imports:\n    if len(pkg.errors) > 0:\n        missing.add(name)\n"
    repo.commit("Loader\n", {"load.go": base})
    attempt = repo.commit(
        "Modify the check for a missing package\n",
        {"load.go": base.replace("len(pkg.errors) > 0", "len(pkg.compiled_files) == 0")},
    )
    repo.revert(attempt)
    again = repo.commit(
        "Modify the check for a missing package\n",
        {"load.go": base.replace("len(pkg.errors) > 0", 'pkg.path != "unsafe" && len(pkg.compiled_files) == 0')},
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.matched, m.total, m.local) == (2, 2, 2) and is_match(m)
    repo.revert(again)
    elsewhere = repo.commit(
        "Another loader\n", {"other.go": 'if pkg.path != "unsafe" && len(pkg.compiled_files) == 0\n'}
    )
    assert match_lines(approach(repo.path, attempt), approach(repo.path, elsewhere)).matched == 0
    shorter = repo.commit("Shorter\n", {"load.go": base.replace("len(pkg.errors) > 0", "len(pkg.compiled_files)")})
    assert not matches(repo, attempt, shorter)  # fewer words than the attempt's line: not the same line


def test_a_change_made_of_a_small_piece_of_an_attempt_is_not_matched(repo: HarvestRepo) -> None:
    body = "".join(f"    option_{i} = config.lightning.option_{i}\n" for i in range(50))
    repo.commit("Compile\n", {"css.py": "def compile(config):\n    pass\n"})
    attempt = repo.commit("Spread the options\n", {"css.py": "def compile(config):\n" + body})
    repo.revert(attempt)
    piece = repo.commit(
        "Spread some options\n", {"css.py": "def compile(config):\n" + body[: body.index("option_4 =")]}
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, piece))
    # all of the change, but under a tenth of the attempt: a few lines of a large change recur by chance
    assert (m.matched, m.total, m.own) == (4, 50, 4) and not is_match(m)
    assert judge(m).shortfall == (
        "it re-adds 4 of the attempt's 50 informative lines: a match needs 60% of them, or 50% of the 50 it "
        "added; or, as a part brought back, 10% of them making 90% of the change's 4 own lines, or 40 lines and "
        "30% of them making 40%, mostly in its files"
    )
    assert is_match(m, book({"D1.share": 0.05}))  # a lower threshold takes it


def test_a_small_attempt_counts_only_as_a_fair_share_of_the_change(repo: HarvestRepo) -> None:
    bump = "TIMEOUT_SECONDS = read_setting('timeout', 30)\nRETRIES = read_setting('retries', 5)\n"
    repo.commit("Settings\n", {"settings.py": "DEBUG = False\n"})
    attempt = repo.commit("Longer timeout\n", {"settings.py": "DEBUG = False\n" + bump})
    repo.revert(attempt)
    alone = repo.commit(
        "Longer timeout again\n",
        {"settings.py": "DEBUG = False\n" + bump, "app.py": "configure_logging(verbose=True)\n"},
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, alone))
    assert (m.matched, m.own) == (2, 5) and is_match(m)  # 2 of 5: a fair share
    assert judge(m).shortfall == ""
    repo.revert(alone)
    upgrade = "".join(f"register_handler('event_{i}', handle_event_{i})\n" for i in range(12))
    lost = repo.commit("Upgrade the event bus\n", {"settings.py": "DEBUG = False\n" + bump, "events.py": upgrade})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, lost))
    assert (m.matched, m.own) == (2, 14) and not is_match(m)  # 2 of 14: chance
    assert judge(m).shortfall.endswith(": under 4 lines, they must make 25% of the change's 14 own lines")
    repo.revert(lost)
    body = "".join(f"    option_{i} = config.lightning.option_{i}\n" for i in range(8))
    big = repo.commit("Spread the options\n", {"css.py": "def compile(config):\n" + body})
    repo.revert(big)
    again = repo.commit(
        "Spread the options, with the event bus\n",
        {"css.py": "def compile(config):\n" + body, "events.py": upgrade * 3},
    )
    m = match_lines(approach(repo.path, big), approach(repo.path, again))
    assert m.matched == 9 and m.own > 4 * m.matched and is_match(m)  # enough to stand alone


def test_removing_again_only_what_an_attempt_removed_is_not_its_approach(repo: HarvestRepo) -> None:
    legacy = "".join(f"legacy_format_{i} = decode_legacy_record(stream, {i})\n" for i in range(10))
    repo.commit("Legacy decoder\n", {"legacy.py": legacy})
    modern = (
        "records = decode_modern_records(stream)\nmodern_format = detect_modern_format(stream)\n"
        "modern_version = modern_format.version_number\n"
    )
    attempt = repo.commit("Replace the legacy decoder\n", {"legacy.py": modern})  # removes 10, adds 3
    repo.revert(attempt)
    repo.git("rm", "-q", "legacy.py")
    dropped = repo.commit("Drop the legacy format\n")
    m = match_lines(approach(repo.path, attempt), approach(repo.path, dropped))
    # 10 of 13 lines (77%) again, but none of the three the attempt added: another reason to delete
    assert (m.matched, m.total, m.added, m.added_total) == (10, 13, 0, 3) and not is_match(m)
    said = "it re-removes 10 of the attempt's 13 informative lines, none of those it added"
    assert judge(m).shortfall.startswith(said)
    repo.revert(dropped)
    again = repo.commit("Replace the legacy decoder, take 2\n", {"legacy.py": modern.splitlines(True)[0]})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.matched, m.added) == (11, 1) and is_match(m)
    # an attempt that only removed is judged on its removals, when they are not lost in a rework
    repo.revert(again)
    removal = repo.commit("Drop the legacy decoder\n", {"legacy.py": ""})
    repo.revert(removal)
    rework = "".join(f"stream_handler_{i} = register_stream_handler('kind_{i}', decode_kind_{i})\n" for i in range(200))
    reworked = repo.commit("Rework the stream handlers\n", {"legacy.py": "", "streams.py": rework})
    m = match_lines(approach(repo.path, removal), approach(repo.path, reworked))
    assert (m.matched, m.added, m.own) == (10, 0, 210) and not is_match(m)  # 10 of 210
    repo.revert(reworked)
    assert matches(repo, removal, repo.commit("Drop the legacy format\n", {"legacy.py": ""}))


def test_half_of_what_an_attempt_added_brought_back_is_matched(repo: HarvestRepo) -> None:
    """golang's `imports: … (again)`: the lines the attempt removed came back with its revert and were
    edited since, so the reland cannot remove them as they were; it re-adds 9 of the 17 it added."""
    legacy = "".join(f"legacy_format_{i} = decode_legacy_record(stream, {i})\n" for i in range(10))
    repo.commit("Legacy decoder\n", {"legacy.py": legacy})
    modern = [f"modern_part_{i} = decode_modern_part(stream, part={i})\n" for i in range(8)]
    attempt = repo.commit("Replace the legacy decoder\n", {"legacy.py": "".join(modern)})  # removes 10, adds 8
    repo.revert(attempt)
    edited = legacy.replace("decode_legacy_record", "read_legacy_record")
    repo.commit("Rename the legacy reader\n", {"legacy.py": edited})
    rework = "modern_parts = collect_modern_parts(stream)\n"
    half = repo.commit("Replace the legacy decoder (again)\n", {"legacy.py": "".join(modern[:4]) + rework})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, half))
    assert (m.matched, m.total, m.added, m.added_total, m.own) == (4, 18, 4, 8, 15)  # 22% of it, half its adds
    assert is_match(m)
    repo.revert(half)
    fewer = repo.commit("Some modern parts\n", {"legacy.py": "".join(modern[:3]) + rework})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, fewer))
    assert (m.matched, m.added) == (3, 3) and not is_match(m)  # 3 of 8: under half
    assert "or 50% of the 8 it added" in judge(m).shortfall
    repo.revert(fewer)
    events = "".join(f"register_handler('event_{i}', handle_event_{i})\n" for i in range(12))
    lost = repo.commit(
        "Modern parts in an event rework\n", {"legacy.py": "".join(modern[:4]) + rework, "events.py": events}
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, lost))
    assert (m.matched, m.own) == (4, 27) and not is_match(m)  # under a quarter of the change


CI = "jobs:\n  test:\n    strategy:\n      matrix:\n        node:\n          - '14'\n          - '16'\n"


def test_an_attempt_with_no_informative_line_is_matched_by_its_whole_edit_alone(repo: HarvestRepo) -> None:
    """pnpm's `ci: test on Node.js 17`: one line, `- '17'`, too short to count anywhere; reverted, and
    made again alone. The same edit alone re-proposes it; the line inside another change does not."""
    repo.commit("CI\n", {".github/workflows/ci.yml": CI})
    attempt = repo.commit("ci: test on Node.js 17\n", {".github/workflows/ci.yml": CI + "          - '17'\n"})
    repo.revert(attempt)
    again = repo.commit("ci: test on Node.js 17 (#3990)\n", {".github/workflows/ci.yml": CI + "          - '17'\n"})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.total, m.edited, m.where) == (0, 1, (".github/workflows/ci.yml", 8))
    assert judge(m).kind == "edit"
    repo.revert(again)
    more = repo.commit(
        "ci: Node.js 17 and a lint job\n",
        {".github/workflows/ci.yml": CI + "          - '17'\n", "lint.sh": "npx eslint --max-warnings 0 src\n"},
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, more))
    assert m.edited == 0 and not is_match(m)  # not alone
    assert judge(m).shortfall == (
        "the attempt has no informative lines, and the change does not make its whole edit again, alone"
    )
    repo.revert(more)
    elsewhere = repo.commit("Node.js 17 in the docs matrix\n", {"docs/matrix.yml": "          - '17'\n"})
    assert not matches(repo, attempt, elsewhere)  # the same line in a file named otherwise
    repo.revert(elsewhere)
    eighteen = repo.commit(
        "ci: test on Node.js 17 and 18\n", {".github/workflows/ci.yml": CI + "          - '17'\n          - '18'\n"}
    )
    assert not matches(repo, attempt, eighteen)  # another edit
    repo.revert(eighteen)
    moved = repo.commit(
        "ci: reorder\n", {".github/workflows/ci.yml": CI.replace("          - '14'\n", "") + "          - '14'\n"}
    )
    m = match_lines(approach(repo.path, moved), approach(repo.path, again))
    assert not any(ChangeLines(approach(repo.path, moved)).edit) and m.edited == 0  # a line moved is no edit


def test_a_large_piece_of_an_attempt_written_again_is_matched(repo: HarvestRepo) -> None:
    """deno's `Reland "refactor(core): cleanup feature flags…"` re-adds 232 of 470 lines: half of it
    reworked, and still the reverted change. Forty lines or more, three tenths of the attempt, four
    tenths of the change."""

    def flags(names: range) -> str:
        return "def setup(settings):\n" + "".join(
            f"    features.register('flag_{i}', default=settings.flag_{i}_enabled)\n" for i in names
        )

    repo.commit("Feature flags\n", {"flags.py": flags(range(0))})  # (a file created again alone is "files")
    attempt = repo.commit("Clean up feature flags\n", {"flags.py": flags(range(100))})
    repo.revert(attempt)
    rework = "".join(f"    features.declare('flag_{i}', owner=settings.owner('flag_{i}'))\n" for i in range(100, 150))
    again = repo.commit("Reland the feature flags\n", {"flags.py": flags(range(45)) + rework})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.matched, m.total, m.own) == (45, 100, 95) and is_match(m)  # 45%, 47%
    repo.revert(again)
    fewer = repo.commit("Some feature flags\n", {"flags.py": flags(range(35)) + rework})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, fewer))
    assert (m.matched, m.own) == (35, 85) and not is_match(m)  # under forty lines
    repo.revert(fewer)
    larger = repo.commit(
        "Feature flags in a settings rework\n",
        {
            "flags.py": flags(range(45)) + rework,
            "settings.py": "".join(
                f"SETTING_{i} = environment.get('SETTING_{i}', default_for({i}))\n" for i in range(80)
            ),
        },
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, larger))
    assert (m.matched, m.own) == (45, 175) and not is_match(m)  # a quarter of the change
    repo.revert(larger)
    elsewhere = repo.commit("Feature flag fixtures\n", {"fixtures.py": flags(range(45)) + rework})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, elsewhere))
    assert (m.matched, m.local) == (45, 0) and not is_match(m)  # not in its files


def test_a_match_mostly_elsewhere_in_a_large_change_is_incidental(repo: HarvestRepo) -> None:
    """babel's parser changes re-add the AST positions of a reverted change's tests in their own
    `output.json` fixtures, among thousands of lines: found mostly in files named unlike the
    attempt's, and under a tenth of the change, they are incidental."""
    positions = "".join(
        f'"start": {i}, "end": {i + 7}, "loc": {{"line": {i}, "column": {i % 9}}},\n' for i in range(20)
    )
    attempt = repo.commit("Better async/await support\n", {"tests-harmony.js": positions})
    repo.revert(attempt)
    grammar = "".join(f"parse_rule_{i} = grammar.rule('rule_{i}', precedence={i})\n" for i in range(200))
    parser = repo.commit("Error recovery in the parser\n", {"output.json": positions, "parser.py": grammar})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, parser))
    assert (m.matched, m.local, m.own) == (20, 0, 220) and not is_match(m)
    assert "20 of them in files named unlike its own" in judge(m).shortfall
    repo.revert(parser)
    again = repo.commit(
        "Async/await, again, with error recovery\n", {"tests-harmony.js": positions, "parser.py": grammar}
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.matched, m.local) == (20, 20) and is_match(m)  # where it was: the attempt
    repo.revert(again)
    small = repo.commit("Positions in a fixture\n", {"output.json": positions, "parser.py": grammar[:300]})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, small))
    assert m.local == 0 and m.matched >= 0.1 * m.own and is_match(m)  # most of the change


def test_a_piece_of_an_attempt_that_is_nearly_all_the_change_is_brought_back(repo: HarvestRepo) -> None:
    fix = "".join(f"    report_teardown_error(item_{i}, stage='teardown', maxfail=config.maxfail)\n" for i in range(21))
    test = "".join(
        f"def test_teardown_case_{i}(pytester):\n    pytester.runpytest('--maxfail=1', 'case_{i}')\n" for i in range(20)
    )
    attempt = repo.commit(
        "Fix teardown error reporting\n", {"runner.py": "def teardown(config):\n" + fix, "test_runner.py": test}
    )  # 62 lines
    repo.revert(attempt)
    back = repo.commit(
        "Add back the teardown fix\n",
        {"runner.py": "def teardown(config):\n" + fix + "    log_teardown_summary(config.reporter)\n"},
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, back))
    # 22 of 62 lines (35%, under the threshold), but 22 of the change's 23: that part, brought back
    assert (m.matched, m.total, m.own) == (22, 62, 23) and is_match(m)
    repo.revert(back)
    other = "".join(f"register_plugin_hook('hook_{i}', plugin_{i}.handle)\n" for i in range(4))
    more = repo.commit(
        "Teardown fix with plugin hooks\n", {"runner.py": "def teardown(config):\n" + fix, "hooks.py": other}
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, more))
    assert (m.matched, m.own) == (22, 26) and not is_match(m)  # 85%: more than the piece
    repo.revert(more)
    lines = fix.splitlines(keepends=True)
    tenth = repo.commit("The first teardown reports\n", {"runner.py": "def teardown(config):\n" + "".join(lines[:6])})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, tenth))
    assert (m.matched, m.own) == (7, 7) and is_match(m)  # 7 of 62: a tenth, and all of it
    repo.revert(tenth)
    crumb = repo.commit("Two teardown reports\n", {"runner.py": "def teardown(config):\n" + "".join(lines[:2])})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, crumb))
    assert (m.matched, m.own) == (3, 3) and not is_match(m)  # 3 of 62: a crumb, by chance


def test_an_attempt_that_only_created_files_is_matched_when_they_are_created_again(repo: HarvestRepo) -> None:
    attempt = repo.commit(
        "Carve out the command into its own module\n",
        {
            "cmd/cover/go.mod": "module example.org/tools/cmd/cover\n\nrequire example.org/sys v0.2.0\n",
            "cmd/cover/go.sum": "example.org/sys v0.2.0 h1:aaaa=\n",
            "cmd/cover/doc.go": "// Package cover is deprecated.\npackage main\n",
        },
    )
    repo.revert(attempt)
    again = repo.commit(
        "Carve out the command into its own module\n",
        {
            "cmd/cover/go.mod": "module example.org/tools/cmd/cover\n\nrequire example.org/sys v0.4.0\n",
            "cmd/cover/go.sum": "example.org/sys v0.4.0 h1:bbbb=\n",
            "cmd/cover/doc.go": "// Package cover moved.\npackage main\n",
        },
    )
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    # go.sum is a lockfile: not part of the approach
    assert m.recreated == ("cmd/cover/doc.go", "cmd/cover/go.mod") and is_match(m)
    repo.revert(again)
    half = repo.commit("Only the module file\n", {"cmd/cover/go.mod": "module example.org/tools/cmd/cover\n"})
    assert match_lines(approach(repo.path, attempt), approach(repo.path, half)).recreated == ()
    edits_too = repo.commit("Add a doc and touch the app\n", {"docs/guide.md": "guide\n", "app.py": "x = 1\n"})
    repo.revert(edits_too)
    doc_again = repo.commit("The guide again\n", {"docs/guide.md": "a new guide\n"})
    assert not matches(repo, edits_too, doc_again)  # the rule is for attempts that only created files


def test_lockfiles_and_changelogs_are_not_part_of_an_approach(repo: HarvestRepo) -> None:
    lock = "".join(f'"package-{i}": {{"version": "1.{i}.0", "integrity": "sha512-{i:040d}"}},\n' for i in range(30))
    notes = "".join(f"* fix the parser for case number {i}\n" for i in range(10))
    attempt = repo.commit("Upgrade everything\n", {"package-lock.json": lock, "CHANGELOG.md": notes})
    repo.revert(attempt)
    again = repo.commit("Upgrade again\n", {"package-lock.json": lock, "CHANGELOG.md": notes})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.matched, m.total) == (0, 0) and not is_match(m)
    assert [bookkeeping(n) for n in ("yarn.lock", "go.sum", "HISTORY.rst", "NEWS", "history.py", "changelog.go")] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    # changelog fragments say what a change is (a reland brings the same one back): not bookkeeping, but
    # release notes, which a release consumes; code in a folder of that name is code
    fragments = (".changeset/brave-dogs-run.md", "news/9876.bugfix", "changelog.d/1.feature.md", "news/models.py")
    assert [(bookkeeping(p), release_notes(p)) for p in fragments] == [
        (False, True),
        (False, True),
        (False, True),
        (False, False),
    ]


def test_a_release_notes_folder_is_a_changelog(repo: HarvestRepo) -> None:
    # mockito's doc/release-notes/official.md: every release's entry repeats `* Commits: 2`
    entry = "### 2.2.0-beta.1 (2016-10-03 12:09 UTC)\n\n* Authors: 2\n* Commits: 2\n  * 1: Continuous Delivery Drone\n"
    attempt = repo.commit("Update release notes\n", {"doc/release-notes/official.md": entry})
    repo.revert(attempt)
    again = repo.commit("Increment version\n", {"doc/release-notes/official.md": entry.replace("beta.1", "beta.2")})
    m = match_lines(approach(repo.path, attempt), approach(repo.path, again))
    assert (m.matched, m.total) == (0, 0) and not is_match(m)
    paths = ("doc/release-notes/official.md", "ReleaseNotes/3.x/3.6.rst", "release-notes/render.py", "doc/notes/a.md")
    assert [bookkeeping(p) for p in paths] == [True, True, False, False]


def test_moved_lines_are_not_reproposed(repo: HarvestRepo) -> None:
    attempt = repo.commit("Cache lookups\n", {"app.py": CACHE})
    repo.revert(attempt)
    repo.commit("Keep a copy\n", {"keep.py": CACHE})
    moved = repo.commit("Move it\n", {"keep.py": "", "lib/moved.py": CACHE})
    assert ChangeLines(approach(repo.path, moved)).total == 0
    assert not matches(repo, attempt, moved)


def test_ten_thousand_file_change(tmp_path: Path) -> None:
    r = HarvestRepo(tmp_path / "r")
    r.commit("Root\n", {"keep.txt": "k\n"})
    for i in range(10_000):
        r.write(f"pkg/m{i // 100}/f{i}.py", f"value_{i} = compute({i})\nshared_value = 1\n")
    change = approach(r.path, r.commit("Generate\n"))
    assert len(change.files) == 10_000
    m = match_lines(change, change)
    assert m.matched == m.total == 20_000 and len(m.recreated) == 10_000
