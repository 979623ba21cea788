"""The git plumbing checked against libgit2 itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.git import changed_paths

# A tree as nested dicts: a name holds a file (its mode and content) or another tree.
_MODES = (0o100644, 0o100755, 0o120000, 0o160000)
_files = st.tuples(st.sampled_from(_MODES), st.sampled_from(["a", "b"]))
_trees = st.recursive(
    _files,
    lambda inner: st.dictionaries(st.sampled_from(["x", "y", "x.y", "x-y"]), inner, max_size=3),
    max_leaves=8,
)


def _write(repo: pygit2.Repository, tree: object) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    assert isinstance(tree, dict)
    for name, value in tree.items():
        if isinstance(value, dict):
            builder.insert(name, _write(repo, value), pygit2.enums.FileMode.TREE)
        else:
            mode, content = value
            submodule = mode == 0o160000  # a commit the repository need not hold
            oid = pygit2.Oid(hex=content.encode().hex().ljust(40, "0")) if submodule else repo.create_blob(content)
            builder.insert(name, oid, mode)
    return builder.write()


def _commit(repo: pygit2.Repository, tree: dict[str, object]) -> str:
    sig = pygit2.Signature("t", "t@example.com", 0, 0)
    return str(repo.create_commit(None, sig, sig, "c", _write(repo, tree), []))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["x", "y", "z"]), _trees, max_size=3), st.data())
def test_paths_changed_without_renames_are_libgit2_s(before: dict[str, object], data: st.DataObject) -> None:
    """Read only where the trees differ, the changed paths are libgit2's diff of the two trees:
    every kind of file, a file turned folder or link or submodule, a mode changed."""
    after = data.draw(st.one_of(st.just(before), st.dictionaries(st.sampled_from(["x", "y", "z"]), _trees, max_size=3)))
    with tempfile.TemporaryDirectory() as tmp:
        repo = pygit2.init_repository(str(Path(tmp) / "r"), bare=True)
        base, head = _commit(repo, before), _commit(repo, after)
        diff = repo[base].peel(pygit2.Commit).tree.diff_to_tree(repo[head].peel(pygit2.Commit).tree)
        statuses = [(d.status_char(), d.old_file.path, d.new_file.path) for d in diff.deltas]
        expected = [(old, None, "D") if s == "D" else (new, old, s) for s, old, new in statuses]
        assert changed_paths(repo, base, head, renames=False) == expected


def test_error_line_is_one_line_naming_the_missing_object_first() -> None:
    from comind.git import error_line

    fetch = (
        "fatal: '/srv/origin' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n"
        "Please make sure you have the correct access rights\nand the repository exists.\n"
        f"fatal: could not fetch {'e0' * 20} from promisor remote\n"
    )
    assert error_line(fetch) == (
        f"could not fetch {'e0' * 20} from promisor remote ('/srv/origin' does not appear to be a git repository)"
    )
    damaged = f"error: invalid object 100644 {'ab' * 20} for 'a.py'\nfatal: git-write-tree: error building trees\n"
    assert error_line(damaged) == f"invalid object 100644 {'ab' * 20} for 'a.py'"
    assert error_line("fatal: ambiguous argument 'x': unknown revision\nUse '--' to separate paths\n") == (
        "ambiguous argument 'x': unknown revision"
    )
    assert error_line("something odd\nmore\n") == "something odd" and error_line("\n") == ""
