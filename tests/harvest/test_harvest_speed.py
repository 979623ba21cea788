"""The harvest's shortcuts give what the long ways give: the history index from the harvest's own
walk, manifests listed per folder, each change read once, the cache left unread where it was just
written. Real repositories in tmp folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from comind.deps import _manifest_blobs, dependencies
from comind.harvest.context import HarvestContext
from comind.harvest.run import harvest
from comind.harvest.walker import walk
from comind.records import new_record
from comind.store import Store
from comind.workspace import Workspace
from tests.harvest_repo import HarvestRepo


def _history(tmp_path: Path) -> HarvestRepo:
    """Branches merged with merge commits (a topological order that is not the time order), a PR
    suffix, a Gerrit change, a cut subject and a revert."""
    r = HarvestRepo(tmp_path / "repo")
    r.commit("root", {"a.py": "def f():\n    return 1\n"})
    r.git("checkout", "-q", "-b", "side")
    r.commit("Add g (#12)", {"b.py": "def g():\n    return 2\n"})
    r.commit("Tweak g\n\nReviewed-on: https://review.example.org/c/repo/+/4711\n", {"b.py": "def g():\n    return 3\n"})
    r.checkout("main")
    change = r.commit("Use a faster f", {"a.py": "def f():\n    return 10\n"})
    r.merge("side", "Merge pull request #13 from side")
    r.revert(change)
    r.commit("Make the very long subject that GitHub cuts short…\n\n…when it is too long\n", {"c.py": "x = 1\n"})
    return r


def _index(ctx: HarvestContext) -> tuple[object, object, object]:
    ctx.by_subject("root")  # builds the index
    return ctx._subjects, ctx._prs, ctx._cls


def test_the_history_index_from_the_harvest_walk_equals_its_own_walk(tmp_path: Path) -> None:
    r = _history(tmp_path)
    ws = Workspace(r.path)
    repo = pygit2.Repository(str(r.path))
    tip = r.head()
    own = HarvestContext(ws, repo, tip)
    own.search_history([tip])
    reused = HarvestContext(ws, repo, tip)
    reused.search_history([tip])
    reused.history_walked(list(walk(repo, [tip], oldest_first=True)))
    assert _index(reused) == _index(own)
    assert own._subjects and own._prs and own._cls  # the history has each kind of lookup
    assert [c.sha for c in walk(repo, [tip], oldest_first=True)][::-1] == [c.sha for c in walk(repo, [tip])]
    reused.search_history([tip, r.git("rev-parse", "side").strip()])  # another history: walked again
    assert reused._walked is None


def test_ancestry_from_the_harvest_walk_is_libgit2_s(tmp_path: Path) -> None:
    """Every ordered pair of commits of a history with merged branches (a topological order that is
    not the time order): ancestor or not, as `git merge-base --is-ancestor` says it."""
    from comind.harvest.walker import is_ancestor

    r = _history(tmp_path)
    r.checkout("-q", "-b", "late", "HEAD~3")
    r.commit("A branch off the middle", {"d.py": "y = 2\n"})
    r.checkout("main")
    r.merge("late", "Merge the late branch")
    repo = pygit2.Repository(str(r.path))
    tip = r.head()
    ctx = HarvestContext(Workspace(r.path), repo, tip)
    ctx.search_history([tip])
    walked = list(walk(repo, [tip], oldest_first=True))
    ctx.history_walked(walked)
    shas = [c.sha for c in walked]
    answers = [(a, b, ctx.is_ancestor(a, b)) for a in shas for b in shas]
    assert answers == [(a, b, is_ancestor(repo, a, b)) for a in shas for b in shas]
    assert sum(yes for _, _, yes in answers) < len(answers) - len(shas)  # both answers are met
    assert any(not yes and shas.index(a) < shas.index(b) for a, b, yes in answers)  # earlier, not an ancestor


def test_manifests_listed_per_folder_are_those_of_the_whole_tree(tmp_path: Path) -> None:
    """Two revisions sharing most folders, requirements files by name and by folder, node_modules
    left out: listed from the folder cache, the same manifests and dependencies as a fresh walk."""
    r = HarvestRepo(tmp_path / "repo")
    files = {
        "requirements.txt": "attrs==23.1.0\n",
        "requirements/dev.txt": "pytest==8.0.0\n",
        "tools/notes.txt": "not a manifest\n",
        "web/package.json": '{"dependencies": {"left-pad": "1.3.0"}}',
        "web/node_modules/x/package.json": '{"dependencies": {"ignored": "1.0.0"}}',
        "svc/pyproject.toml": '[project]\nname = "svc"\ndependencies = ["httpx==0.27.0"]\n',
    }
    first = r.commit("manifests", dict(files))
    second = r.commit("bump", {"svc/pyproject.toml": files["svc/pyproject.toml"].replace("0.27.0", "0.28.1")})
    repo = pygit2.Repository(str(r.path))

    def fresh(tree: pygit2.Tree, prefix: str = "") -> list[str]:  # the listing before the cache
        out = []
        for entry in tree:
            path = prefix + (entry.name or "")
            if isinstance(entry, pygit2.Tree):
                if entry.name not in ("node_modules", ".git"):
                    out += fresh(entry, path + "/")
            elif entry.name in ("requirements.txt", "package.json", "pyproject.toml") or path.startswith(
                "requirements/"
            ):
                out.append(path)
        return sorted(out)

    for sha in (first, second, first):
        tree = repo[sha].peel(pygit2.Commit).tree
        assert sorted(p for p, _ in _manifest_blobs(tree)) == fresh(tree)
    names = {(d.name, d.locked or d.declared) for d in dependencies(repo[second].peel(pygit2.Commit))}
    assert {("attrs", "23.1.0"), ("pytest", "8.0.0"), ("left-pad", "1.3.0"), ("httpx", "==0.28.1")} <= names
    assert not any(n == "ignored" for n, _ in names)


def _moves(versions: tuple[dict, dict, set]) -> list[tuple[tuple[str, str], str]]:  # type: ignore[type-arg]
    old, new, direct = versions
    return sorted((k, v) for k, (v, _) in new.items() if k in direct and old.get(k, (None,))[0] != v)


def test_the_dependencies_a_change_moves_from_the_files_it_touched_are_those_of_whole_scans(tmp_path: Path) -> None:
    """A lockfile bump moving a crate an untouched manifest declares, a manifest edit, one that moves
    nothing, a manifest naming its crate with an escape (read whatever it holds): the moves
    read from the touched files and the files that may name what they change are the whole scans'."""
    from comind.deps import moved
    from comind.harvest.approach import approach

    r = HarvestRepo(tmp_path / "repo")

    def lock(**versions: str) -> str:
        packages = "".join(
            f'[[package]]\nname = "{n}"\nversion = "{v}"\nsource = "registry+x"\n\n' for n, v in versions.items()
        )
        return f"version = 3\n\n{packages}"

    r.commit(
        "crates",
        {
            "Cargo.toml": '[workspace]\nmembers = ["a", "b"]\n',
            "Cargo.lock": lock(serde="1.0.1", rand="0.8.1", log="0.4.1"),
            "a/Cargo.toml": '[package]\nname = "a"\n[dependencies]\nserde = "1"\n',
            "b/Cargo.toml": '[package]\nname = "b"\n[dependencies]\nrand = "0.8"\n"\\u006cog" = "0.4"\n',
            "c/Cargo.toml": '[package]\nname = "c"\ndescription = "Größe"\n[dependencies]\nserde = "1"\n',
            "web/package.json": '{"dependencies": {"left-pad": "1.3.0", "is-odd": "3.0.1"}}',
        },
    )
    commits = [
        r.commit("bump serde and log", {"Cargo.lock": lock(serde="1.0.2", rand="0.8.1", log="0.4.2")}),
        r.commit(
            "pin rand",
            {
                "b/Cargo.toml": '[package]\nname = "b"\n[dependencies]\nrand = "=0.8.5"\n"\\u006cog" = "0.4"\n',
                "Cargo.lock": lock(serde="1.0.2", rand="0.8.5", log="0.4.2"),
            },
        ),
        r.commit("describe a", {"a/Cargo.toml": '[package]\nname = "a"\nversion = "2"\n[dependencies]\nserde = "1"\n'}),
        r.commit("bump left-pad", {"web/package.json": '{"dependencies": {"left-pad": "1.3.1", "is-odd": "3.0.1"}}'}),
    ]
    repo = pygit2.Repository(str(r.path))
    found = []
    for sha in commits:
        change = approach(repo, sha)
        assert change.base is not None
        before, after = repo[change.base].peel(pygit2.Tree), repo[sha].peel(pygit2.Tree)
        paths = [p for f in change.files for p in (f.path, f.old_path) if p]
        assert _moves(moved(before, after, paths)) == _moves(moved(before, after))
        found.append(_moves(moved(before, after, paths)))
    assert found == [
        [(("cargo", "log"), "0.4.2"), (("cargo", "serde"), "1.0.2")],  # declared where the change is not
        [(("cargo", "rand"), "0.8.5")],
        [],
        [(("npm", "left-pad"), "1.3.1")],
    ]


def test_a_change_is_read_once_per_harvest(tmp_path: Path) -> None:
    r = _history(tmp_path)
    ctx = HarvestContext(Workspace(r.path), pygit2.Repository(str(r.path)), r.head())
    change = r.git("rev-parse", "HEAD~2^1").strip()
    first = ctx.approach(change)
    assert first is not None and ctx.approach(change) is first
    assert ctx.approach("0" * 40) is None and ctx.approach("0" * 40) is None


def test_drop_derived_leaves_the_ids_kept_unread(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "cache"))
    records = [
        new_record(
            "question",
            title=f"q{i}",
            anchors=[{"scope": "repo", "raw": "repo:"}],
            fields={"question": f"q{i}?"},
            provenance={"actor": "p-1", "author_kind": "human", "source": "cli"},
            created_at="2026-01-01T00:00:00Z",
        )
        for i in range(3)
    ]
    store.put_derived(records, replace=True)
    keep = {records[0].id}
    assert store.drop_derived(lambda r: r.id in keep, {records[0].id, records[1].id}) == 1  # only q2 read
    left = {r.id for r in store.read(warn=False).records.values()}
    assert left == {records[0].id, records[1].id}
    assert store.drop_derived(lambda r: False, left) == 0  # every id kept: nothing read, nothing gone


def test_a_first_harvest_still_drops_what_it_did_not_make(tmp_path: Path) -> None:
    r = _history(tmp_path)
    ws = Workspace(r.path)
    stray = new_record(
        "attempt",
        title="left over by an older harvester",
        anchors=[{"scope": "repo", "raw": "repo:"}],
        evidence=[{"type": "commit", "ref": r.head(), "role": "revert"}],
        fields={"approach": "x", "outcome": "reverted"},
        provenance={
            "actor": "p-1",
            "author_kind": "harvested",
            "source": "git",
            "harvester": {"name": "reverts", "version": "0"},
        },
        created_at="2026-01-01T00:00:00Z",
    )
    ws.harvest_store.put_derived([stray], replace=True)
    result = harvest(ws)
    ids = {rec.id for rec in ws.harvest_store.read(warn=False).records.values()}
    assert stray.id not in ids and result.records == len(ids) > 0


def test_only_the_definitions_anchored_to_are_fingerprinted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to six methods of one file is anchored to the first four of them: only those are
    read token by token, and their fingerprints are those of the whole file's walk."""
    from comind.languages import _base, parse_file

    def source(value: int) -> str:
        return "class K:\n" + "".join(f"    def m{i}(self):\n        return {value}\n" for i in range(6))

    r = HarvestRepo(tmp_path / "repo")
    r.commit("root", {"a.py": source(1)})
    sha = r.commit("Change every method", {"a.py": source(2)})
    repo = pygit2.Repository(str(r.path))
    ctx = HarvestContext(Workspace(r.path), repo, r.head())
    change = ctx.approach(sha)
    assert change is not None
    walks: list[bool] = []
    real = _base.Language._walk

    def spy(self: _base.Language, *args: Any, **kwargs: Any) -> None:
        walks.append(kwargs.get("notes", True))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_base.Language, "_walk", spy)
    anchors = ctx.anchors(change, change.base)
    assert [a["symbol"] for a in anchors] == ["K.m0", "K.m1", "K.m2", "K.m3"]
    assert walks.count(False) == 4  # one walk of each anchored definition's tokens, no more
    full = {d.qualname: d for d in parse_file("a.py", source(1).encode()).definitions}
    assert [(a["sig_hash"], a["body_hash"], a["shape_hash"]) for a in anchors] == [
        (full[q].sig_hash, full[q].body_hash, full[q].shape_hash) for q in ("K.m0", "K.m1", "K.m2", "K.m3")
    ]


class _CountedSlices(str):
    """A subject that counts the copies taken of its text."""

    copies = 0

    def __getitem__(self, key: Any) -> str:
        if isinstance(key, slice):
            _CountedSlices.copies += 1
        return str.__getitem__(self, key)


def test_a_quote_repeated_in_a_long_subject_is_looked_at_once() -> None:
    """Whether an unresolved revert's quote is a word of its subject was asked of each occurrence of
    the quote by copying the text before it: quadratic on a long subject (0.35 s at 200k characters,
    1.8 s at 400k). One look finds the first quote that opens it."""
    from comind.harvest.reverts import _quotes_a_part

    subject = _CountedSlices('Revert "a"' + " a" * 5000 + " builds")
    _CountedSlices.copies = 0
    assert _quotes_a_part(subject, "a")
    assert _CountedSlices.copies <= 2
