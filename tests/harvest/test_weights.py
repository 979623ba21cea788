"""Term weights measured from a repository's own history (`comind.weights`, `harvest.weights`), and
the score of a match by them (rule D13), on real repositories built in tmp folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harvest_repo import HarvestRepo

from comind.checks.deadends import ChangeLines, judge, match_lines
from comind.harvest.approach import approach
from comind.harvest.weights import changes, update
from comind.rulebook import book
from comind.weights import Counts, WeightIndex, Weights

# what every test file of this history starts with: scaffolding, in no keyword list
SCAFFOLD = (
    "from harness import fixture_db, settle_clock\n\n"
    "DB = fixture_db(scope='module', seed=1234)\n"
    "settle_clock(DB, offset_minutes=0)\n"
    "assert DB.connected, 'fixture database is down'\n"
)


def _test_file(name: str) -> str:
    return SCAFFOLD + f"\n\ndef test_{name}():\n    assert check_{name}(DB) == expected_{name}\n"


def _always(_tip: str, _old: str) -> bool:
    return True


def _history(repo: HarvestRepo, count: int = 12) -> None:
    repo.commit("Initial\n", {"app/core.py": "def check(db):\n    return db.ping()\n"})
    for i in range(count):
        repo.commit(f"Test feature {i}\n", {f"tests/test_feature_{i}.py": _test_file(f"feature_{i}")})


def _index(repo: HarvestRepo, cache: Path) -> WeightIndex:
    update(str(repo.path / ".git"), cache, repo.head(), _always)
    return WeightIndex.of(cache)


def test_a_line_every_test_file_shares_weighs_less_than_a_rare_identifier(tmp_path: Path) -> None:
    repo = HarvestRepo(tmp_path / "r")
    _history(repo)
    repo.commit("Reconcile shards\n", {"app/ledger.py": "def reconcile_ledger_shards(a, b):\n    return a ^ b\n"})
    index = _index(repo, tmp_path / "cache")
    assert (index.changes, index.files) == (14, 14)
    shared = "DB = fixture_db(scope='module', seed=1234)"
    assert index.counts(shared) == (12, 12)
    assert index.counts("reconcile_ledger_shards") == (1, 1)
    assert index.weight(shared) < 0.2 < 0.7 < index.weight("reconcile_ledger_shards")
    assert index.weight("never_seen_anywhere") == 1.0
    assert index.said("reconcile_ledger_shards") == "held by 1 of the 14 file changes in this history"
    assert index.said("a_name_no_change_holds") == "held by none of the 14 file changes measured in this history"


def test_an_incremental_update_equals_a_full_rebuild(tmp_path: Path) -> None:
    repo = HarvestRepo(tmp_path / "r")
    _history(repo, 5)
    early = tmp_path / "early"
    assert update(str(repo.path / ".git"), early, repo.head(), _always) == 6
    repo.commit("Merge-free edit\n", {"app/core.py": "def check(db):\n    return db.ping(timeout=3)\n"})
    repo.checkout("-b", "side")
    repo.commit("Side work\n", {"app/side.py": "def side_effect():\n    return 42\n"})
    repo.checkout("main")
    repo.merge("side", "Merge side\n")
    assert update(str(repo.path / ".git"), early, repo.head(), _always) == 2  # the edit and the merge
    assert update(str(repo.path / ".git"), early, repo.head(), _always) == 0  # nothing new
    full = tmp_path / "full"
    update(str(repo.path / ".git"), full, repo.head(), _always)
    a, b = WeightIndex.of(early), WeightIndex.of(full)
    assert (a.changes, a.files) == (b.changes, b.files) == (8, 8)
    assert a.table() == b.table() and a.table()
    # a rewritten branch starts again
    assert update(str(repo.path / ".git"), early, repo.head(), lambda tip, old: False, full=False) == 0
    repo.commit("More\n", {"app/more.py": "x = compute_more()\n"})
    assert update(str(repo.path / ".git"), early, repo.head(), lambda tip, old: False) == 9
    assert WeightIndex.of(early).changes == 9


def test_the_stream_reads_each_file_of_a_change_apart(tmp_path: Path) -> None:
    repo = HarvestRepo(tmp_path / "r")
    repo.commit("Two files\n", {"a.py": "alpha = 1\n", "b.py": "beta = 2\n  alpha   = 1\n"})
    [(sha, files)] = list(changes(str(repo.path / ".git"), repo.head(), []))
    assert sha == repo.head() and sorted(map(sorted, files)) == [["alpha = 1"], ["alpha = 1", "beta = 2"]]
    counts = Counts()
    counts.add_change(files)
    assert counts.counts("alpha = 1") == (1, 2) and counts.counts("alpha") == (1, 2)


def test_a_harvest_leaves_the_weights_to_the_first_check_that_reads_them(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = HarvestRepo(tmp_path / "r")
    _history(repo, 3)
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    main = repo.revert(tried)
    cache = repo.path / ".git" / "comind"
    repo.checkout("-b", "again")
    repo.commit("Spread the load\n", {"app/rebalance.py": ATTEMPT.replace("budget)", "budget)  # v2")})
    assert cli(repo.path, "harvest").code == 0
    assert (WeightIndex.of(cache).changes, WeightIndex.of(cache).tip) == (0, "")  # only the check reads them
    result = cli(repo.path, "check", "--base", "main", "--format", "json")
    [dead] = [f for f in json.loads(result.out)["findings"] if f["type"] == "dead_end"]
    assert "file changes in this history (weight" in dead["message"].splitlines()[-1]
    assert (WeightIndex.of(cache).changes, WeightIndex.of(cache).tip) == (6, main)
    repo.checkout("main")
    repo.commit("One more\n", {"app/x.py": "value = settle_clock(None)\n"})
    assert cli(repo.path, "harvest").code == 0 and WeightIndex.of(cache).changes == 6
    repo.checkout("again")
    assert cli(repo.path, "harvest").code == 0 and WeightIndex.of(cache).changes == 6
    assert cli(repo.path, "check", "--base", "main").code in (0, 1)  # its harvest: nothing new
    assert (WeightIndex.of(cache).changes, WeightIndex.of(cache).tip) == (7, repo.git("rev-parse", "main").strip())
    assert cli(repo.path, "harvest", "--full").code == 0  # counted again from the newest changes
    assert WeightIndex.of(cache).changes == 7


def test_a_history_git_cannot_read_is_said_once_per_tip(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A blob the clone lacks stops `git log -p`: the check says every line weighs alike, and does not
    try again at that tip (another comind does)."""
    repo = HarvestRepo(tmp_path / "r")
    repo.commit("Initial\n", {"app/old.py": "legacy = 1\n"})
    repo.commit("Rewrite\n", {"app/old.py": "legacy = 2\n"})
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    blob = repo.git("rev-parse", "HEAD~3:app/old.py").strip()
    loose = repo.path / ".git" / "objects" / blob[:2] / blob[2:]
    kept = loose.read_bytes()
    loose.unlink()
    repo.checkout("-b", "again")
    repo.commit("Spread the load\n", {"app/rebalance.py": ATTEMPT.replace("budget)", "budget)  # v2")})
    assert cli(repo.path, "harvest").code == 0
    warned = "the term weights could not be counted (git log exited with 128): every line weighs alike"
    assert warned in json.loads(cli(repo.path, "check", "--base", "main", "--format", "json").out)["warnings"]
    loose.write_bytes(kept)  # readable again, but at the same tip it is not tried again
    assert warned in json.loads(cli(repo.path, "check", "--base", "main", "--format", "json").out)["warnings"]
    cache = repo.path / ".git" / "comind"
    assert WeightIndex.of(cache).changes == 0
    failed = cache / "weights.failed"
    tip, version = failed.read_text().split("\n")[0].split()
    failed.write_text(f"{tip} {version}.old\nwhat an older comind met")  # another comind tries again
    assert not json.loads(cli(repo.path, "check", "--base", "main", "--format", "json").out)["warnings"]
    assert WeightIndex.of(cache).changes == 4 and not failed.exists()
    repo.checkout("main")
    repo.commit("One more\n", {"app/x.py": "value = 3\n"})
    repo.checkout("again")
    assert cli(repo.path, "harvest").code == 0
    report = json.loads(cli(repo.path, "check", "--base", "main", "--format", "json").out)
    assert not report["warnings"] and WeightIndex.of(cache).changes == 5  # the new change alone read


# -- the score -------------------------------------------------------------------------------------

ATTEMPT = (
    "def shard_rebalancer(cluster, budget):\n"
    "    plan = RebalancePlan(cluster.shards, budget=budget)\n"
    "    for shard in plan.overloaded_shards():\n"
    "        plan.migrate(shard, target=plan.coolest_node())\n"
    "    plan.throttle(max_moves=budget.max_moves)\n"
    "    cluster.apply_rebalance(plan)\n"
    "    metrics.rebalance_moves.inc(len(plan.moves))\n"
    "    return plan\n"
)
# a reland rewritten: a third of the lines come back as they were, the names and the file stay
RELAND = (
    "def shard_rebalancer(cluster, budget, *, dry_run=False):\n"
    "    plan = RebalancePlan(cluster.shards, budget=budget)\n"
    "    moves = [(s, plan.coolest_node()) for s in plan.overloaded_shards()]\n"
    "    for shard, node in moves:\n"
    "        plan.migrate(shard, target=node)\n"
    "    plan.throttle(budget.max_moves)\n"
    "    if not dry_run:\n"
    "        cluster.apply_rebalance(plan)\n"
    "    metrics.rebalance_moves.inc(len(moves))\n"
    "    return plan\n"
)

STUB = "def shard_rebalancer(cluster, budget):\n    raise NotImplementedError('no rebalancing yet')\n"


@pytest.fixture
def scaffolded(tmp_path: Path) -> tuple[HarvestRepo, Weights]:
    repo = HarvestRepo(tmp_path / "r")
    _history(repo)
    return repo, _index(repo, tmp_path / "cache")


def test_a_rewritten_reland_that_keeps_its_names_scores(scaffolded: tuple[HarvestRepo, Weights]) -> None:
    repo, weights = scaffolded
    repo.commit("Stub\n", {"app/rebalance.py": STUB})
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    again = repo.commit("Rebalance shards, with a dry run\n", {"app/rebalance.py": RELAND})
    m = match_lines(approach(repo.path, tried), approach(repo.path, again), weights=weights)
    assert m.matched / m.total < 0.6 and judge(m).kind is None  # the share of lines alone: no match
    assert m.score >= 0.6 and m.weight >= 3
    verdict = judge(m, book({"D13.score": 0.5}))
    assert (verdict.kind, verdict.rule) == ("lines", "D13")
    assert m.evidence.startswith("the identifier `") or m.evidence.startswith("the line `")
    # (the attempt came after the changes measured: none of them holds its line)
    assert (
        "none of the 13 file changes measured in this history, the attempt's own not among them (weight" in m.evidence
    )
    assert "of the attempt by weight" in m.evidence


def test_shared_scaffolding_alone_does_not_score(scaffolded: tuple[HarvestRepo, Weights]) -> None:
    repo, weights = scaffolded
    tried = repo.commit("Test the rebalancer\n", {"tests/test_rebalance.py": _test_file("rebalance")})
    repo.revert(tried)
    other = repo.commit("Test the exporter\n", {"tests/test_export.py": _test_file("export")})
    # (rule L4 off: the new test files copy the scaffold from those beside them, which it makes trivial)
    tried_change, other_change = (approach(repo.path, c, rules=book({"L4.share": 0})) for c in (tried, other))
    m = match_lines(tried_change, other_change, weights=weights)
    assert m.matched >= 3 and m.score < 0.3  # four scaffold lines in common, weighing next to nothing
    assert judge(m, book({"D13.score": 0.5})).rule != "D13"
    assert match_lines(approach(repo.path, tried), approach(repo.path, other), weights=weights).matched == 0  # L4
    unweighted = match_lines(tried_change, other_change, weights=Weights())
    # every term alike, the scaffold would count nearly fully; with nothing measured D13 says nothing
    assert unweighted.evidence.endswith("it brings back 82% of the attempt by weight") and unweighted.score == 0


def test_the_introduced_identifiers_are_the_attempt_s_new_names(tmp_path: Path) -> None:
    repo = HarvestRepo(tmp_path / "r")
    repo.commit("Base\n", {"app.py": "def lookup(key):\n    return load_from_disk(key)\n"})
    cached = "def lookup(key):\n    return lookup_cache.get(key) or load_from_disk(key)\n"
    tried = repo.commit("Cache\n", {"app.py": cached})
    lines = ChangeLines(approach(repo.path, tried))
    assert lines.introduced == frozenset({"lookup_cache", "get"})  # `load_from_disk`, `key`: it had them


def test_check_says_the_strongest_evidence_in_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = HarvestRepo(tmp_path / "r")
    _history(repo, 4)
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    repo.checkout("-b", "again")
    repo.commit("Spread the load over the cluster\n", {"app/rebalance.py": ATTEMPT.replace("budget)", "budget)  # v2")})
    result = cli(repo.path, "check", "--base", "main", "--format", "json")
    [dead] = [f for f in json.loads(result.out)["findings"] if f["type"] == "dead_end"]
    last = dead["message"].splitlines()[-1]
    assert last.startswith("Strongest evidence: the ") and "file changes in this history (weight" in last
    sarif = json.loads(cli(repo.path, "check", "--base", "main", "--format", "sarif").out)
    [result_] = [r for r in sarif["runs"][0]["results"] if "dead" in r["ruleId"]]
    assert "Strongest evidence: " in result_["message"]["text"]


def test_a_partial_index_file_is_read_as_none(tmp_path: Path) -> None:
    (tmp_path / "weights.sqlite").write_bytes(b"not a database")
    index = WeightIndex.of(tmp_path)
    assert index.changes == 0 and index.weight("anything") == 1.0
    counts = Counts()
    counts.add_change([{"alpha = 1"}])
    index.add(counts, "abc")  # a cache, rebuilt: what was there was not an index
    assert WeightIndex.of(tmp_path).counts("alpha") == (1, 1)


# -- kept names (D14) -------------------------------------------------------------------------------

ON_OPTIONS = {"D14.names": 3}  # (off by default: docs/benchmarks.md says why)
ON = book(ON_OPTIONS)

# a reland rewritten line by line: a few lines come back as they were; its names and file stay
REWRITTEN = (
    "def shard_rebalancer(cluster, budget, dry_run=False):\n"
    "    plan = RebalancePlan(cluster.shards, budget)\n"
    "    for shard in list(plan.overloaded_shards()):\n"
    "        plan.migrate(shard, plan.coolest_node())\n"
    "    plan.throttle(budget.max_moves)\n"
    "    if not dry_run:\n"
    "        cluster.apply_rebalance(plan)\n"
    "    return plan\n"
)


def test_a_reland_rewritten_line_by_line_keeps_its_names(scaffolded: tuple[HarvestRepo, Weights]) -> None:
    repo, weights = scaffolded
    repo.commit("Stub\n", {"app/rebalance.py": STUB})
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    again = repo.commit("Rebalance shards again\n", {"app/rebalance.py": REWRITTEN})
    m = match_lines(approach(repo.path, tried), approach(repo.path, again), ON, weights)
    assert judge(m).kind is None  # too few lines come back for any rule on lines (and D14 is off)
    verdict = judge(m, ON)
    assert (verdict.kind, verdict.rule) == ("names", "D14")
    assert "`RebalancePlan`" in m.names_evidence or "`overloaded_shards`" in m.names_evidence
    assert judge(m, book({**ON_OPTIONS, "D14.names": len(m.kept) + 1})).kind is None
    # with nothing measured, every name would be rare: D14 says nothing
    assert not match_lines(approach(repo.path, tried), approach(repo.path, again), ON, Weights()).kept


def test_the_names_said_in_another_file_are_not_kept(scaffolded: tuple[HarvestRepo, Weights]) -> None:
    repo, weights = scaffolded
    repo.commit("Stub\n", {"app/rebalance.py": STUB})
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    report = "def report(plan: RebalancePlan):\n    return [plan.coolest_node(), plan.overloaded_shards()]\n"
    other = repo.commit("Report on a plan\n", {"app/report.py": report})
    m = match_lines(approach(repo.path, tried), approach(repo.path, other), ON, weights)
    assert m.names and not m.kept and judge(m, ON).kind is None


def test_check_flags_a_rewritten_reland_by_its_names(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    repo = HarvestRepo(tmp_path / "r")
    _history(repo, 4)
    repo.commit("Stub\n", {"app/rebalance.py": STUB})
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    repo.checkout("-b", "again")
    repo.commit("Spread the load over the cluster\n", {"app/rebalance.py": REWRITTEN})
    monkeypatch.setenv("COMIND_DEAD_ENDS", "D14.names=3")
    result = cli(repo.path, "check", "--base", "main", "--format", "json")
    [dead] = [f for f in json.loads(result.out)["findings"] if f["type"] == "dead_end"]
    assert "(rule D14 kept-names)" in dead["title"] and dead["path"] == "app/rebalance.py"
    assert dead["message"].startswith("This says again, in the same files, ")
    last = dead["message"].splitlines()[-1]
    assert last.startswith("Strongest evidence: it says again ") and "identifiers the attempt introduced" in last
    monkeypatch.setenv("COMIND_DEAD_ENDS", "D14.names=0")
    off = cli(repo.path, "check", "--base", "main", "--format", "json")
    assert not [f for f in json.loads(off.out)["findings"] if f["type"] == "dead_end"]


def test_a_long_line_given_as_evidence_is_cut_at_a_word(tmp_path: Path) -> None:
    line = "if (request.body != null && request.body.isOneShot() && cacheUrlOverride == null) { return null }"
    repo = HarvestRepo(tmp_path / "r")
    repo.commit("Initial\n", {"Cache.kt": "fun get() {\n}\n"})
    tried = repo.commit("Cache QUERY\n", {"Cache.kt": f"fun get() {{\n  {line}\n}}\n"})
    m = match_lines(approach(repo.path, tried), approach(repo.path, tried), weights=_index(repo, tmp_path / "c"))
    assert m.evidence.startswith(
        "the line `if (request.body != null && request.body.isOneShot() && cacheUrlOverride == …`"
    )


def test_the_strongest_evidence_no_change_measured_holds_says_the_attempt_s_own_is_not_among_them(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """A branch that tried and reverted, merged: the merge's first-parent diff holds none of the attempt's
    lines. "held by none of the 6 file changes in this history" read as if the attempt never added it."""
    repo = HarvestRepo(tmp_path / "r")
    _history(repo, 4)
    repo.checkout("-b", "try")
    tried = repo.commit("Rebalance shards\n", {"app/rebalance.py": ATTEMPT})
    repo.revert(tried)
    repo.checkout("main")
    repo.merge("try", "Merge branch 'try'\n")
    repo.checkout("-b", "again")
    repo.commit("Spread the load over the cluster\n", {"app/rebalance.py": ATTEMPT.replace("budget)", "budget)  # v2")})
    result = cli(repo.path, "check", "--base", "main", "--format", "json")
    [dead] = [f for f in json.loads(result.out)["findings"] if f["type"] == "dead_end"]
    last = dead["message"].splitlines()[-1]
    assert (
        "held by none of the 5 file changes measured in this history, the attempt's own not among them (weight" in last
    ), last
