"""The code index of a revision, read from git objects and cached by blob and tree."""

from __future__ import annotations

import itertools
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest
from gitrepo import GitRepo

from comind.codeindex import CHUNK, CodeIndex, Snapshot, _chunks
from comind.errors import ComindError

PERM = '''\
import myapp.db as d


def check(user, action):
    """Decide."""
    rows = d.raw_query(user)
    return action in rows


class Checker:
    def run(self, user):
        def helper():
            return check(user, "read")
        return helper()
'''

STORE_GO = """\
package store

type Store struct{ n int }

func (s *Store) Get(k string) int { return s.n }
"""

UI_TS = """\
import { check } from "./perm";
export const render = (x: number): string => String(check(x));
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo(tmp_path)
    r.write("myapp/__init__.py", "")
    r.write("myapp/perm.py", PERM)
    r.write("store/store.go", STORE_GO)
    r.write("web/ui.ts", UI_TS)
    r.write("README.md", "# demo\n")
    r.commit("initial")
    return r


def index(repo: GitRepo, tmp_path: Path, **kw: int) -> CodeIndex:
    return CodeIndex(repo.path, tmp_path / "cache" / "index.sqlite", **kw)


def test_snapshot_lists_definitions(repo: GitRepo, tmp_path: Path) -> None:
    snap = index(repo, tmp_path).snapshot("HEAD")
    assert snap.commit == repo.head()
    assert set(snap.files) == {"myapp/__init__.py", "myapp/perm.py", "store/store.go", "web/ui.ts"}
    assert snap.files["store/store.go"].language == "go"
    assert snap.qualnames("myapp/perm.py") == ["check", "Checker", "Checker.run", "Checker.run.helper"]
    assert snap.qualnames("store/store.go") == ["Store", "Store.Get"]
    assert snap.qualnames("web/ui.ts") == ["render"]
    check = snap.find("myapp/perm.py", "check")
    assert check is not None and (check.start_line, check.end_line, check.kind) == (4, 7, "function")
    assert snap.find("myapp/perm.py", "nope") is None
    assert snap.find("missing.py", "check") is None
    helper = snap.innermost("myapp/perm.py", 13)
    assert helper is not None and helper.qualname == "Checker.run.helper"
    run = snap.innermost("myapp/perm.py", 14)
    assert run is not None and run.qualname == "Checker.run"
    assert snap.innermost("myapp/perm.py", 2) is None
    assert [i.module for i in snap.imports("myapp/perm.py")] == ["myapp.db"]
    assert ("check", "d.raw_query") in {(c.caller, c.callee) for c in snap.calls("myapp/perm.py")}
    assert snap.blob_text("README.md") == "# demo\n"
    assert snap.stats.files == 4 and snap.stats.skipped["unsupported"] == 1


def test_hash_lookups_follow_moves_and_renames(repo: GitRepo, tmp_path: Path) -> None:
    ix = index(repo, tmp_path)
    before = ix.snapshot("HEAD").find("myapp/perm.py", "check")
    assert before is not None
    # Move `check` to another file and rename it there.
    repo.write(
        "myapp/perm.py",
        PERM.replace(
            'def check(user, action):\n    """Decide."""\n    rows = d.raw_query(user)\n    return action in rows\n', ""
        ),
    )
    repo.write(
        "myapp/rules.py",
        "import myapp.db as d\n\n\ndef may(user, action):\n    rows = d.raw_query(user)\n    return action in rows\n",
    )
    repo.commit("move check to rules as may")
    snap = ix.snapshot("HEAD")
    assert snap.find("myapp/perm.py", "check") is None
    [(path, moved)] = snap.by_shape_hash(before.shape_hash)
    assert (path, moved.qualname) == ("myapp/rules.py", "may")
    assert snap.by_body_hash(before.body_hash)[0][1].qualname == "may"  # the docstring does not count
    assert snap.by_body_hash("0" * 32) == []


def test_warm_snapshot_parses_nothing(repo: GitRepo, tmp_path: Path) -> None:
    first = index(repo, tmp_path).snapshot("HEAD")
    assert (first.stats.parsed, first.stats.cached) == (4, 0)
    again = index(repo, tmp_path).snapshot("HEAD")  # a new CodeIndex on the same cache file
    assert (again.stats.parsed, again.stats.cached, again.stats.files) == (0, 4, 4)
    assert again.qualnames("myapp/perm.py") == first.qualnames("myapp/perm.py")
    assert again.stats.skipped == first.stats.skipped


def test_one_changed_file_parses_one_blob(repo: GitRepo, tmp_path: Path) -> None:
    ix = index(repo, tmp_path)
    ix.snapshot("HEAD")
    repo.write("store/store.go", STORE_GO + "\nfunc Free() {}\n")
    repo.commit("add Free")
    snap = ix.snapshot("HEAD")
    assert (snap.stats.parsed, snap.stats.cached) == (1, 3)
    assert "Free" in snap.qualnames("store/store.go")
    # The old revision is still there, from the cache.
    old = ix.snapshot("HEAD~1")
    assert old.stats.parsed == 0 and "Free" not in old.qualnames("store/store.go")


def test_same_blob_elsewhere_is_not_parsed_again(repo: GitRepo, tmp_path: Path) -> None:
    ix = index(repo, tmp_path)
    ix.snapshot("HEAD")
    repo.mv("myapp/perm.py", "myapp/permissions.py")
    repo.write("copy/perm.py", PERM)
    repo.commit("rename and copy")
    snap = ix.snapshot("HEAD")
    assert snap.stats.parsed == 0
    assert snap.qualnames("copy/perm.py") == snap.qualnames("myapp/permissions.py")


def test_reads_git_objects_not_the_work_tree(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("myapp/perm.py", "def uncommitted():\n    pass\n")
    snap = index(repo, tmp_path).snapshot("HEAD")
    assert "uncommitted" not in snap.qualnames("myapp/perm.py")
    assert "check" in snap.qualnames("myapp/perm.py")


def test_skips_and_errors_are_counted(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("big/huge.py", "x = 1\n" * 200_000)  # 1.2 MB
    repo.write("bin/blob.py", b"def f():\x00\x01 pass\n")
    repo.write("bad/broken.py", "def good():\n    return 1\n\ndef bad(:\n    pass\n")
    repo.write("bad/latin.py", b"# caf\xe9\ndef ok():\n    return '\xff'\n")
    repo.symlink("link.py", "myapp/perm.py")
    sub = GitRepo(repo.path.parent, "sub")
    sub.write("lib.py", "def lib():\n    pass\n")
    sub_head = sub.commit("sub")
    repo.git("add", "-A")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub_head},vendor/lib")
    repo.commit("awkward files", all_files=False)
    assert "160000 commit" in repo.git("ls-tree", "HEAD", "vendor/lib")

    snap = index(repo, tmp_path).snapshot("HEAD")
    assert snap.stats.skipped == {"unsupported": 1, "large": 1, "binary": 1, "symlink": 1, "submodule": 1, "missing": 0}
    assert "big/huge.py" not in snap.files and "bin/blob.py" not in snap.files
    assert "link.py" not in snap.files and "vendor/lib" not in snap.files
    assert snap.stats.errors == 1
    error = snap.error("bad/broken.py")
    assert error is not None and "line(s) 4" in error
    assert "good" in snap.qualnames("bad/broken.py")
    assert snap.qualnames("bad/latin.py") == ["ok"]
    assert snap.error("bad/latin.py") is None
    # The skip counts come back from the cache too.
    warm = index(repo, tmp_path).snapshot("HEAD")
    assert warm.stats.skipped == snap.stats.skipped and warm.stats.errors == 1


def test_unknown_revision(repo: GitRepo, tmp_path: Path) -> None:
    ix = index(repo, tmp_path)
    for rev in ("nope", "HEAD~5", "0" * 40):
        with pytest.raises(ComindError, match=f"unknown revision '{rev}'"):
            ix.snapshot(rev)
    blob = repo.git("rev-parse", "HEAD:README.md").strip()
    with pytest.raises(ComindError, match="unknown revision"):
        ix.snapshot(blob)


def test_tags_and_branches_resolve(repo: GitRepo, tmp_path: Path) -> None:
    repo.git("tag", "-a", "v1", "-m", "v1")
    repo.branch("feature")
    ix = index(repo, tmp_path)
    assert ix.snapshot("v1").commit == ix.snapshot("feature").commit == repo.head()


def test_parallel_parse_matches_serial(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)
    for i in range(70):
        repo.write(
            f"pkg/mod{i}.py",
            f"import os\n\n\ndef f{i}(x):\n    return os.path.join(x, '{i}')\n\n\n"
            f"class C{i}:\n    def m(self):\n        return f{i}(self)\n",
        )
        repo.write(f"web/m{i}.js", f"export function g{i}(a) {{ return a + {i}; }}\n")
    repo.commit("many files")
    seen: list[tuple[int, int]] = []
    parallel = CodeIndex(repo.path, tmp_path / "p.sqlite", workers=2).snapshot(
        "HEAD", lambda done, total: seen.append((done, total))
    )
    serial = CodeIndex(repo.path, tmp_path / "s.sqlite", workers=1).snapshot("HEAD")
    assert parallel.stats.parsed == serial.stats.parsed == 140
    assert parallel.all_symbols() == serial.all_symbols()
    assert seen[-1] == (140, 140)
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(seen))


def test_parse_work_is_shared_with_several_workers(tmp_path: Path) -> None:
    # This process parses too (the smallest files), the workers the largest: same result.
    repo = GitRepo(tmp_path)
    for i in range(60):
        repo.write(f"pkg/m{i}.py", f"def f{i}(x):\n" + "    x = g(x)\n" * (i * 20) + "    return x\n")
    repo.commit("sizes")
    parallel = CodeIndex(repo.path, tmp_path / "p.sqlite", workers=3).snapshot("HEAD")
    serial = CodeIndex(repo.path, tmp_path / "s.sqlite", workers=1).snapshot("HEAD")
    assert parallel.stats.parsed == 60 and parallel.all_symbols() == serial.all_symbols()


def test_stopping_early_leaves_no_workers_behind(tmp_path: Path) -> None:
    # A caller that stops reading (an exception in a progress callback) ends the workers.
    repo = GitRepo(tmp_path)
    for i in range(60):
        repo.write(f"m{i}.py", f"def f{i}():\n    return {i}\n")
    repo.commit("many")

    def stop(done: int, total: int) -> None:
        if 0 < done < total:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CodeIndex(repo.path, tmp_path / "c.sqlite", workers=2).snapshot("HEAD", stop)
    assert multiprocessing.active_children() == []


def test_tasks_are_balanced_by_size() -> None:
    sizes = {f"{i:040x}": s for i, s in enumerate([900, 800, 50, 40, 30] + [1] * 60)}
    todo = [(oid, "python", f"f{oid}.py") for oid in sizes]
    chunks = _chunks(todo, sizes, 2)
    assert [item for chunk in chunks for item in chunk] == todo  # each file once, largest first
    assert chunks[0] == todo[:1] and chunks[1] == todo[1:2]  # a large file is a task of its own
    assert all(len(chunk) <= CHUNK for chunk in chunks)


def test_parallel_parse_with_other_threads_running(tmp_path: Path) -> None:
    # With another thread alive, forking could copy a held lock: the workers are started afresh.
    repo = GitRepo(tmp_path)
    for i in range(60):
        repo.write(f"m{i}.py", f"def f{i}():\n    return {i}\n")
    repo.commit("many")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        snap = CodeIndex(repo.path, tmp_path / "t.sqlite", workers=2).snapshot("HEAD")
    finally:
        stop.set()
        other.join()
    assert snap.stats.parsed == 60 and snap.qualnames("m7.py") == ["f7"]


def test_cache_is_one_row_per_tree_and_blob(repo: GitRepo, tmp_path: Path) -> None:
    ix = index(repo, tmp_path)
    snap: Snapshot = ix.snapshot("HEAD")
    ix.close()
    db = sqlite3.connect(tmp_path / "cache" / "index.sqlite")
    assert db.execute("SELECT count(*) FROM trees").fetchone() == (1,)
    assert db.execute("SELECT count(*) FROM blobs").fetchone() == (4,)
    assert db.execute("SELECT oid FROM trees").fetchone() == (snap.tree,)
    db.close()


def test_default_cache_lives_in_the_git_dir(repo: GitRepo) -> None:
    ix = CodeIndex(repo.path)
    ix.snapshot("HEAD")
    ix.close()
    assert (repo.path / ".git" / "comind" / "index.sqlite").is_file()


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(ComindError, match="not a git repository"):
        CodeIndex(tmp_path / "nowhere")


def test_a_blob_missing_from_this_copy_is_skipped_not_fatal(repo: GitRepo, tmp_path: Path) -> None:
    oid = repo.git("rev-parse", "HEAD:store/store.go").strip()
    (repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()  # an incomplete mirror, a partial clone
    snap = index(repo, tmp_path).snapshot("HEAD")
    assert "store/store.go" not in snap.files and "myapp/perm.py" in snap.files
    assert snap.stats.skipped["missing"] == 1
