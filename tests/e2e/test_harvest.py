"""Git harvesters end to end: every revert form, relands, traps, Lore, other trailers, idempotence."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

PERM = (
    "class Checker:\n    def check(self, user, perm):\n        grants = load_grants(user.id)\n"
    "        return perm in grants\n"
)
CACHED = (
    "import redis\n\n_cache = redis.Redis()\n\n\nclass Checker:\n    def check(self, user, perm):\n"
    "        grants = _cache.get(f'grants:{user.id}') or load_grants(user.id)\n"
    "        _cache.set(f'grants:{user.id}', grants, ex=300)\n        return perm in grants\n"
)


@pytest.fixture
def gr(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    return repo


def harvest(cli, repo: GitRepo, *args: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    result = cli(repo.path, "harvest", "--json", *args)
    assert result.code == 0, result.err
    return dict(json.loads(result.out))


def records(cli, repo: GitRepo) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    result = cli(repo.path, "log", "--history", "--json")
    assert result.code == 0, result.err
    return [json.loads(line) for line in result.out.splitlines()]


def tried_and_reverted(gr: GitRepo, path: str, text: str, subject: str, revert: Callable[[str], str]) -> str:
    """Commit `text` to `path`, then empty it again with the message `revert(sha)`; the first sha."""
    gr.write(path, text)
    sha = gr.commit(subject)
    gr.write(path, "")
    gr.commit(revert(sha))
    return sha


def only(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [r for r in rows if r["kind"] == kind]
    assert len(found) == 1, [(r["kind"], r["title"]) for r in rows]
    return found[0]


def reverted_anchors(cli, gr: GitRepo, path: str, before: str, after: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The anchors of the attempt harvested from `path` going `before` → `after`, then `git revert`."""
    gr.write(path, before)
    gr.commit("Add the pool")
    gr.write(path, after)
    gr.commit("Reserve a slot for the caller")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)
    return [a["raw"] for a in only(records(cli, gr), "attempt")["anchors"]]


def test_git_revert_becomes_an_evidenced_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    reverted = gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    gr.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "Cache permission checks in Redis"\n\nThis reverts commit '
        f"{reverted}.\n\nStale grants after a role change: nothing invalidated the cache.\n",
    )
    revert = gr.head()
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:attempt"] == 1 and summary["written"] == 1
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "Cache permission checks in Redis"
    assert attempt["fields"]["outcome"] == "reverted"
    assert "nothing invalidated the cache" in attempt["fields"]["reason"]
    assert {"type": "commit", "ref": revert, "role": "revert"} in attempt["evidence"]
    assert {"type": "commit", "ref": reverted, "role": "reverted"} in attempt["evidence"]
    assert attempt["trust"] == 2  # the revert is on the default branch
    added = [line[1] for f in attempt["fields"]["fingerprint"]["files"] for line in f["added"]]
    assert "_cache = redis.Redis()" in added
    assert attempt["anchors"][0]["raw"] == "app/perm.py::Checker.check"
    assert "@" not in json.dumps(attempt["provenance"])
    assert attempt["created_at"].startswith("2024-01-01")  # the commit's time, not the clock


@pytest.mark.parametrize("since", ["2020-01", "2020-01-01", "no-such-rev"])
def test_since_that_names_no_revision_is_refused_before_anything_is_read(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo, since: str
) -> None:
    """git log's --since takes a date; harvest's takes a revision: a date is said to be none, not
    reported as an unknown revision, and nothing is harvested."""
    result = cli(gr.path, "harvest", "--since", since)
    assert (result.code, result.out) == (2, "") and result.err == (
        f"comind: --since '{since}': not a revision; it takes a commit, branch or tag (e.g. v1.2, HEAD~50), "
        "not a date\n"
    )
    assert not (gr.path / ".git" / "comind" / "harvest").exists()
    gr.git("tag", "2020-01")  # a tag named like a date is a revision
    assert cli(gr.path, "harvest", "--since", "2020-01").code == 0


@pytest.mark.parametrize(
    ("path", "before", "line", "symbol"),
    [
        ("src/pool.c", "int pool_take(struct pool *p) {\n    return p->free;\n}\n", 2, "pool_take"),
        ("src/pool.cpp", "namespace net {\nint Pool::take() {\n    return free_;\n}\n}\n", 3, "net.Pool.take"),
        ("src/Pool.cs", "class Pool {\n    int Take() {\n        return free;\n    }\n}\n", 3, "Pool.Take"),
        (
            "lib/pool.rb",
            "module Net\n  class Pool\n    def take\n      @free\n    end\n  end\nend\n",
            4,
            "Net.Pool.take",
        ),
        (
            "src/Pool.php",
            "<?php\nclass Pool {\n    function take() {\n        return $this->free;\n    }\n}\n",
            4,
            "Pool.take",
        ),
        (
            "src/main/kotlin/net/Pool.kt",
            "package net\n\nclass Pool {\n    companion object {\n        fun take(): Int {\n"
            "            return free\n        }\n    }\n}\n",
            6,
            "Pool.companion.take",
        ),
    ],
)
def test_reverts_anchor_to_symbols_in_c_cpp_csharp_ruby_php_and_kotlin(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo, path: str, before: str, line: int, symbol: str
) -> None:
    lines = before.splitlines(keepends=True)  # an edit of a line of the method (anchors read what it replaced)
    lines[line - 1] = lines[line - 1].replace(lines[line - 1].strip(), "reserve_slot_for_caller(pool_size);")
    assert reverted_anchors(cli, gr, path, before, "".join(lines)) == [f"{path}::{symbol}"]
    why = cli(gr.path, "why", f"{path}::{symbol}")
    assert why.code == 0 and "Reserve a slot for the caller" in why.out


@pytest.mark.parametrize(
    ("path", "before", "after", "anchor"),
    [
        (  # a line inserted into a method: the method, as the parent had it
            "app/pool.py",
            "class Pool:\n    def take(self):\n        return self.free\n",
            "class Pool:\n    def take(self):\n        reserve_slot_for_caller(self.size)\n        return self.free\n",
            "app/pool.py::Pool.take",
        ),
        (
            "pool.go",
            "package pool\n\nfunc Take(p *Pool) int {\n\treturn p.free\n}\n",
            "package pool\n\nfunc Take(p *Pool) int {\n\treserveSlotForCaller(p.size)\n\treturn p.free\n}\n",
            "pool.go::Take",
        ),
        (  # a function inserted between two: in neither, so the file
            "pool.go",
            "package pool\n\nfunc Take() int {\n\treturn 1\n}\n\nfunc Give() int {\n\treturn 2\n}\n",
            "package pool\n\nfunc Take() int {\n\treturn 1\n}\n\nfunc ReserveSlot() int {\n\treturn 3\n}\n"
            "\nfunc Give() int {\n\treturn 2\n}\n",
            "pool.go",
        ),
        (  # a statement appended to a Python method (nothing after it holds the insertion)
            "app/pool.py",
            "class Pool:\n    def take(self):\n        return self.free\n\n    def give(self):\n"
            "        self.free += 1\n",
            "class Pool:\n    def take(self):\n        return self.free\n\n    def give(self):\n"
            "        self.free += 1\n        self.wake_waiters()\n",
            "app/pool.py::Pool.give",
        ),
        (  # appended to a method with another after it (which the class holds, the method first)
            "app/pool.py",
            "class Pool:\n    def take(self):\n        return self.free\n\n    def give(self):\n        pass\n",
            "class Pool:\n    def take(self):\n        return self.free\n        self.check()\n\n    def give(self):\n"
            "        pass\n",
            "app/pool.py::Pool.take",
        ),
        (  # appended after a blank line, at the end of the file
            "app/run.py",
            "def main():\n    setup()\n    run()\n",
            "def main():\n    setup()\n    run()\n\n    cleanup()\n",
            "app/run.py::main",
        ),
        (  # appended, though the diff may slide it up a line (both calls end in `)`)
            "app/options.py",
            "def add_options(parser):\n    parser.add(\n        'verbose',\n    )\n",
            "def add_options(parser):\n    parser.add(\n        'verbose',\n    )\n"
            "    parser.add(\n        'quiet',\n    )\n",
            "app/options.py::add_options",
        ),
        (  # a method appended to a class: the class, not the method above it
            "app/pool.py",
            "class Pool:\n    def take(self):\n        return self.free\n",
            "class Pool:\n    def take(self):\n        return self.free\n\n    def give(self):\n"
            "        self.free += 1\n",
            "app/pool.py::Pool",
        ),
        (  # a statement after a nested function last in its parent: the parent
            "app/pool.py",
            "def make():\n    def inner():\n        return 1\n",
            "def make():\n    def inner():\n        return 1\n    return inner\n",
            "app/pool.py::make",
        ),
        (  # an indented comment, then a function: the code sets the block's indent, not the comment
            "app/pool.py",
            "class Pool:\n    def take(self):\n        return 1\n",
            "class Pool:\n    def take(self):\n        return 1\n\n    # give() moved below\n\n\ndef give():\n"
            "    return 2\n",
            "app/pool.py",
        ),
        (  # a function appended to a module: in nothing but the file
            "app/pool.py",
            "def take():\n    return 1\n",
            "def take():\n    return 1\n\n\ndef give():\n    return 2\n",
            "app/pool.py",
        ),
        (  # a function appended after the last: a closing brace ends the one above
            "pool.go",
            "package pool\n\nfunc Take() int {\n\treturn 1\n}\n",
            "package pool\n\nfunc Take() int {\n\treturn 1\n}\n\nfunc Give() int {\n\treturn 2\n}\n",
            "pool.go",
        ),
        (  # a method between two: the object holding them all
            "src/plugin.js",
            "export function vuePlugin() {\n  return {\n    resolveId(id) {\n      return id\n    },\n"
            "    load(id) {\n      return null\n    },\n  }\n}\n",
            "export function vuePlugin() {\n  return {\n    resolveId(id) {\n      return id\n    },\n"
            "    config() {\n      return {}\n    },\n    load(id) {\n      return null\n    },\n  }\n}\n",
            "src/plugin.js::vuePlugin",
        ),
        (  # a method added to a Rust impl: the type it implements, defined in the file
            "src/pool.rs",
            "pub struct Pool {\n    free: u32,\n}\n\nimpl Pool {\n    pub fn take(&self) -> u32 {\n        self.free\n"
            "    }\n}\n",
            "pub struct Pool {\n    free: u32,\n}\n\nimpl Pool {\n    pub fn take(&self) -> u32 {\n        self.free\n"
            "    }\n\n    pub fn give(&mut self) {\n        self.free += 1;\n    }\n}\n",
            "src/pool.rs::Pool",
        ),
        (  # … and to a trait's impl for it
            "src/pool.rs",
            "pub struct Pool;\n\nimpl Drop for Pool {\n    fn drop(&mut self) {\n        close();\n    }\n}\n",
            "pub struct Pool;\n\nimpl Drop for Pool {\n    fn drop(&mut self) {\n        close();\n    }\n\n"
            "    fn extra(&self) {\n        flush();\n    }\n}\n",
            "src/pool.rs::Pool",
        ),
        (  # an impl of a type defined elsewhere: the file
            "src/give.rs",
            "use crate::Pool;\n\nimpl Pool {\n    pub fn take(&self) -> u32 {\n        self.free\n    }\n}\n",
            "use crate::Pool;\n\nimpl Pool {\n    pub fn take(&self) -> u32 {\n        self.free\n    }\n\n"
            "    pub fn give(&mut self) {\n        self.free += 1;\n    }\n}\n",
            "src/give.rs",
        ),
        (  # a decorated function above another: the diff puts it between that one's decorator and name
            "tests/test_pool.py",
            "import pytest\n\n\n@pytest.fixture\ndef alpha():\n    return 1\n",
            "import pytest\n\n\n@pytest.fixture\ndef beta():\n    return 2\n\n\n@pytest.fixture\ndef alpha():\n"
            "    return 1\n",
            "tests/test_pool.py",
        ),
    ],
)
def test_a_change_that_only_inserts_anchors_to_the_definition_around_it(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo, path: str, before: str, after: str, anchor: str
) -> None:
    assert reverted_anchors(cli, gr, path, before, after) == [anchor]


def test_an_insertion_read_back_from_a_revert_naming_nothing_anchors_to_its_method(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo
) -> None:
    before = "class Pool:\n    def take(self):\n        return self.free\n"
    gr.write("app/pool.py", before)
    gr.commit("Add the pool")
    gr.write(
        "app/pool.py", before.replace("        return", "        reserve_slot_for_caller(self.size)\n        return")
    )
    gr.commit("Reserve a slot for the caller")
    gr.write("app/pool.py", before)
    gr.commit('Revert "Reserve slots for callers"')  # names no commit: the revert's own diff, turned around
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert "unresolved" in attempt["attributes"]
    assert [a["raw"] for a in attempt["anchors"]] == ["app/pool.py::Pool.take"]


def test_reference_form_and_subject_only_revert(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/a.py", "def fast_path(x):\n    return precomputed_table[x] * scale_factor\n")
    first = gr.commit("Add a fast path")
    gr.git("revert", "--no-edit", "--reference", "HEAD")
    gr.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f"Fast path breaks negative scales\n\nThis reverts commit {first[:9]} (Add a fast path, 2024-01-01).\n",
    )
    gr.write("app/b.py", "def slow_path(y):\n    return compute_everything_again(y) + offset_value\n")
    gr.commit("Add a slow path")
    gr.write("app/b.py", "")
    gr.commit('Revert "Add a slow path"\n\nIt was too slow for the batch jobs.')
    harvest(cli, gr)
    titles = {r["title"]: r for r in records(cli, gr) if r["kind"] == "attempt"}
    assert set(titles) == {"Add a fast path", "Add a slow path"}
    assert "Fast path breaks negative scales" in titles["Add a fast path"]["fields"]["reason"]
    assert titles["Add a slow path"]["fields"]["reason"] == "It was too slow for the batch jobs."
    assert titles["Add a slow path"]["attributes"]["marker"] == "subject-revert-quoted"


def test_github_pr_conventional_and_gerrit_forms(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/x.py", "def retry_forever(call):\n    while not call():\n        sleep_briefly(0.1)\n")
    gr.commit("Retry uploads forever (#12)")
    gr.write("app/x.py", "")
    gr.commit('Revert "Retry uploads forever" (#13)\n\nReverts acme/app#12\n\nUploads hung the queue.')
    gr.write("app/y.py", "def parse_dates(text):\n    return dateutil_parser.parse(text, fuzzy=True)\n")
    gr.commit("fix: parse dates leniently (#20)")
    gr.write("app/y.py", "")
    gr.commit("revert: parse dates leniently (#21)")
    gr.write("app/z.py", "def warm_cache_on_boot():\n    populate_every_cache_entry(all_keys())\n")
    gr.commit("Warm caches on boot\n\nReviewed-on: https://review.example.com/c/app/+/4242\nChange-Id: I" + "a" * 40)
    gr.write("app/z.py", "")
    gr.commit(
        'Revert "Warm caches on boot"\n\nThis reverts CL 4242.\n\nReason for revert: boot time '
        "doubled on large tenants.\n\nChange-Id: I" + "b" * 40
    )
    summary = harvest(cli, gr)
    attempts = {r["title"]: r for r in records(cli, gr) if r["kind"] == "attempt"}
    assert set(attempts) == {"Retry uploads forever (#12)", "fix: parse dates leniently (#20)", "Warm caches on boot"}
    assert attempts["Warm caches on boot"]["fields"]["reason"] == "boot time doubled on large tenants."
    assert {"type": "mr", "ref": "acme/app#12", "role": "reverted pr"} in attempts["Retry uploads forever (#12)"][
        "evidence"
    ]
    assert summary["counts"]["reverts:attempt"] == 3


WARM = "def warm_cache_on_boot():\n    populate_every_cache_entry(all_keys())\n"


def test_an_undo_of_a_rietveld_cl_finds_the_change_by_its_link(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # before Gerrit, a review tool's submit ended the message with the review's link, and its undo
    # command wrote `undo CL N / <hash>` with the original description between ««« and »»»
    landed = "app: warm caches on boot\n\nR=ada\nhttps://golang.org/cl/107160049\n"
    undo = (
        "undo CL 107160049 / 9abbb23a14f6\n\nBoot time doubled.\n\n««« original CL description\n"
        f"{landed}»»»\n\nR=ada\nhttps://golang.org/cl/107170043\n"
    )
    tried_and_reverted(gr, "app/z.py", WARM, landed, lambda _: undo)
    gr.write("app/z.py", WARM)
    gr.commit("undo CL 107170043 / 1bbb23a14f6a\n\nThe boot time is fine now.\n")
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:attempt"] == 1 and summary["counts"]["reverts:reland"] == 1
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "app: warm caches on boot" and attempt["fields"]["reason"] == "Boot time doubled."
    assert attempt["status"] == "retracted"  # the undo of the undo (its own link, not the one it quotes)


def test_a_revert_of_a_phabricator_revision_finds_the_change_by_it(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    tried_and_reverted(
        gr,
        "app/z.py",
        WARM,
        "Warm caches on boot\n\nSummary: boot warm.\n\nDifferential Revision: D12345678\n",
        lambda _: (
            "Revert D12345678: Warm caches on boot\n\nSummary: boot time doubled.\n\n"
            "Original Phabricator Diff: D12345678\n\nDifferential Revision: D23456789\n"
        ),
    )
    assert harvest(cli, gr)["counts"]["reverts:attempt"] == 1
    assert only(records(cli, gr), "attempt")["title"] == "Warm caches on boot"


@pytest.mark.parametrize("verb", ["Revert", "Undo"])
def test_a_revert_of_an_undo_relands_the_change_as_of_a_revert(cli, gr: GitRepo, verb: str) -> None:  # type: ignore[no-untyped-def]
    """`Undo #12` reverts (c6639e1) but was no revert to `revert_depth` (its pre-filter lacked the word):
    `Revert "Undo #12"` found no revert to undo, and the attempt stayed active after the change came back."""
    code = "def retry_forever(call):\n    while not call():\n        sleep_briefly(0.1)\n"
    gr.write("app/x.py", code)
    gr.commit("Retry uploads forever (#12)")
    gr.write("app/x.py", "")
    gr.commit(f"{verb} #12\n\nUploads hung.\n")
    gr.write("app/x.py", code)
    gr.commit(f'Revert "{verb} #12"')
    assert harvest(cli, gr)["counts"]["reverts:reland"] == 1
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


def test_a_revert_naming_a_word_like_d3_is_no_phabricator_revision(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`Revert D3 upgrade` names the D3 library, not revision D3: read as one, it took Gerrit's change 3
    (another commit) for its target, where its words name the change it reverts."""
    gr.write("app/log.py", "def log_every_request(request):\n    write_line(request.path)\n")
    gr.commit("Add request logging\n\nReviewed-on: https://review.example.org/c/app/+/3\n")
    gr.write("app/chart.js", "export function drawChart(d3, rows) {\n  return d3.select(rows).join();\n}\n")
    gr.commit("D3 upgrade")
    gr.write("app/chart.js", "")
    gr.commit("Revert D3 upgrade\n\nThe charts render blank.\n")
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["title"] == "D3 upgrade"


@pytest.mark.parametrize("origin", ["https://github.com/acme/app.git", "git@github.com:Acme/App.git", None])
def test_the_own_repositorys_request_reads_one_way_wherever_it_is_shown(cli, gr: GitRepo, origin: str | None) -> None:  # type: ignore[no-untyped-def]
    """`(#12)` in the subject and `Reverts acme/app#12` in the body named one request in two forms, and
    `show` and `check` printed both (`mr #12`, `mr acme/app#12`); another repository's stays qualified.
    Without an origin (nor `repo_name`) the harvest cannot tell acme/app is this one: both stay."""
    if origin:
        gr.git("remote", "add", "origin", origin)
    gr.write("app/x.py", "def retry_forever(call):\n    while not call():\n        sleep_briefly(0.1)\n")
    gr.commit("Retry uploads forever (#12)")
    gr.write("app/x.py", "")
    gr.commit('Revert "Retry uploads forever (#12)"\n\nReverts acme/app#12\nReverts other/lib#5\n\nUploads hung.')
    harvest(cli, gr)
    (attempt,) = [r for r in records(cli, gr) if r["kind"] == "attempt"]
    assert {"type": "mr", "ref": "acme/app#12", "role": "reverted pr"} in attempt["evidence"]  # stored as said
    shown = cli(gr.path, "show", attempt["id"]).out
    assert [line.strip() for line in shown.splitlines() if line.strip().startswith("evidence: reverted pr")] == [
        "evidence: reverted pr #12",  # not "pr mr #12"
        *(["evidence: reverted pr acme/app#12"] if origin is None else []),
        "evidence: reverted pr other/lib#5",
    ]
    if origin is None:
        return
    gr.git("checkout", "-q", "-b", "again")
    gr.write("app/x.py", "def retry_forever(call):\n    while not call():\n        sleep_briefly(0.1)\n")
    gr.commit("Retry uploads")
    checked = cli(gr.path, "check", "--base", "main").out
    assert "evidence: mr #12\n" in checked and "acme/app#12" not in checked and "mr other/lib#5" in checked


def test_go_style_reverts_resolve(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # Go's own forms: the quote leaves the package prefix out, and "This CL reverts commit <short sha>".
    tried_and_reverted(
        gr,
        "pkg/a.go",
        "func overlayFiles() []string {\n\treturn invalidOnes()\n}\n",
        "go/packages: handle invalid files in overlays",
        lambda sha: 'go/packages: revert "handle invalid files in overlays"\n\nBreaks loads.',
    )
    tried_and_reverted(
        gr,
        "pkg/b.go",
        "func removeBuildLines() {\n\tfixAll(plusBuild)\n}\n",
        "go/analysis/passes/buildtag: suggest fix to remove +build lines",
        lambda sha: f"buildtag: drop the fixer\n\nThis CL reverts commit {sha[:7]}, CL 694415.",
    )
    gerrit = "\n\nReviewed-on: https://go-review.googlesource.com/c/tools/+/731503\n"
    tried_and_reverted(
        gr,
        "pkg/c.go",
        "func deleteSDK() {\n\tremoveAll(internalMCP)\n}\n",
        "internal/mcp: delete internal mcp sdk" + gerrit,
        lambda sha: "internal/mcp: partial revert of go.dev/cl/731503",
    )
    harvest(cli, gr)
    attempts = {r["title"]: r for r in records(cli, gr) if r["kind"] == "attempt"}
    assert set(attempts) == {
        "go/packages: handle invalid files in overlays",
        "go/analysis/passes/buildtag: suggest fix to remove +build lines",
        "internal/mcp: delete internal mcp sdk",
    }
    gr.write("pkg/c.go", "func deleteSDK() {\n\tremoveAll(internalMCP)\n}\n")
    gr.commit("internal/mcp: delete internal mcp sdk\n\nReapply go.dev/cl/731503")
    harvest(cli, gr)
    sdk = next(r for r in records(cli, gr) if r["title"] == "internal/mcp: delete internal mcp sdk")
    assert sdk["status"] == "retracted"


def test_a_fresh_harvest_drops_git_records_it_does_not_make_again(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """What an older harvester (or an older version's branch pass) left in the cache goes; what the
    bot harvested from the forge stays."""
    from comind.records import new_record
    from comind.store import Store

    tried_and_reverted(
        gr,
        "app/a.py",
        CACHED,
        "Cache permission checks in Redis",
        lambda sha: f'Revert "Cache permission checks in Redis"\n\nThis reverts commit {sha}.',
    )
    harvest(cli, gr)
    cache = Store(str(gr.path / ".git" / "comind" / "harvest"))

    def left(source: str, title: str) -> None:
        anchor = {"raw": "app/a.py", "scope": "file", "path": "app/a.py"}
        cache.put(
            new_record(
                "question",
                title=title,
                anchors=[anchor],
                fields={"question": "why?"},
                provenance={
                    "actor": "p-1",
                    "author_kind": "harvested",
                    "source": source,
                    "harvester": {"name": "old", "version": "1"},
                },
            )
        )

    left("git", "Left by a reland on another branch")
    left("mr", "Asked in a merge request")
    assert {r["title"] for r in records(cli, gr)} >= {"Left by a reland on another branch", "Asked in a merge request"}
    harvest(cli, gr, "--full")
    titles = {r["title"] for r in records(cli, gr)}
    assert "Asked in a merge request" in titles and "Cache permission checks in Redis" in titles
    assert "Left by a reland on another branch" not in titles


def test_an_erased_record_is_not_harvested_again(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    tried_and_reverted(
        gr,
        "app/a.py",
        CACHED,
        "Cache permission checks in Redis",
        lambda sha: f'Revert "Cache permission checks in Redis"\n\nThis reverts commit {sha}.',
    )
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert cli(gr.path, "ledger", "erase", attempt["id"]).code == 0
    harvest(cli, gr, "--full")  # derives it again: left out, and no error
    assert records(cli, gr) == []


def test_an_erased_record_stays_erased_in_an_empty_cache_and_a_fresh_clone(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """The tombstone in the shared store is what every harvest consults: not the harvest cache's."""
    import shutil
    import subprocess
    from types import SimpleNamespace

    remote = "https://forge.example/team/app.git"  # both copies name the same repository
    gr.git("remote", "add", "origin", remote)
    tried_and_reverted(
        gr,
        "app/a.py",
        CACHED,
        "Cache permission checks in Redis",
        lambda sha: f'Revert "Cache permission checks in Redis"\n\nThis reverts commit {sha}.',
    )
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert cli(gr.path, "ledger", "erase", attempt["id"]).code == 0
    assert (gr.path / ".comind" / "ledger" / "_ledger" / "erased" / attempt["id"]).exists()
    gr.commit("ledger: erase a record")  # the tombstone travels with the repository
    shutil.rmtree(gr.path / ".git" / "comind")
    harvest(cli, gr)  # a first harvest into an empty cache
    assert records(cli, gr) == []
    clone = SimpleNamespace(path=gr.path.parent / "clone")
    subprocess.run(["git", "clone", "-q", str(gr.path), str(clone.path)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(clone.path), "remote", "set-url", "origin", remote], check=True)
    harvest(cli, clone)  # a fresh clone
    assert records(cli, clone) == []


def test_a_rewritten_default_branch_is_harvested_afresh(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    start = gr.head()
    tried_and_reverted(
        gr,
        "app/a.py",
        CACHED,
        "Cache permission checks in Redis",
        lambda sha: f'Revert "Cache permission checks in Redis"\n\nThis reverts commit {sha}.',
    )
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["title"] == "Cache permission checks in Redis"
    gr.git("reset", "-q", "--hard", start)  # main force-pushed without the two commits
    gr.write("app/b.py", "def other():\n    return 1\n")
    gr.commit("Something else")
    harvest(cli, gr)
    assert records(cli, gr) == []


def test_the_default_branch_pass_finds_nothing_only_a_branch_holds(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """What the default branch's commits make is kept for every branch: it must not depend on the
    branch checked out (here a branch commit titled like the revert's prefixed quote)."""
    gr.branch("topic")
    gr.write("app/a.py", CACHED)
    added = gr.commit("Cache permission checks in Redis")
    gr.write("app/a.py", "")
    gr.commit('app/perm: revert "Cache permission checks in Redis"')
    gr.checkout("topic")
    gr.write("app/b.py", "def elsewhere():\n    return 2\n")
    gr.commit("app/perm: Cache permission checks in Redis")
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["attributes"]["reverted"] == added


def test_revert_of_a_merge_uses_the_mainline_diff(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.branch("feature")
    gr.checkout("feature")
    gr.write("app/feature.py", "def new_billing_engine(account):\n    return charge_everything_twice(account)\n")
    gr.commit("New billing engine")
    gr.checkout("main")
    gr.write("README.md", "docs\n")
    gr.commit("docs")
    merge = gr.merge("feature", "Merge branch 'feature'")
    gr.git("revert", "--no-edit", "-m", "1", merge)
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    paths = [f["path"] for f in attempt["fields"]["fingerprint"]["files"]]
    assert paths == ["app/feature.py"]


@pytest.mark.parametrize(
    ("message", "title"),
    [
        (
            "Merge pull request #14769 from ada/autoreload\n\nSupport reload config automatically",
            "Support reload config automatically (#14769)",
        ),
        (
            "Merge branch 'autoreload' into 'main'\n\nSupport reload config automatically\n\n"
            "See merge request ops/server!42",
            "Support reload config automatically (!42)",
        ),
        ("Merge branch 'feature'", "Merge branch 'feature'"),  # no request: the subject, as written
    ],
)
def test_a_reverted_merge_is_titled_by_its_request(cli, gr: GitRepo, message: str, title: str) -> None:  # type: ignore[no-untyped-def]
    gr.branch("autoreload")
    gr.checkout("autoreload")
    gr.write("app/reload.py", "def watch_config(path):\n    return reload_on_change(path)\n")
    gr.commit("Reload on change")
    gr.checkout("main")
    merge = gr.merge("autoreload", message)
    gr.git("revert", "--no-edit", "-m", "1", merge)
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["title"] == title


def _pull_request(gr: GitRepo, number: int, branch: str, title: str, path: str, text: str) -> str:
    """A request merged with GitHub's merge button: its title only in the merge's body."""
    gr.branch(branch)
    gr.checkout(branch)
    gr.write(path, text)
    gr.commit("wip")
    gr.checkout("main")
    return gr.merge(branch, f"Merge pull request #{number} from ada/{branch}\n\n{title}")


def test_a_revert_quoting_a_request_title_reverts_its_merge(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """GitHub's revert button quotes the request's title, which no commit carries as its subject."""
    merge = _pull_request(gr, 7, "pool", "Pool the connections", "app/db.py", "def connect():\n    return pool.get()\n")
    gr.write("app/db.py", "")
    gr.commit('Revert "Pool the connections"')
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert attempt["attributes"]["reverted"] == merge
    assert attempt["title"] == "Pool the connections (#7)"


def test_reverting_a_revert_branchs_merge_relands_what_it_reverted(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`Revert "Merge pull request #8 from o/revert-7-pool"` brings #7 back: a reland, not an attempt."""
    merge = _pull_request(gr, 7, "pool", "Pool the connections", "app/db.py", "def connect():\n    return pool.get()\n")
    gr.branch("revert-7-pool")
    gr.checkout("revert-7-pool")
    gr.git("revert", "--no-edit", "-m", "1", merge)
    gr.checkout("main")
    undo = gr.merge("revert-7-pool", 'Merge pull request #8 from ada/revert-7-pool\n\nRevert "Pool the connections"')
    gr.git("revert", "--no-edit", "-m", "1", undo)
    harvest(cli, gr)
    (attempt,) = [r for r in records(cli, gr) if r["kind"] == "attempt"]
    assert attempt["attributes"]["reverted"] == merge
    assert attempt["status"] == "retracted" and "relanded in" in attempt["status_reason"]


@pytest.mark.parametrize(
    "title", ["Merge pull request #9 from ada/feat\n\nAdd the feature", 'Reapply "Add the feature" (#9)']
)
def test_reverting_a_merge_whose_branch_also_reverted_something_is_a_revert(cli, gr: GitRepo, title: str) -> None:  # type: ignore[no-untyped-def]
    """A branch that reverted its own first try lands more than reverts: undoing its merge undoes
    the feature and relands nothing, whether the merge is titled by its request or as a reland
    (only a branch of nothing but reverts makes undoing it a reland)."""
    gr.branch("feat")
    gr.checkout("feat")
    gr.write("app/try.py", "def first_try():\n    return slow_path()\n")
    gr.commit("First try")
    gr.git("revert", "--no-edit", "HEAD")
    gr.write("app/feature.py", "def feature():\n    return fast_path()\n")
    gr.commit("Add the feature")
    gr.checkout("main")
    merge = gr.merge("feat", title)
    gr.git("revert", "--no-edit", "-m", "1", merge)
    harvest(cli, gr)
    attempts = {r["title"]: r for r in records(cli, gr) if r["kind"] == "attempt"}
    assert attempts["First try"]["status"] != "retracted", attempts["First try"].get("status_reason")
    assert any(a["attributes"].get("reverted") == merge for a in attempts.values()), sorted(attempts)


def test_a_partial_revert_is_an_attempt_of_what_it_undid(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # golang/tools: "internal/mcp: partial revert of go.dev/cl/731503 … brings back only internal/mcp/*"
    gr.write("internal/mcp/sdk.go", "func Serve(transport Transport) error {\n\treturn loop(transport)\n}\n")
    gr.write("gopls/server.go", "func start() {\n\tsdk.Serve(externalTransport)\n}\n")
    gr.commit("internal/mcp: delete the internal sdk, use the external one")
    original = gr.head()
    gr.write("internal/mcp/sdk.go", "")
    gr.commit(f"internal/mcp: partial revert of {original[:10]}\n\nOnly internal/mcp comes back.")
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert attempt["attributes"]["reverted"] == original
    assert [f["path"] for f in attempt["fields"]["fingerprint"]["files"]] == ["internal/mcp/sdk.go"]


POM = """<project>
  <groupId>com.example</groupId>
  <artifactId>parent</artifactId>
  <version>%s</version>
  <scm>
    <tag>%s</tag>
  </scm>
</project>
"""
MODULE_POM = (
    "<project>\n  <parent>\n    <artifactId>parent</artifactId>\n    <version>%s</version>\n  </parent>\n</project>\n"
)
IMAGE = "<configuration>\n  <image>\n    <name>app</name>\n    <tag>%s</tag>\n"  # a container image's tag
GUAVA = "<dependencies>\n  <dependency>\n    <artifactId>guava</artifactId>\n    <version>%s</version>\n"
COMPOSER = (
    "<?php\nclass Composer\n{\n    public const VERSION = '%s';\n    public const BRANCH_ALIAS_VERSION = '%s';\n"
    "    public const RELEASE_DATE = '%s';\n    public const SOURCE_VERSION = '%s';\n}\n"
)
MAN = '.TH fzf 1 "%s" "fzf %s" "fzf - a command-line fuzzy finder"\n.SH NAME\nfzf - a command-line fuzzy finder\n'
NOTES = "#### 3.6.0\n - 2020-10-26 - [4 commits](https://github.com/mockito/mockito/compare/v3.5.15...v3.6.0)\n"


@pytest.mark.parametrize(
    "released",
    [
        {
            "packages/astro/package.json": '{\n  "name": "astro",\n  "version": "0.18.9"\n}\n',
            "examples/blog/package.json": '{\n  "dependencies": {\n    "astro": "^0.18.9"\n  }\n}\n',
            "packages/astro/CHANGELOG.md": "## 0.18.9\n\n- Fixes head injection\n",
            ".changeset/brave-dogs.md": "",
        },
        {"src/pip/__init__.py": '__version__ = "21.0"\n', "news/9876.bugfix.rst": "", "NEWS.rst": "21.0\n----\n"},
        {"VERSION": "2.16.0-rc.0\n", "CHANGELOG.md": "## 2.16.0-rc.0\n\n- Fixes head injection\n"},
        {"pom.xml": POM % ("1.2", "parent-1.2"), "core/pom.xml": MODULE_POM % "1.2"},  # maven-release-plugin
        {"pom.xml": POM % ("1.2", "parent-1.2") + "<scm>\n  <tag>parent-1.2</tag>\n</scm>\n"},  # a module's scm too
        {
            "examples/blog/package.json": '{\n  "dependencies": {\n    "astro": "workspace:^0.18.9"\n  }\n}\n',
            ".changeset/pre.json": '{\n  "mode": "exit"\n}\n',
        },
        {"src/Composer/Composer.php": COMPOSER % ("2.10.2", "", "2026-07-01 11:24:45", "")},  # placeholders put back
        {  # a version's own man page header
            "install": "version=0.17.2\n",
            "man/man1/fzf.1": MAN % ("Dec 2017", "0.17.2"),
            "src/constants.go": 'const (\n\tversion = "0.17.2"\n)\n',
        },
        {"version.properties": "version=3.6.1\npreviousVersion=3.6.0\n", "doc/release-notes/official.md": NOTES},
    ],
)
def test_a_reverted_release_is_no_attempt(cli, gr: GitRepo, released: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    # changesets' `Version Packages` and pip's `Bump for release`, rolled back: nothing was tried
    before = {
        "packages/astro/package.json": '{\n  "name": "astro",\n  "version": "0.18.8"\n}\n',
        "examples/blog/package.json": '{\n  "dependencies": {\n    "astro": "^0.18.8"\n  }\n}\n',
        ".changeset/brave-dogs.md": "---\n'astro': patch\n---\n\nFixes head injection\n",
        "src/pip/__init__.py": '__version__ = "21.0.dev0"\n',
        "news/9876.bugfix.rst": "Fix the cache key.\n",
        "VERSION": "2.15.2\n",
        "pom.xml": POM % ("1.1.2-SNAPSHOT", "HEAD"),
        "core/pom.xml": MODULE_POM % "1.1.2-SNAPSHOT",
        "src/Composer/Composer.php": COMPOSER
        % ("@package_version@", "@package_branch_alias_version@", "@release_date@", "2.10.999-dev+source"),
        "install": "version=0.17.1\n",
        "man/man1/fzf.1": MAN % ("Oct 2017", "0.17.1"),
        "src/constants.go": 'const (\n\tversion = "0.17.1"\n)\n',
        "version.properties": "version=3.6.0\npreviousVersion=3.5.15\n",
    }
    for path in released:
        if path in before:
            gr.write(path, before[path])
    gr.commit("Prepare")
    for path, text in released.items():
        gr.write(path, text)
    gr.commit("Version Packages (#1011)")
    gr.git("revert", "--no-edit", "HEAD")
    summary = harvest(cli, gr)
    assert not summary["counts"].get("reverts:attempt") and summary["skipped"].get("revert-of-a-release") == 1
    # releasing again by reverting that revert (said in the body only) is a release again, no reland
    rolled_back = gr.head()
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", f"Release again\n\nThis reverts commit {rolled_back}.")
    summary = harvest(cli, gr)
    assert not summary["counts"].get("reverts:reland") and not summary["counts"].get("reverts:attempt")
    # a release that also changes code is a change like any other
    gr.write("src/app.py", "def serve(port):\n    return listen(port, reuse=True)\n")
    for path, text in released.items():
        gr.write(path, text)
    gr.commit("Release, with the reuse fix")
    gr.git("revert", "--no-edit", "HEAD")
    assert harvest(cli, gr)["counts"]["reverts:attempt"] == 1


@pytest.mark.parametrize(
    "notes",
    [
        {"CHANGELOG.md": "# Changes\n\n## 1.2.0\n\n- Faster start-up\n"},
        {"changes/1234.bugfix.rst": "Fix the cache key on Windows.\n"},
        {"changelog.d/20240105_fix_cache_key.md": "### Fixed\n\n- The cache key on Windows\n"},
        {"docs/release-notes/2.1.md": "# 2.1\n\nThe cache key is fixed on Windows.\n"},
        {"packages/app/CHANGELOG.md": "## 0.3.0\n\n- New API\n", ".changeset/brave-dogs.md": "Adds an API\n"},
    ],
)
def test_a_reverted_change_to_release_notes_alone_is_no_attempt(cli, gr: GitRepo, notes: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """A revert of an entry in the changelog (or its fragment) made an attempt of nothing a check
    sees: no line of it matched, its anchors were the notes. It tried nothing (R5), as a release (R2)."""
    for path, text in notes.items():
        gr.write(path, text)
    gr.commit("Add the 1.2.0 notes")
    gr.git("revert", "--no-edit", "HEAD")
    summary = harvest(cli, gr)
    assert not summary["counts"].get("reverts:attempt") and summary["skipped"].get("revert-of-release-notes") == 1
    assert not [r for r in records(cli, gr) if r["kind"] == "attempt"]
    # bringing the notes back by reverting that revert (said in the body only) relands nothing
    rolled_back = gr.head()
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", f"Notes again\n\nThis reverts commit {rolled_back}.")
    summary = harvest(cli, gr)
    assert not summary["counts"].get("reverts:reland") and not summary["counts"].get("reverts:attempt")
    # notes beside code, or a lockfile (a dependency move is an approach), are a change like any other
    gr.write("app/perm.py", PERM.replace("perm in grants", "perm in set(grants)"))
    for path, text in notes.items():
        gr.write(path, text + "- More\n")
    gr.commit("Check against a set, noted")
    gr.git("revert", "--no-edit", "HEAD")
    assert harvest(cli, gr)["counts"]["reverts:attempt"] == 1
    gr.write("Cargo.lock", '[[package]]\nname = "clap"\nversion = "4.5.35"\n')
    gr.commit("Lock clap")
    gr.git("revert", "--no-edit", "HEAD")
    assert harvest(cli, gr)["counts"]["reverts:attempt"] == 1


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [  # each looks like a release line, and is not the project's release
        (
            "pom.xml",
            POM % ("1.1.2-SNAPSHOT", "HEAD") + GUAVA % "31.0",
            POM % ("1.1.2-SNAPSHOT", "HEAD") + GUAVA % "32.1",
        ),
        (
            "pom.xml",
            POM % ("1.1.2-SNAPSHOT", "HEAD") + IMAGE % "1.4.0",
            POM % ("1.1.2-SNAPSHOT", "HEAD") + IMAGE % "1.5.0",
        ),
        ("third_party/zlib/VERSION", "1.3.0\n", "1.3.1\n"),  # a vendored library's version
        ("web/index.html", "<ul>\n<li>1.4.0</li>\n</ul>\n", "<ul>\n<li>1.5.0</li>\n</ul>\n"),
        ("src/config.php", "const RELEASE_DATE = '2020-01-01';\n", "const RELEASE_DATE = '@release_date@';\n"),
        ("docs/install.md", "Install the latest version: 1.4.0\n", "Install the latest version: 1.5.0\n"),  # prose
        (  # a placeholder under a key that names no version is configuration
            "src/config.php",
            "const VERSION = '1.0';\nconst DB_HOST = '';\n",
            "const VERSION = '1.1';\nconst DB_HOST = '@db_host@';\n",
        ),
        (  # the man page says more than its version
            "man/man1/fzf.1",
            MAN % ("Oct 2017", "0.17.1"),
            MAN % ("Dec 2017", "0.17.2") + ".SH OPTIONS\n--cycle enables cyclic scrolling through the list\n",
        ),
    ],
)
def test_a_reverted_change_that_only_looks_like_a_release_is_an_attempt(
    cli, gr: GitRepo, path: str, before: str, after: str
) -> None:  # type: ignore[no-untyped-def]
    gr.write(path, before)
    gr.commit("Add it")
    gr.write(path, after)
    gr.commit("Bump it")
    gr.git("revert", "--no-edit", "HEAD")
    assert harvest(cli, gr)["counts"]["reverts:attempt"] == 1


def test_a_reverted_dependency_bump_is_an_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("web/package.json", '{\n  "dependencies": {\n    "vite": "^5.0.0"\n  }\n}\n')
    gr.commit("Add web")
    gr.write("web/package.json", '{\n  "dependencies": {\n    "vite": "^5.0.1"\n  }\n}\n')
    gr.commit("Bump vite to 5.0.1")
    gr.git("revert", "--no-edit", "HEAD")
    assert harvest(cli, gr)["counts"]["reverts:attempt"] == 1  # a dependency bump is no release


def test_reland_retires_the_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] in ("active", "dormant", "stale", "orphaned")
    gr.git("revert", "--no-edit", "HEAD")  # git 2.39 titles it Revert "Revert "…""
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:reland"] == 1 and summary["commits"] == 1
    attempt = only(records(cli, gr), "attempt")
    assert attempt["status"] == "retracted" and "relanded in" in attempt["status_reason"]


def test_a_revert_of_a_revert_said_in_the_body_only_is_a_reland(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # golang/tools: "gopls/internal/settings: use gopls import source" / "This reverts CL 682715 … Second attempt."
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    revert = gr.head()
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", f"Use the permission cache\n\nThis reverts commit {revert}. Take 2.")
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:reland"] == 1 and summary["counts"]["reverts:attempt"] == 1
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "Cache permission checks in Redis" and attempt["status"] == "retracted"
    # reverting that reland, in the body only again, undoes a change: an attempt, not a second reland
    reland = gr.head()
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", f"Drop the permission cache again\n\nThis reverts commit {reland}.")
    summary = harvest(cli, gr)
    assert summary["counts"] == {"marker:this-reverts-commit": 1, "reverts:attempt": 1}
    assert {r["title"] for r in records(cli, gr) if r["kind"] == "attempt" and r["status"] != "retracted"} == {
        "Use the permission cache"
    }


def test_a_rollback_tool_s_rollback_and_roll_forward(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    described = "\n\n*** Original change description ***\n\nCache permission checks in Redis\n\n***\n"
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    original = gr.head()
    gr.git("revert", "--no-edit", "HEAD")
    why = "*** Reason for rollback ***\n\nBreaks the nightly tests"
    gr.git("commit", "--amend", "-q", "-m", f"Automated rollback of commit {original}.\n\n{why}{described}")
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:attempt"] == 1
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "Cache permission checks in Redis"
    assert "Breaks the nightly tests" in json.dumps(attempt) and "Original change" not in json.dumps(attempt)
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", f"Automated rollforward{described}")
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:reland"] == 1
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


def test_a_revert_of_a_revert_said_in_words_is_a_reland(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # mypy: each typeshed sync brings `ParamSpec` back and `Revert use of ParamSpec…` removes it again,
    # until `Revert "Revert use of ParamSpec for wraps" (#16942)` keeps it
    wraps = "def wraps(f: Callable[P, T]) -> _Wrapper[P, T]: ...\n"
    for n in range(2):
        gr.write("stdlib/functools.pyi", f"# sync {n}\n" + wraps)
        gr.commit("Sync typeshed")
        gr.write("stdlib/functools.pyi", f"# sync {n}\n")
        gr.commit("Revert use of ParamSpec for wraps")
    gr.write("stdlib/functools.pyi", "# sync 1\n" + wraps)
    gr.commit('Revert "Revert use of ParamSpec for wraps" (#16942)')
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:reland"] == 2
    attempts = [r for r in records(cli, gr) if r["kind"] == "attempt"]
    assert len(attempts) == 2 and {r["status"] for r in attempts} == {"retracted"}


def test_a_body_naming_what_it_relands_retires_the_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # deno's "Reland of #33118" (the original) and golang's "This relands 0fdde844a" (here: the revert)
    timers = "def timers_from_node():\n    return install_node_timers(globals())\n"
    tried_and_reverted(
        gr,
        "app/a.py",
        timers,
        "feat: use Node.js timers by default (#33118)",
        lambda sha: f"Revert #33118\n\nThis reverts {sha}.",
    )
    gr.write("app/a.py", timers)
    gr.commit("feat: Node.js timers and no global proxy (#33249)\n\nReland of #33118, with the proxy removed.")
    gr.write("app/b.py", "def rename_application():\n    return Command.from_application(app)\n")
    gr.commit("tool: rename Application to Command")
    gr.git("revert", "--no-edit", "HEAD")
    revert = gr.head()
    gr.write("app/b.py", "def rename_application():\n    return Command.from_application(app)\n")
    gr.commit(f"tool: rename Application to Command, fixed\n\nThis relands {revert[:9]}.")
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:attempt"] == 2 and summary["counts"]["relands:reland-reference"] == 2
    assert {r["status"] for r in records(cli, gr) if r["kind"] == "attempt"} == {"retracted"}


def test_traps_are_not_reverts(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/revert.py", "def revert_transaction(tx):\n    return tx.rollback(keep_audit_log=True)\n")
    gr.commit("revert: keep the audit log when rolling back")  # a code area called revert
    gr.branch("pr")
    gr.checkout("pr")
    gr.write("app/pr.py", "def experimental_idea(z):\n    return z ** 3 + lookup_table[z]\n")
    gr.commit("Try an idea")
    gr.write("app/pr.py", "")
    branch_revert = gr.commit('Revert "Try an idea"')
    gr.checkout("main")
    gr.git("merge", "-q", "--squash", "pr")
    gr.commit(
        f'Feature work (#30)\n\n* Try an idea\n\n* Revert "Try an idea"\n\n  This reverts commit {branch_revert}.\n'
    )
    gr.git("branch", "-D", "pr")
    # GitHub's own squash body does not indent a squashed commit's body (httpx's "Change extensions type")
    gr.write("app/types.py", "ResponseExtensions = Mapping[str, Any]\nRequestExtensions = Mapping[str, Any]\n")
    internal = "1813c6aff178cce3b63d7458ec9a8337542de9dd"  # a commit of the PR branch, not on main
    gr.commit(
        "Change extensions type (#2803)\n\n* Change extensions type\n\n* install httpcore from the git\n\n"
        f'* Revert "install httpcore from the git"\n\nThis reverts commit {internal}.\n\n* bump httpcore\n'
    )
    summary = harvest(cli, gr)
    assert [r for r in records(cli, gr) if r["kind"] == "attempt"] == []
    assert summary["skipped"].get("revert-like-without-target", 0) >= 2


def test_reverting_a_squash_that_quotes_its_branch_revert_is_an_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # The squash's quoted `This reverts commit` made no attempt, so reverting the squash is no reland.
    gr.write("app/feature.py", "def feature_flag_parser(text):\n    return parse_flags(text, strict=True)\n")
    gr.commit(
        'Add the flag parser (#5)\n\n* Add the flag parser\n\n* Revert "debug print"\n\n'
        "This reverts commit 1813c6aff178cce3b63d7458ec9a8337542de9dd.\n"
    )
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)
    rows = records(cli, gr)
    assert only(rows, "attempt")["title"] == "Add the flag parser (#5)"
    assert [r for r in rows if r["kind"] == "relation"] == []


def test_a_body_reverting_a_commit_this_history_lacks_is_no_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # cargo's "test: migrate testsuite message_format to snapbox" / "This reverts commit 2fbba53…" (a
    # commit of its branch): the subject says nothing of reverting, the body names a commit not here
    gr.write("tests/fmt.rs", 'fn message_format_snapbox() {\n    assert_e2e().eq(stdout, str![["ok"]]);\n}\n')
    gr.commit("test: migrate message_format to snapbox\n\nThis reverts commit 2fbba5300c94237960540e176cdc9b0c829d.")
    summary = harvest(cli, gr)
    assert [r for r in records(cli, gr) if r["kind"] == "attempt"] == []
    assert summary["skipped"] == {"body-revert-of-a-commit-not-here": 1}
    # said in the subject, the same unresolved revert is an attempt (at T1)
    gr.write("tests/fmt.rs", "")
    gr.commit("Revert the snapbox migration\n\nThis reverts commit 3fbba5300c94237960540e176cdc9b0c829d0022.")
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["trust"] == 1


def test_a_backed_out_pull_request_becomes_an_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    reverted = gr.commit("Cache permission checks in Redis (#850)")
    gr.write("app/perm.py", PERM)
    back_out = gr.commit("Back out #850 (#1079)\n\nStale grants after a role change.\n")
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "Cache permission checks in Redis (#850)" and attempt["trust"] == 2
    assert {"type": "commit", "ref": back_out, "role": "revert"} in attempt["evidence"]
    assert {"type": "commit", "ref": reverted, "role": "reverted"} in attempt["evidence"]
    assert attempt["fields"]["reason"] == "Stale grants after a role change."


def test_a_change_that_also_reverts_a_pull_request_makes_an_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    reverted = gr.commit("feat: cache permission checks in Redis (#12)")
    gr.write("app/perm.py", PERM)
    gr.write("app/roles.py", "ROLES = ('admin', 'user')\n")
    gr.commit("fix: load roles from one place, reverts #12 (#15)")
    gr.write("app/other.py", "X = 1\n")
    gr.commit("fix: tidy, reverts #99 (#16)")  # nothing numbered 99: no claim is made
    summary = harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "feat: cache permission checks in Redis (#12)"
    assert {"type": "commit", "ref": reverted, "role": "reverted"} in attempt["evidence"]
    assert summary["counts"]["marker:inline-revert-ref"] == 2 and summary["counts"]["reverts:attempt"] == 1
    assert summary["skipped"]["revert-like-without-target"] == 1


def revert_on_a_branch(gr: GitRepo, branch: str, reverted: str) -> str:
    """Revert the Redis cache `reverted` added, on a new branch; back on main, return the revert."""
    gr.branch(branch)
    gr.checkout(branch)
    gr.write("app/perm.py", PERM)
    revert = gr.commit(f'Revert "Cache permission checks in Redis"\n\nThis reverts commit {reverted}.\n')
    gr.checkout("main")
    return revert


def test_a_merge_titled_like_its_revert_pull_request_makes_no_second_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    reverted = gr.commit("Cache permission checks in Redis (#16847)")
    branch_revert = revert_on_a_branch(gr, "revert-16847", reverted)
    gr.write("README", "main moves on\n")
    gr.commit("docs")
    gr.merge("revert-16847", 'Revert "Cache permission checks in Redis" (#16861)')  # a merge queue's title
    merge = gr.head()
    summary = harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert {"type": "commit", "ref": branch_revert, "role": "revert"} in attempt["evidence"]
    assert summary["skipped"]["revert-landed-by-its-merge"] == 1
    gr.write("app/perm.py", CACHED)  # reverting the merge relands the change: the branch's attempt retires
    gr.commit(f'Revert "Revert "Cache permission checks in Redis""\n\nThis reverts commit {merge}.\n')
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] == "retracted"
    assert cli(gr.path, "ledger", "audit").code == 0


def test_a_reland_of_a_revert_off_this_history_retires_the_revert_on_it(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    cached = gr.commit("Cache permission checks in Redis")
    elsewhere = revert_on_a_branch(gr, "old", cached)
    gr.git("branch", "-D", "old")  # a rewritten branch: the commit stays in the object store
    gr.write("app/perm.py", PERM)
    here = gr.commit(f'Revert "Cache permission checks in Redis"\n\nThis reverts commit {cached}.\n')
    gr.write("app/perm.py", CACHED)
    gr.commit(f'Revert "Revert "Cache permission checks in Redis""\n\nThis reverts commit {elsewhere}.\n')
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert {"type": "commit", "ref": here, "role": "revert"} in attempt["evidence"]
    assert attempt["status"] == "retracted" and "relanded in" in attempt["status_reason"]
    audit = cli(gr.path, "ledger", "audit")
    assert audit.code == 0, audit.out  # no relation to an attempt that was never made


def test_a_revert_reason_keeps_no_co_author_or_address(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    reverted = gr.commit("Cache permission checks in Redis (#7)")
    gr.write("app/perm.py", PERM)
    gr.commit(
        f'Revert "Cache permission checks in Redis (#7)" (#9)\n\nThis reverts commit {reverted}.\n\n'
        "* Stale grants after a role change\n\nCo-authored-by: Ada Lovelace <ada@corp.example>\n\n"
        "* Ask ops@corp.example before caching grants again\n\nCo-authored-by: Bob <bob@corp.example>\n"
    )
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert "Stale grants after a role change" in attempt["fields"]["reason"]
    assert "Ask <email> before caching grants again" in attempt["fields"]["reason"]
    assert "@" not in json.dumps(attempt) and "Ada" not in json.dumps(attempt)


def test_unresolved_and_ambiguous_targets_are_kept_at_t1(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/q.py", "def one():\n    return compute_the_first_answer() + 1\n")
    gr.commit("Tweak")
    gr.write("app/q.py", "def one():\n    return compute_the_first_answer() + 2\n")
    gr.commit("Tweak")
    gr.write("app/q.py", "def one():\n    return compute_the_first_answer() + 1\n")
    gr.commit('Revert "Tweak"')
    gr.write("app/r.py", "X = 1\n")
    gr.commit('Revert "Gone"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.')
    summary = harvest(cli, gr)
    attempts = {r["attributes"].get("unresolved", "")[:30]: r for r in records(cli, gr) if r["kind"] == "attempt"}
    assert len(attempts) == 2 and all(a["trust"] == 1 for a in attempts.values())
    ambiguous = next(a for a in attempts.values() if "candidates" in a["attributes"])
    assert ambiguous["attributes"]["candidates"] == "2"
    assert summary["counts"]["reverts:ambiguous"] == 1 and summary["counts"]["reverts:unresolved"] == 1
    assert any(e["ref"].startswith("unresolved:") for a in attempts.values() for e in a["evidence"])


LORE = """Prevent silent session drops during long-running operations

The auth service returns inconsistent status codes on token
expiry, so the interceptor catches all 4xx responses and
triggers an inline refresh.

Lore-id: a7f3b2c1
Constraint: Auth service does not support token introspection
Constraint: Must not add latency to non-expired-token paths
Rejected: Extend token TTL to 24h | security policy violation
Rejected: Background refresh on timer | race condition with concurrent requests
Confidence: high
Scope-risk: narrow
Reversibility: clean
Directive: [until:2025-06] Error handling is intentionally broad (all 4xx) -- do not narrow without verifying
Tested: Single expired token refresh (unit)
Not-tested: Auth service cold-start > 500ms behavior
"""


def test_lore_spec_example(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/auth.py", "def refresh(token):\n    return call_auth_service(token, retry=True)\n")
    sha = gr.commit(LORE)
    summary = harvest(cli, gr)
    rows = records(cli, gr)
    kinds = sorted(r["kind"] for r in rows)
    assert kinds == ["attempt", "attempt", "constraint", "constraint", "decision", "gotcha", "question"]
    decision = only(rows, "decision")
    assert decision["fields"]["alternatives"] == [
        {"option": "Extend token TTL to 24h", "why_not": "security policy violation"},
        {"option": "Background refresh on timer", "why_not": "race condition with concurrent requests"},
    ]
    gotcha = only(rows, "gotcha")
    assert gotcha["until"] == "2025-06" or gotcha["until"].startswith("2025-06")
    assert gotcha["status"] == "dormant" and "expired" in gotcha["status_reason"]
    assert all(r["attributes"]["lore_id"] == "a7f3b2c1" and r["attributes"]["confidence"] == "high" for r in rows)
    assert {"type": "text", "ref": "Single expired token refresh (unit)", "role": "tested"} in decision["evidence"]
    assert {"type": "commit", "ref": sha} in decision["evidence"]
    assert all(r["anchors"][0]["raw"] == "app/auth.py::refresh" for r in rows)
    assert summary["counts"]["lore-key:Constraint"] == 2
    # Supersedes by Lore-id: the older atom's records become superseded
    gr.write("app/auth.py", "def refresh(token):\n    return call_auth_service_v2(token)\n")
    gr.commit(
        "Use the v2 refresh endpoint\n\nLore-id: b1b2b3b4\nConstraint: v2 endpoint only\n"
        "Supersedes: a7f3b2c1\nConfidence: low\n"
    )
    harvest(cli, gr)
    after = {r["title"]: r for r in records(cli, gr)}
    assert after["Must not add latency to non-expired-token paths"]["status"] == "superseded"
    assert after["v2 endpoint only"]["trust"] == 1  # Confidence: low


def test_messy_lore_shapes(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/m.py", "def m():\n    return 1\n")
    gr.commit(
        "Switch the queue\n\nWe move to the new queue.\n\nConstraint: never drop messages\n"
        "Rejected: in-memory queue | loses data on restart\n\nCo-authored-by: Bot <bot@example.com>\n"
    )
    gr.write("app/m.py", "def m():\n    return 2\n")
    gr.commit("Prose only\n\nWe tested: nothing in particular, and the constraint: none, really.\n")
    harvest(cli, gr)
    rows = records(cli, gr)
    assert sorted(r["kind"] for r in rows) == ["attempt", "constraint", "decision"]


def test_fixes_and_comind_record_trailers(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", PERM.replace("user.id", "user.uid"))
    broken = gr.commit("Use uid for grants")
    gr.write("app/perm.py", PERM)
    gr.commit(
        f'Use id for grants again\n\nuid is not unique across tenants.\n\nFixes: {broken[:12]} ("Use uid for grants")'
    )
    rid = cli(
        gr.path,
        "remember",
        "constraint",
        "--on",
        "app/perm.py::Checker.check",
        "--title",
        "Grants by id",
        "--rule",
        "look grants up by id",
        "--severity",
        "must",
    ).out.strip()
    gr.write("app/perm.py", PERM + "\n")
    gr.commit(f"Touch perm\n\nComind-Record: {rid}\n")
    harvest(cli, gr)
    rows = records(cli, gr)
    gotcha = only(rows, "gotcha")
    assert gotcha["fields"]["cause"] == f"introduced by {broken[:12]} (Use uid for grants)"
    assert {"type": "commit", "ref": broken, "role": "fixed"} in gotcha["evidence"]
    confirmed = json.loads(cli(gr.path, "show", rid, "--json").out)
    assert "confirmed on" in confirmed["status_reason"]


@pytest.mark.parametrize("said", ["", "uid is not unique across tenants,\nso a user saw another's grants.\n\n"])
def test_a_fixes_gotcha_says_its_title_once(cli, gr: GitRepo, said: str) -> None:  # type: ignore[no-untyped-def]
    """The gotcha's symptom was the fix's subject, its title too: `show` and the agents' detail said it
    twice. Its symptom is now what the body says first; with nothing said, the title is said once."""
    gr.write("app/perm.py", PERM.replace("user.id", "user.uid"))
    broken = gr.commit("Use uid for grants")
    gr.write("app/perm.py", PERM)
    gr.commit(f"Use id for grants again\n\n{said}Fixes: {broken[:12]}\nReported-by: Bob <bob@example.com>\n")
    harvest(cli, gr)
    gotcha = only(records(cli, gr), "gotcha")
    assert "Bob" not in gotcha["body"] and "bob@example.com" not in json.dumps(gotcha)  # (pseudonymous actors)
    symptom = "uid is not unique across tenants, so a user saw another's grants."
    assert gotcha["fields"]["symptom"] == (symptom if said else "Use id for grants again")
    shown = cli(gr.path, "show", gotcha["id"]).out.split("\n\n")[0]  # (the body, as written, below)
    assert shown.count("Use id for grants again") == 1
    assert [line.strip() for line in shown.splitlines() if "symptom" in line] == (
        [f"symptom: {symptom}"] if said else []
    )
    gr.write("app/perm.py", PERM.replace("perm in grants", "perm in set(grants)"))
    (item,) = json.loads(cli(gr.path, "preflight", "--diff", "--format", "json").out)["items"]
    assert item["title"] == "Use id for grants again"
    assert [d for d in item["detail"] if d.startswith("symptom")] == ([f"symptom: {symptom}"] if said else [])


@pytest.mark.parametrize("said", ["", "uid is not unique across tenants.\n\n"])
def test_a_fixes_gotchas_body_is_its_prose_not_its_trailers(cli, gr: GitRepo, said: str) -> None:  # type: ignore[no-untyped-def]
    """A fix whose body is only trailers (`Fixes:`, `Signed-off-by:`) made a gotcha whose body, shown
    by `show` and `why --json`, was the trailer block: its body is the prose alone, none without any."""
    gr.write("app/perm.py", PERM.replace("user.id", "user.uid"))
    broken = gr.commit("Use uid for grants")
    gr.write("app/perm.py", PERM)
    gr.commit(
        f'Use id for grants again\n\n{said}Fixes: {broken[:12]} ("Use uid for grants")\n'
        "Signed-off-by: Bob <bob@example.com>\n"
    )
    harvest(cli, gr)
    gotcha = only(records(cli, gr), "gotcha")
    assert gotcha["body"] == said.strip()
    shown = cli(gr.path, "show", gotcha["id"]).out
    assert "Fixes:" not in shown and shown.rstrip().endswith(said.strip() or f"on {gotcha['created_at'][:10]}")
    (why,) = (json.loads(line) for line in cli(gr.path, "why", "app/perm.py", "--json").out.splitlines())
    assert why["body"] == said.strip()


def test_a_fix_of_two_commits_makes_a_gotcha_for_each_saying_which(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """Two `Fixes:` trailers naming two commits made two gotchas titled alike; naming one commit
    twice (a longer sha the second time) made two of the same."""
    gr.write("app/perm.py", PERM.replace("user.id", "user.uid"))
    uid = gr.commit("Use uid for grants")
    gr.write("app/cache.py", "TTL = 0\n")
    ttl = gr.commit("Cache grants forever")
    gr.write("app/perm.py", PERM)
    gr.write("app/cache.py", "TTL = 60\n")
    gr.commit(
        f'Fix grants\n\nFixes: {uid[:12]}\nFixes: {ttl[:12]} ("Cache grants forever")\n'
        f'Fixes: {uid[:20]} ("Use uid for grants")\n'
    )
    harvest(cli, gr)
    gotchas = sorted((r["title"], r["fields"]["cause"]) for r in records(cli, gr) if r["kind"] == "gotcha")
    assert gotchas == sorted(
        [
            (
                f'Fix grants, fixing {ttl[:10]} ("Cache grants forever")',
                f"introduced by {ttl[:12]} (Cache grants forever)",
            ),
            (f'Fix grants, fixing {uid[:10]} ("Use uid for grants")', f"introduced by {uid[:12]} (Use uid for grants)"),
        ]
    )
    shown = cli(gr.path, "show", only(records(cli, gr)[:1], "gotcha")["id"]).out
    assert "symptom" not in shown  # ("Fix grants" only restates "Fix grants, fixing …")


def test_a_lore_value_said_twice_makes_one_record(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/m.py", "def m():\n    return 1\n")
    gr.commit(
        "Add m\n\nConstraint: m is never zero\nDirective: keep m pure\nRejected: a table | too big\n"
        "Constraint: m is never zero\nDirective: keep m pure\nRejected: a table | too big\nConstraint: m is small\n"
    )
    harvest(cli, gr)
    rows = records(cli, gr)
    assert sorted((r["kind"], r["title"]) for r in rows) == [
        ("attempt", "Rejected: a table"),
        ("constraint", "m is never zero"),
        ("constraint", "m is small"),
        ("decision", "Add m"),
        ("gotcha", "keep m pure"),
    ]
    assert only(rows, "decision")["fields"]["alternatives"] == [{"option": "a table", "why_not": "too big"}]


def test_idempotent_and_incremental(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    first = harvest(cli, gr)
    assert first["written"] == 1
    again = harvest(cli, gr)
    assert again["up_to_date"] and again["commits"] == 0
    full = harvest(cli, gr, "--full")
    assert full["commits"] == 3 and full["records"] == 1 and full["written"] == 0
    gr.write("app/other.py", "Y = 2\n")
    gr.commit("One more")
    incremental = harvest(cli, gr)
    assert incremental["commits"] == 1 and incremental["written"] == 0
    text = cli(gr.path, "harvest")
    assert text.code == 0 and text.out.strip() == "nothing new since the last harvest"


def test_records_a_new_harvester_derives_again_are_not_new(cli, gr: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """After a harvester version bump every record is derived again, its hash changed by the version
    in its provenance: the line said `1 new records` of the one the cache already held."""
    import comind.harvest.context
    import comind.harvest.run

    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    assert cli(gr.path, "harvest").out.endswith("; 1 new record\n")
    assert cli(gr.path, "harvest", "--full").out.endswith("; 0 new records\n")
    for module in (comind.harvest.run, comind.harvest.context):  # the next release's harvester
        monkeypatch.setattr(module, "HARVESTER_VERSION", module.HARVESTER_VERSION + ".1")
    gr.write("app/other.py", "X = 1\n")
    gr.commit("Add X")
    gr.git("revert", "--no-edit", "HEAD")
    text = cli(gr.path, "harvest").out
    assert text.startswith("harvested 5 commits: 2 attempts; ") and text.endswith("; 1 record re-derived (1 new)\n")
    again = harvest(cli, gr, "--full")
    assert (again["written"], again["new"], again["rederived"]) == (0, 0, 0)


def test_a_history_of_one_commit_is_one_commit_in_the_summary(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path, "one")
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit("initial")
    assert cli(repo.path, "harvest").out == "harvested 1 commit: nothing; 0 new records\n"


def test_publish_writes_into_the_shared_store(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)  # into the local cache first, as every `check` does
    harvest(cli, gr, "--publish")  # then published: not "nothing new"
    inbox = gr.path / ".comind" / "ledger" / "_ledger" / "inbox"
    assert len(list(inbox.iterdir())) == 1


def test_bad_input_never_crashes(cli, gr: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gr.write("a.txt", "1\n")
    gr.commit("Weird\x01message with control characters\n\nConstraint: keep going")
    gr.write("a.txt", "2\n")
    big = tmp_path / "big"
    big.write_text("Huge message\n\n" + ("lorem ipsum dolor sit amet " * 40_000) + "\n\nConstraint: still parsed\n")
    gr.git("commit", "-q", "-a", "-F", str(big))
    gr.write("a.txt", "3\n")
    gr.commit("Long trailer block\n\n" + "\n".join(f"Reviewed-by: Person {n} <p{n}@example.com>" for n in range(500)))
    # invalid UTF-8 with no encoding header, written with git's own plumbing
    tree = gr.git("write-tree").strip()
    msg = tmp_path / "msg"
    msg.write_bytes(b"Latin-1 \xe9t\xe9 message\n\nConstraint: caf\xe9 stays open\n")
    bad = gr.git("commit-tree", tree, "-p", gr.head(), "-F", str(msg)).strip()
    gr.git("reset", "-q", "--hard", bad)
    gr.branch("b1")
    gr.branch("b2")
    for name in ("b1", "b2"):
        gr.checkout(name)
        gr.write(f"{name}.txt", name)
        gr.commit(f"on {name}")
    gr.checkout("main")
    gr.git("merge", "-q", "-m", "Octopus", "b1", "b2")
    summary = harvest(cli, gr)
    assert summary["commits"] == 8
    titles = {r["title"] for r in records(cli, gr)}
    assert {"keep going", "still parsed", "café stays open"} <= titles or {"keep going", "still parsed"} <= titles
    assert not summary["skipped"].get("reverts-error") and not summary["skipped"].get("lore-error")


def test_shallow_clone_harvests_what_it_has(cli, gr: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    for n in range(3):
        gr.write("n.txt", str(n))
        gr.commit(f"n {n}")
    clone = GitRepo(tmp_path, "shallow-parent")
    clone.git("clone", "-q", "--depth", "2", f"file://{gr.path}", str(tmp_path / "shallow"))
    result = cli(tmp_path / "shallow", "harvest")
    assert result.code == 0 and "shallow clone" in result.out and "harvested 2 commits" in result.out


def test_summary_line_names_each_count_as_a_noun(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.git("revert", "--no-edit", "HEAD")
    assert "commits: 1 attempt; 1 new record" in cli(gr.path, "harvest").out
    for n in range(2):  # a revert naming no change of this history is an attempt of its own too
        gr.write(f"{n}.txt", "a")
        gr.commit(f'Revert "a change this history never had, #{n}"')
    assert "commits: 2 attempts, 2 reverts naming no known commit; 2 new records" in cli(gr.path, "harvest").out


# -- forms seen on real histories ------------------------------------------------------------------


def _attempts(cli, gr: GitRepo) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    return {r["title"]: r for r in records(cli, gr) if r["kind"] == "attempt"}


def test_a_large_lockfile_does_not_crowd_the_code_out_of_the_fingerprint(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # astro's Deno example brought its own 3,000-line pnpm-lock.yaml, listed before its code
    lock = "".join(f"  /pkg-{i}/1.0.{i}:\n    resolution: {{integrity: sha512-{i:040d}}}\n" for i in range(1600))
    gr.write("examples/deno/pnpm-lock.yaml", lock)
    gr.write("examples/deno/server.ts", "serve(handler, { port: 8085 });\nconsole.log('listening on 8085');\n")
    gr.commit("add Astro Deno Example (#3645)")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)
    fingerprint = _attempts(cli, gr)["add Astro Deno Example (#3645)"]["fields"]["fingerprint"]
    files = {f["path"]: f for f in fingerprint["files"]}
    assert files["examples/deno/pnpm-lock.yaml"]["added"] == []
    assert [t for _, t, _ in files["examples/deno/server.ts"]["added"]] == [
        "serve(handler, { port: 8085 });",
        "console.log('listening on 8085');",
    ]


def test_one_revert_of_several_commits_is_one_attempt_each(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/a.py", "def stream_compression(body):\n    return gzip_chunks(body, level=6)\n")
    gr.commit("feat(http): stream compression (#10)")
    gr.write("app/b.py", "def read_return(resource):\n    return resource.read_into_buffer(size=4096)\n")
    gr.commit("core: introduce read_return (#11)")
    gr.write("app/a.py", "")
    gr.write("app/b.py", "")
    gr.commit(
        'Revert various PRs related to "http" (#12)\n\n* Revert "feat(http): stream compression (#10)"\n'
        '* Revert "core: introduce read_return (#11)"\n'
    )
    gr.write("app/c.py", "def worker_poll(worker):\n    return worker.poll_event_loop(wait=True)\n")
    c = gr.commit("refactor: Worker is not a Future (#13)")
    gr.write("app/d.py", "def runtime_poll(runtime):\n    return runtime.run_event_loop(wait=False)\n")
    d = gr.commit("refactor: JsRuntime is not a Future (#14)")
    gr.write("app/c.py", "")
    gr.write("app/d.py", "")
    gr.commit(
        f'Fix idling by reverting #13 and #14 (#15)\n\n* Revert "refactor: Worker is not a Future (#13)"\n\n'
        f'This reverts commit {c}.\n\n* Revert "refactor: JsRuntime is not a Future (#14)"\n\n'
        f"This reverts commit {d}.\n"
    )
    summary = harvest(cli, gr)
    attempts = _attempts(cli, gr)
    assert set(attempts) == {
        "feat(http): stream compression (#10)",
        "core: introduce read_return (#11)",
        "refactor: Worker is not a Future (#13)",
        "refactor: JsRuntime is not a Future (#14)",
    }
    assert all(a["trust"] == 2 and a["attributes"].get("reverted") for a in attempts.values())
    assert len({a["id"] for a in attempts.values()}) == 4 and summary["counts"]["reverts:attempt"] == 4


def test_a_squash_naming_a_revert_it_undid_again_reverts_only_what_its_diff_touches(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """Rule R4: a squashed pull request lists each revert made on the way; one of them was undone
    before it landed, so its diff leaves that commit's files untouched: that one is no attempt. A
    file moved and converted since is the same file; a title naming what it reverts is believed."""
    gr.write("app/assertions.py", "def assert_json_missing_exact(data):\n    return compare_exactly(data)\n")
    kept = gr.commit("Add assertJsonMissingExact (#21881)")
    gr.write("app/collection.py", "def where_attribute(items, name):\n    return filter_by_attribute(items, name)\n")
    dropped = gr.commit("Add filter by attribute (#21898)")
    gr.write("app/collection.py", "")
    gr.commit(
        f'Revert "Add filter by attribute" (#21909)\n\n* Revert "Add assertJsonMissingExact (#21881)"\n\n'
        f'This reverts commit {kept}.\n\n* Revert "Add filter by attribute (#21898)"\n\n'
        f"This reverts commit {dropped}.\n"
    )
    gr.write("src/setup.js", "export function setup() {\n  return cache.get() || computeSetup()\n}\n")
    cached = gr.commit("Cache the setup result")
    gr.mv("src/setup.js", "lib/Setup.ts")
    gr.commit("Convert setup to TypeScript")
    gr.write("lib/Setup.ts", "export function setup() {\n  return computeSetup()\n}\n")
    gr.commit(f"Back out the setup cache\n\nThis reverts commit {cached}.\n")  # moved and converted since
    gr.write("setup.cfg", "[options]\ninclude_package_data = False\n")
    moved = gr.commit("Disable package data")
    gr.write("pyproject.toml", "[tool.setuptools]\ninclude-package-data = true\n")
    gr.commit(f'Revert "Disable package data"\n\nThis reverts commit {moved}.\n')  # the setting moved files
    summary = harvest(cli, gr)
    assert set(_attempts(cli, gr)) == {
        "Add filter by attribute (#21898)",
        "Cache the setup result",
        "Disable package data",
    }
    assert summary["skipped"]["revert-leaves-it-untouched"] == 1


def test_cut_titles_urls_backticks_and_bare_pr_numbers_resolve(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    def reverted_as(message: str) -> Callable[[str], str]:
        return lambda _: message

    ping = tried_and_reverted(
        gr,
        "app/ws.py",
        "def send_ping_frames(server):\n    server.schedule_ping(interval_seconds=30)\n",
        "fix(runtime): send ws ping frames from inspector server (#26352)",
        reverted_as('Revert "fix(runtime): send ws ping frames from inspector server (#263… (#26513)'),
    )
    warn = tried_and_reverted(
        gr,
        "app/run.py",
        "def warn_allow_run(flags):\n    log_warning_once('allow-run without a list')\n",
        "feat: warn when using `--allow-run` with no allow list (#25215)",
        reverted_as('Revert "feat: warn when using --allow-run with no allow list" (#26021)'),
    )
    info = tried_and_reverted(
        gr,
        "app/info.py",
        "def info_never_type_checks(module):\n    return module_graph_without_checks(module)\n",
        "fix(deno info): Never type check (#6978)",
        reverted_as('fix(cli): revert "never type check deno info #6978" (#7199)'),
    )
    ops = tried_and_reverted(
        gr,
        "app/ops.py",
        "def deferred_op(state):\n    return state.spawn_lazy_async_operation()\n",
        "refactor: rewrite deferred ops (#20303)",
        lambda sha: (
            'Revert "refactor: rewrite deferred ops (#20303) (#20370)\n\nThis reverts commit\n'
            f"https://github.com/acme/app/commit/{sha}.\n"
        ),
    )
    harvest(cli, gr)
    reverted = {a["attributes"].get("reverted") for a in _attempts(cli, gr).values()}
    assert reverted == {ping, warn, info, ops}


def test_free_form_revert_is_an_unresolved_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/realms.py", "def create_realm(runtime):\n    return runtime.new_context(shadow=True)\n")
    gr.commit("Add realms")
    gr.write("app/realms.py", "")
    gr.commit("Revert realms from the core (#16366)\n\nThey impede the event loop work.")
    gr.write("app/revert.py", "def revert_transaction(tx):\n    return tx.rollback(keep_audit_log=True)\n")
    gr.commit("revert: keep the audit log when rolling back")  # a code area called revert: still no revert
    harvest(cli, gr)
    (attempt,) = _attempts(cli, gr).values()
    assert attempt["trust"] == 1 and attempt["attributes"]["marker"] == "free-form"
    added = [line[1] for f in attempt["fields"]["fingerprint"]["files"] for line in f["added"]]
    assert "return runtime.new_context(shadow=True)" in added  # the revert's own diff, turned around


def test_a_revert_quoting_a_word_of_its_subject_is_titled_by_its_subject(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """black's `[docker ci] Revert "parallel" builds in seperate actions (#4057)` was titled "parallel":
    its quote is a word, not the subject it reverted, and names no commit. Titled by what its subject
    took out; a quote that names a commit, or one followed by a pull request number alone, titles as before."""
    gr.write(".github/workflows/docker.yml", "jobs:\n  build:\n    runs-on: ubuntu-latest\n")
    gr.commit("Build the images in separate jobs (#4050)")
    gr.write(".github/workflows/docker.yml", "jobs:\n  build:\n    runs-on: ubuntu-22.04\n")
    gr.commit('[docker ci] Revert "parallel" builds in seperate actions (#4057)\n\n- Broke tagging images together')
    gr.write("app/cache.py", "def grants(user):\n    return redis_cache.get_grants_for(user.id)\n")
    gr.commit("Add cache")
    gr.write("app/cache.py", "")
    gr.commit('Revert "Add cache" for benchmarking\n\nThe cache hid the slow path.')
    gr.write("app/flags.py", "ENABLE_FAST_PATH_FOR_ALL_USERS = True\n")
    gr.commit("Turn the fast path on")
    gr.write("app/flags.py", "")
    gr.commit('Revert "Fast path for everyone" (#4100)\n\nIt broke sessions.')
    harvest(cli, gr)
    attempts = _attempts(cli, gr)
    whole = 'What “[docker ci] Revert "parallel" builds in seperate actions (#4057)” took out'
    assert set(attempts) == {whole, "Add cache", "Fast path for everyone"}, set(attempts)
    assert "reverted" not in attempts[whole]["attributes"]  # no target, as before
    assert attempts["Add cache"]["attributes"]["reverted"]  # found by its quote, as before
    assert "reverted" not in attempts["Fast path for everyone"]["attributes"]


def test_reland_naming_the_revert_it_undoes_retires_a_free_form_revert(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # deno's "Reland support for async ops in realms": "a reland of #14734 after it was reverted in #16366",
    # where #16366 is the free-form `Revert realms from deno_core`, which names nothing to find it by
    gr.write("app/realms.py", "def create_realm(runtime):\n    return runtime.new_context(shadow=True)\n")
    gr.commit("feat(core): Add support for async ops in realms (#14734)")
    gr.write("app/realms.py", "")
    gr.commit("Revert realms from the core (#16366)\n\nThey impede the event loop work.")
    gr.write("app/notes.md", "realms were reverted in #16366 for now\n")
    gr.commit("docs: say where realms went")  # no reland: saying so retires nothing
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] != "retracted"
    gr.write("app/realms.py", "def create_realm(runtime):\n    return runtime.new_context(shadow=True)\n")
    gr.commit(
        "feat(core): Reland support for async ops in realms (#17204)\n\n"
        "This PR is a reland of #14734 after it was reverted in #16366, except that the\nindex is passed."
    )
    summary = harvest(cli, gr)
    assert summary["counts"]["relands:reland-reference"] == 1
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


def test_a_restore_naming_the_revert_in_words_retires_it(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    # deno's "feat(ext/node): restore module.registerHooks (#34081)": "Relands `module.registerHooks()`
    # support after the full `module.register()` revert in #34077" (the revert, as a noun)
    gr.write("ext/hooks.js", "export function registerHooks(hooks) {\n  return chain.push(hooks.resolve);\n}\n")
    gr.commit("feat(ext/node): module loader hooks (#33900)")
    gr.write("ext/hooks.js", "")
    gr.commit("Revert module loader hooks stack (#34077)")
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] != "retracted"
    gr.write("ext/hooks.js", "export function registerHooks(hooks) {\n  return chain.push(hooks.resolve);\n}\n")
    gr.commit(
        "feat(ext/node): restore module.registerHooks (#34081)\n\nRelands `module.registerHooks()` support "
        "after the full\n`module.register()` revert in #34077."
    )
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


def test_odd_definitions_and_secret_lines_do_not_drop_the_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rust = (
        "struct Guard {\n    port: u16,\n}\n\nimpl Drop for Guard {\n    fn drop(&mut self) {\n"
        "        release_port(self.port);\n    }\n}\n"
    )
    gr.write("src/guard.rs", rust)
    gr.commit("Add the port guard")
    limited = rust.replace("impl Drop for Guard {\n", "impl Drop for Guard {\n    const LIMIT: u16 = 9;\n")
    gr.write("src/guard.rs", limited)  # a line of `impl Drop for Guard` outside its methods: the type's
    gr.write("tests/fixture.py", "def login(client):\n    return client.login(user='bob', password='hunter22x')\n")
    gr.commit("Limit guards, log in in tests")
    gr.git("revert", "--no-edit", "HEAD")
    summary = harvest(cli, gr)
    attempt = _attempts(cli, gr)["Limit guards, log in in tests"]
    assert not summary["skipped"].get("invalid-record")
    raws = [a["raw"] for a in attempt["anchors"]]
    assert "src/guard.rs::Guard" in raws and not any("impl " in r for r in raws)
    lines = [line[1] for f in attempt["fields"]["fingerprint"]["files"] for line in f["added"]]
    assert "const LIMIT: u16 = 9;" in lines and not any("hunter22x" in t for t in lines)


def test_old_gerrit_review_urls_resolve_cl_reverts(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("cmd/stringer.go", "func load() {\n\tuseSourceImporterWhenAvailable(config)\n}\n")
    original = gr.commit(
        "cmd/stringer: use source importer when available\n\nReviewed-on: https://go-review.googlesource.com/40403\n"
    )
    gr.write("cmd/stringer.go", "func load() {\n}\n")
    gr.commit("cmd/stringer: revert CL 40403\n\nThis reverts CL 40403.\n\nIt caused other problems.\n")
    harvest(cli, gr)
    (attempt,) = _attempts(cli, gr).values()
    assert attempt["attributes"]["reverted"] == original


@pytest.mark.parametrize(
    "reland_subject",
    [
        'Reland "Cache permission checks in Redis" (#30)',
        "fix(perm): re-land cache permission checks in Redis",
        "Cache permission checks in Redis, take 2",
        "Cache permission checks in Redis (#31)",  # the same subject again
    ],
)
def test_relands_in_words_or_by_subject_retire_the_attempt(cli, gr: GitRepo, reland_subject: str) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis (#20)")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)  # the reverted subject is kept in the harvest state for the next, incremental harvest
    gr.write("app/other.py", "Y = 2\n")
    gr.commit("Unrelated")
    harvest(cli, gr)
    gr.write("app/perm.py", CACHED)
    gr.commit(reland_subject)
    summary = harvest(cli, gr)
    assert summary["commits"] == 1 and summary["counts"]["reverts:reland"] == 1
    attempt = only(records(cli, gr), "attempt")
    assert attempt["status"] == "retracted" and "relanded in" in attempt["status_reason"]


def test_a_common_subject_again_is_no_reland(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    for n in range(3):
        gr.write("deps.txt", f"lib=={n}\n")
        gr.commit("Update dependencies")
    gr.git("revert", "--no-edit", "HEAD")
    gr.write("deps.txt", "lib==9\n")
    gr.commit("Update dependencies")
    summary = harvest(cli, gr)
    assert not summary["counts"].get("reverts:reland")
    assert only(records(cli, gr), "attempt")["status"] != "retracted"


def test_a_cut_reland_subject_names_one_reverted_subject(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    title = "refactor(ext/net): clean up variadic network ops and their permission checks"
    gr.write("app/perm.py", CACHED)
    gr.commit(f"{title} (#16392)")
    gr.git("revert", "--no-edit", "HEAD")
    gr.write("app/perm.py", CACHED)
    gr.commit(f'Revert "Revert "{title[:40]}…"" (#16422)')
    summary = harvest(cli, gr)
    assert summary["counts"]["reverts:reland"] == 1
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


@pytest.mark.parametrize(
    ("subject", "attempts"),
    [
        ("Reverted accidental change", 0),  # pip
        ("fix: revert accidentally added `handler` on `Checker` (#24438)", 0),  # deno
        ("Revert unrelated change", 0),
        ('Revert "Fix unrelated test failures"', 1),  # the quoted subject's words are not the revert's
        ("Revert the permission cache", 1),
        (
            'Revert "Fix unrelated test failures" (#26308)\n\n'
            "Reverts astral-sh/ruff#26290. This was accidentally merged.",
            0,
        ),
        ('Revert "Fix unrelated test failures"\n\nLanded by accident, sorry.', 0),  # mypy
        ('Revert "Fix unrelated test failures"\n\nIt was merged too early: it breaks the nightly build.', 1),
        ('Revert "Fix unrelated test failures"\n\nThe tests accidentally pass on CI; the build breaks.', 1),
        ('Revert "Fix unrelated test failures"\n\noops, accidentally committed to main', 0),  # svelte kit
        ('Revert "Fix unrelated test failures"\n\nIt deleted the accidentally committed fixture we need.', 1),
    ],
)
def test_a_revert_of_a_slip_makes_no_attempt(cli, gr: GitRepo, subject: str, attempts: int) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    gr.commit("Fix unrelated test failures")
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", subject)
    summary = harvest(cli, gr)
    assert sum(r["kind"] == "attempt" for r in records(cli, gr)) == attempts
    assert ("revert-of-a-slip" in json.dumps(summary)) == (attempts == 0)


@pytest.mark.parametrize(
    ("subject", "attempts"),
    [
        # rule R3: a change adding a command called revert, whose message shows what the command writes
        (
            "feat: add a `revert` command\n\nIt commits the inverse with the message\n\n    This reverts commit {sha}.",
            0,
        ),
        ("Add revert subcommand\n\nUsage: `tool revert 12` undoes it.\nReverts #12 the way `git revert` would.", 0),
        ("Add a revert button (reverts {sha} on a click)", 0),
        # what R3 leaves alone: a revert, and a revert of a commit that added such a command
        ("Take the cache back out\n\nThis reverts commit {sha}.", 1),
        ('Revert "feat: add a `revert` command"\n\nThis reverts commit {sha}.', 1),
        ("revert: add a `revert` command\n\nThis reverts commit {sha}.", 1),  # a conventional revert
    ],
)
def test_a_subject_naming_a_command_called_revert_is_no_revert(cli, gr: GitRepo, subject: str, attempts: int) -> None:  # type: ignore[no-untyped-def]
    gr.write("app/perm.py", CACHED)
    sha = gr.commit("Cache the grants (#12)")
    gr.write("app/perm.py", PERM)
    gr.commit(subject.format(sha=sha))
    harvest(cli, gr)
    assert sum(r["kind"] == "attempt" for r in records(cli, gr)) == attempts


def test_verbose_says_what_was_skipped_and_why(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    gr.write("tests/fmt.rs", "fn f() {}\n")
    sha = gr.commit("test: migrate message_format\n\nThis reverts commit 2fbba5300c94237960540e176cdc9b0c829d.")
    quiet = cli(gr.path, "harvest")
    assert quiet.code == 0 and quiet.out.rstrip().endswith("; 1 skipped") and "body-revert" not in quiet.out
    said = cli(gr.path, "harvest", "--full", "-v")
    skipped = f"  skipped 1 body-revert-of-a-commit-not-here: {sha[:12]} test: migrate message_format"
    assert said.code == 0 and said.out.splitlines()[1:] == [skipped]


def test_records_are_not_anchored_to_changelogs_fragments_or_lockfiles(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A release deletes the changelog fragment a change added: a record anchored to it went stale
    days later, though its code stood. The changelog and a lockfile say what changed, not where."""
    gr.write("app/m.py", "def m():\n    return 1\n")
    gr.write("CHANGELOG.md", "# Changes\n")
    gr.write("Cargo.lock", "version = 3\n")
    gr.commit("Add m")
    gr.write("app/m.py", "def m():\n    return 2\n")
    gr.write(".changeset/brave-m.md", "---\n'app': patch\n---\n\nm returns 2\n")
    gr.write("CHANGELOG.md", "# Changes\n\n- m returns 2\n")
    gr.write("Cargo.lock", "version = 4\n")
    gr.commit("Make m return 2\n\nConstraint: m is never zero\n")
    gr.git("revert", "--no-edit", "HEAD")
    gr.write("app/m.py", "def m():\n    return 2\n")
    gr.write(".changeset/brave-m.md", "---\n'app': patch\n---\n\nm returns 2\n")
    gr.commit("Make m return 2 again\n\nConstraint: m stays positive\n")
    gr.git("rm", "-q", ".changeset/brave-m.md")
    gr.commit("Release 1.0.1")
    harvest(cli, gr)
    rows = records(cli, gr)
    for row in rows:
        assert [a["raw"] for a in row["anchors"]] == ["app/m.py::m"], row["title"]
    assert {r["status"] for r in rows if r["title"] == "m stays positive"} == {"active"}
    # a change that touched nothing but a changelog is still anchored to it
    gr.write("CHANGELOG.md", "# Changes\n\n- m returns 2\n\nConstraint prose\n")
    gr.commit("Note the release\n\nConstraint: the changelog is by hand\n")
    harvest(cli, gr)
    ruled = [r for r in records(cli, gr) if r["title"] == "the changelog is by hand"]
    assert [a["raw"] for a in ruled[0]["anchors"]] == ["CHANGELOG.md"]


@pytest.mark.parametrize("credits", ["AUTHORS", "docs/CONTRIBUTORS.md", ".mailmap"])
def test_records_are_not_anchored_to_lists_of_contributors(cli, gr: GitRepo, credits: str) -> None:  # type: ignore[no-untyped-def]
    """A first change adds its author to AUTHORS beside its code: the list says who, not where."""
    gr.write("app/m.py", "def m():\n    return 1\n")
    gr.write(credits, "Ann\n")
    gr.commit("Add m")
    gr.write("app/m.py", "def m():\n    return 2\n")
    gr.write(credits, "Ann\nBob\n")
    gr.commit("Make m return 2\n\nConstraint: m is never zero\n")
    harvest(cli, gr)
    row = only(records(cli, gr), "constraint")
    assert [a["raw"] for a in row["anchors"]] == ["app/m.py::m"]


@pytest.mark.parametrize(
    ("beside", "head"),
    [
        ("vendor/vendor.json", ""),
        ("vendor/modules.txt", ""),
        ("Gopkg.lock", ""),
        ("tools/glide.lock", ""),
        ("vendor/github.com/a/b/b.go", "package b\n"),
        ("app/m_string.go", '// Code generated by "stringer -type=M"; DO NOT EDIT.\n\npackage app\n'),
        ("app/parser.py", "# @generated by the grammar tool\n"),
        ("data/docs.json", ""),  # `linguist-generated` in .gitattributes
        ("web/app.min.js", ""),
        ("web/bundle.js", "var a=" + "1+" * 600 + "1;\n"),  # one first line, minified
        ("test/form/block-comments/_expected/amd.js", "define(function () {});\n"),
        ("src/__snapshots__/m.test.js.snap", "exports[`m 1`] = `2`;\n"),
        ("pkg/testdata/m.golden", ""),
        ("README.md", "# App\n"),
        ("README.ja.md", "# App\n"),
        ("lib/README.rdoc", "= App\n"),
        ("docs/guide.rst", "Guide\n=====\n"),
    ],
)
def test_records_are_not_anchored_to_vendored_generated_expected_or_readme_files(  # type: ignore[no-untyped-def]
    cli, gr: GitRepo, beside: str, head: str
) -> None:
    """A vendoring manifest, a generated file, a test's expected output or a README changed beside the
    code: no one looks a reason up there, and a regenerated file stales the record."""
    gr.write(".gitattributes", "data/*.json linguist-generated\n*.go text eol=lf\n")
    gr.write("app/m.py", "def m():\n    return 1\n")
    gr.write(beside, head + "one\n")
    gr.commit("Add m")
    gr.write("app/m.py", "def m():\n    return 2\n")
    gr.write(beside, head + "two\n")
    gr.commit("Make m return 2\n\nConstraint: m is never zero\n")
    harvest(cli, gr)
    assert [a["raw"] for a in only(records(cli, gr), "constraint")["anchors"]] == ["app/m.py::m"]


def test_a_change_to_a_readme_alone_is_anchored_to_it_not_to_the_changelog(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """The less telling files are anchors when the change has nothing more telling: a README over a
    changelog; and a project's `-linguist-documentation` makes its docs folder code again."""
    gr.write(".gitattributes", "docs/examples/** -linguist-documentation\n")
    gr.write("README.md", "# App\n")
    gr.write("CHANGELOG.md", "# Changes\n")
    gr.write("docs/examples/m.md", "m\n")
    gr.write("docs/guide.md", "m\n")
    gr.commit("Add the docs")
    gr.write("README.md", "# App\n\nUse m.\n")
    gr.write("CHANGELOG.md", "# Changes\n\n- the README says to use m\n")
    gr.commit("Tell to use m\n\nConstraint: the README names m\n")
    gr.write("docs/examples/m.md", "m()\n")
    gr.write("docs/guide.md", "m()\n")
    gr.commit("Call m in the examples\n\nConstraint: examples call m\n")
    harvest(cli, gr)
    rows = {r["title"]: [a["raw"] for a in r["anchors"]] for r in records(cli, gr)}
    assert rows == {"the README names m": ["README.md"], "examples call m": ["docs/examples/m.md"]}


def test_an_attempt_whose_code_has_no_anchor_is_anchored_to_its_docs(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """The code an attempt added is not there before it (nor its folder): its README edit is the
    most telling file left to anchor to, not the whole repository."""
    gr.write("README.md", "# App\n")
    gr.commit("Add the README")
    gr.write("tools/pull.sh", "git pull\n")
    gr.write("README.md", "# App\n\nRun tools/pull.sh.\n")
    gr.commit("Add a pull script")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)
    assert [a["raw"] for a in only(records(cli, gr), "attempt")["anchors"]] == ["README.md"]


def test_an_attempt_on_a_vendoring_manifest_alone_keeps_it_as_its_anchor(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """Nothing more telling was touched, and no dependency anchor can stand for it (comind reads no
    vendoring manifest: go.mod is Go's): the manifest is where the attempt is looked up, and its lines,
    kept in the fingerprint (it is no lockfile), find the bump made again."""
    pin = '{{"package": [{{"path": "github.com/a/b", "revision": "{}", "revisionTime": "2017-0{}-01"}}]}}\n'
    gr.write("main.go", "package main\n\nfunc main() {}\n")
    gr.write("vendor/vendor.json", pin.format("1111111111111111111111111111111111111111", 1))
    gr.commit("initial")
    gr.write("vendor/vendor.json", pin.format("2222222222222222222222222222222222222222", 2))
    gr.commit("Bump github.com/a/b")
    gr.git("revert", "--no-edit", "HEAD")
    harvest(cli, gr)
    assert [a["raw"] for a in only(records(cli, gr), "attempt")["anchors"]] == ["vendor/vendor.json"]
    gr.branch("again")
    gr.checkout("again")
    gr.write("vendor/vendor.json", pin.format("2222222222222222222222222222222222222222", 2))
    gr.commit("Update github.com/a/b")
    result = cli(gr.path, "check", "--base", "main", "--format", "json")
    [dead] = [f for f in json.loads(result.out)["findings"] if f["type"] == "dead_end"]
    assert dead["path"] == "vendor/vendor.json"


@pytest.mark.parametrize(
    "fragment", ["changelog/7534.bugfix.rst", "CHANGES/7916.doc.rst", "changelog_unreleased/api/18375.md"]
)
def test_records_are_not_anchored_to_towncrier_fragments_by_any_folder_name(cli, gr: GitRepo, fragment: str) -> None:  # type: ignore[no-untyped-def]
    """pytest's `changelog/`, aiohttp's `CHANGES/` and prettier's `changelog_unreleased/<area>/`
    fragments, deleted at the release: records anchored to them went stale though their code stood."""
    gr.write("app/m.py", "def m():\n    return 1\n")
    gr.commit("Add m")
    gr.write("app/m.py", "def m():\n    return 2\n")
    gr.write(fragment, "m returns 2\n")
    gr.commit("Make m return 2\n\nConstraint: m is never zero\n")
    gr.git("rm", "-q", fragment)
    gr.commit("Release 1.0.1")
    harvest(cli, gr)
    row = only(records(cli, gr), "constraint")
    assert ([a["raw"] for a in row["anchors"]], row["status"]) == (["app/m.py::m"], "active")


def test_a_squash_quoting_a_revert_made_already_makes_no_second_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A squash of main into a release branch lists main's commits, a revert among them: the revert
    was made already, and the squash's other items became a second attempt's reason ("* fix(vue): …")."""
    gr.write("app/mw.py", "def bundle(build):\n    return build.resolve(prefix='node:', external=True)\n")
    target = gr.commit("fix: Allow node: prefix for builtins (#14839)")
    gr.git("revert", "--no-edit", "HEAD")
    gr.write("app/vue.py", "def attributes(node):\n    return node.html_attributes(typed=True)\n")
    gr.write("app/mw.py", "def bundle(build):\n    return build.resolve(external=True)\n")  # main's, merged
    gr.commit(
        "merge main in next (#15247)\n\n* fix(vue): add HTML attributes to generated types\n\nFixes #14686\n\n"
        f'* Revert "fix: Allow node: prefix for builtins (#14839)"\n\nThis reverts commit {target}.\n'
    )
    summary = harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert attempt["title"] == "fix: Allow node: prefix for builtins (#14839)"
    assert "fix(vue)" not in attempt["body"]
    assert summary["skipped"].get("quoted-revert-made-already") == 1
    # a body quoting a revert of that revert relands it, as before
    gr.write("app/mw.py", "def bundle(build):\n    return build.resolve(prefix='node:', external=True)\n")
    revert = gr.git("rev-parse", "HEAD~1").strip()
    gr.commit(
        f'Bring it back (#15300)\n\n* Revert "Revert "fix: Allow node: prefix for builtins (#14839)""\n\n'
        f"This reverts commit {revert}.\n"
    )
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


def test_a_squash_that_undoes_a_botched_revert_and_reverts_anew_keeps_the_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """laravel 5e2240d151: `Revert ae2f704` changed the wrong line; a squash then reverted ae2f704 and
    that revert both. Its quoted revert was taken for one made already, so the squash read as a
    reland of the botched revert alone, and #22517 (reverted at head) was shown as relanded."""
    gr.write("app/h.py", "def prepare():\n    return 'symfony'\n\n\ndef convert():\n    return 'symfony'\n")
    gr.commit("Add the handler")
    gr.write("app/h.py", "def prepare():\n    return 'illuminate'\n\n\ndef convert():\n    return 'symfony'\n")
    target = gr.commit("Fix prepare()'s return type (#22517)")
    gr.write("app/h.py", "def prepare():\n    return 'illuminate'\n\n\ndef convert():\n    return 'illuminate'\n")
    botched = gr.commit(f"Revert {target[:7]} (#22532)")
    gr.write("app/h.py", "def prepare():\n    return 'symfony'\n\n\ndef convert():\n    return 'symfony'\n")
    gr.commit(
        f'[5.6] Revert #22517 (#22533)\n\n* Revert "Fix prepare()\'s return type (#22517)"\n\n'
        f'This reverts commit {target}.\n\n* Revert "Revert {target[:7]} (#22532)"\n\nThis reverts commit {botched}.\n'
    )
    harvest(cli, gr)
    attempts = [(r["title"], r["status"]) for r in records(cli, gr) if r["kind"] == "attempt"]
    assert ("Fix prepare()'s return type (#22517)", "active") in attempts, attempts


@pytest.mark.parametrize("reason", ["Stale grants after a role change.", ""])
def test_show_says_a_reverts_title_once(cli, gr: GitRepo, reason: str) -> None:  # type: ignore[no-untyped-def]
    """The trigger (`re-doing: <title>`) and the approach (`<title> (<sha>)`) say the title again:
    `show` keeps only what they add, and a revert that gave no reason says so, not our sentence."""
    gr.write("app/perm.py", PERM.replace("user.id", "user.uid"))
    tried = gr.commit("Key grants by uid")
    gr.git("revert", "--no-edit", "HEAD")
    gr.git("commit", "--amend", "-q", "-m", f'Revert "Key grants by uid"\n\n{reason}'.strip())
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    shown = cli(gr.path, "show", attempt["id"]).out
    assert shown.count("Key grants by uid") == 1, shown
    assert f"  approach: as titled ({tried[:10]})\n" in shown and "relevant when" not in shown
    assert (f"\n  {reason}" if reason else "  reason: none given\n") in shown, shown
    assert attempt["trigger"] == "re-doing: Key grants by uid"  # --json keeps every field as stored


@pytest.mark.parametrize("subject", ["Revert default change from #5603", None])
@pytest.mark.parametrize("runs", [1, 2])
def test_a_revert_made_on_two_branches_is_one_attempt(cli, gr: GitRepo, subject: str | None, runs: int) -> None:  # type: ignore[no-untyped-def]
    """composer 6f7389e911 / edddae42db: one revert cherry-picked from a release branch onto main,
    both branches merged: two attempts with the same title, reason and fingerprint in `comind log`.
    The copy is that revert again, not a second time the change was tried and given up; the attempt
    is the one that landed on the default branch first, whatever the runs that read it."""
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.branch("release")
    gr.write("app/other.py", "def other():\n    return 1\n")
    gr.commit("Add other")
    gr.checkout("release")
    if subject is None:
        revert = gr.revert_head()
    else:
        gr.write("app/perm.py", PERM)
        revert = gr.commit(subject)
    gr.checkout("main")
    gr.tick()
    gr.git("cherry-pick", revert)  # the same revert again, later, on main
    copy = gr.head()
    if runs == 2:
        harvest(cli, gr)
    gr.merge("release")
    summary = harvest(cli, gr)
    attempts = [r for r in records(cli, gr) if r["kind"] == "attempt"]
    assert len(attempts) == 1, [(a["title"], a["evidence"]) for a in attempts]
    assert summary["skipped"].get("revert-made-already") == 1
    # made from the copy that landed on main first, read in one run or two (the release branch's revert,
    # older, is walked first in one run: its attempt is left for the copy's)
    assert [e["ref"] for e in attempts[0]["evidence"] if e["role"] == "revert"] == [copy]
    gr.git("revert", "--no-edit", copy)  # undoing either revert relands the change: the one attempt is retired
    harvest(cli, gr)
    assert only(records(cli, gr), "attempt")["status"] == "retracted"


def test_a_change_brought_back_unsaid_and_reverted_again_is_a_second_attempt(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """The same lines reverted twice on one line of history: the change came back between (here under
    another subject, no reland said), and was given up again: two attempts, not a copy folded."""
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.revert_head()
    gr.write("app/perm.py", CACHED)
    gr.commit("Speed up the permission checks")
    gr.revert_head()
    summary = harvest(cli, gr)
    assert len([r for r in records(cli, gr) if r["kind"] == "attempt"]) == 2
    assert "revert-made-already" not in summary["skipped"]


@pytest.mark.parametrize("runs", [1, 2])
def test_a_revert_copy_merged_after_the_change_came_back_is_a_second_attempt(cli, gr: GitRepo, runs: int) -> None:  # type: ignore[no-untyped-def]
    """A release branch's copy of main's revert, merged into main after main had brought the change
    back under another subject (no reland said): that merge took the change out of main again, a
    second attempt, not the first revert folded again (a change re-proposed after it is flagged)."""
    gr.write("app/perm.py", CACHED)
    gr.commit("Cache permission checks in Redis")
    gr.branch("release")
    first = gr.revert_head()
    gr.checkout("release")
    gr.tick()
    gr.git("cherry-pick", first)  # the same revert, on the release branch
    gr.checkout("main")
    gr.write("app/perm.py", CACHED + "\n\ndef flush():\n    CACHE.clear()\n")
    gr.commit("Cache permission checks, flushed on role changes")
    if runs == 2:
        harvest(cli, gr)
    # the merge takes the change out again (git may stop at a conflict: main's side brought it back)
    subprocess.run(["git", "merge", "--no-commit", "--no-ff", "release"], cwd=gr.path, capture_output=True, check=False)
    gr.write("app/perm.py", PERM)
    gr.git("add", "app/perm.py")
    gr.git("commit", "-q", "--no-edit")
    summary = harvest(cli, gr)
    assert len([r for r in records(cli, gr) if r["kind"] == "attempt"]) == 2
    assert "revert-made-already" not in summary["skipped"]


def test_a_one_commit_squash_repeating_the_revert_subject_gives_no_reason(cli, gr: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """black deab5d6ce0: GitHub squashed a one-commit revert pull request, so its body is the revert
    commit's subject again, `Revert "x (#11)"`, no bullet; `show`, check and the agents quoted that
    line as why the change was reverted."""
    gr.write("app/perm.py", PERM.replace("user.id", "user.uid"))
    tried = gr.commit("Key grants by uid (#11)")
    gr.git("revert", "--no-edit", "HEAD")
    gr.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "Key grants by uid" (#12)\n\nRevert "Key grants by uid (#11)"\n\nThis reverts commit {tried}.',
    )
    harvest(cli, gr)
    attempt = only(records(cli, gr), "attempt")
    assert "reason" not in attempt["fields"], attempt["fields"]
    assert "  reason: none given\n" in cli(gr.path, "show", attempt["id"]).out
