"""Anchors against the code: resolution when a record is written, re-anchoring and drift later.

Resolution fills an anchor with the commit and the fingerprints of what it names. Re-anchoring is
derived, never written: a symbol is followed through file renames (git rename detection), to
another file (same body hash, else same shape hash, else moved and edited in the landing that took
it out) and through a rename in place (same file, same shape hash). Several equal candidates are
never guessed between. The verdict of a record is what its anchors say about the code now:
orphaned, stale or fine, always with a reason.

A warm `why` re-anchors from cached verdicts: the parsers, graph and dependency readers are
imported inside the functions that need them (tests/e2e/test_cli.py guards the warm path).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from comind.anchors import AnchorError, format_anchor
from comind.git import all_paths, blob_id, is_dir, tree_entry
from comind.records import Record, quoted
from comind.sanitize import clean_text
from comind.status import CodeVerdict

if TYPE_CHECKING:
    import pygit2

    from comind.codeindex import CodeIndex, Snapshot
    from comind.languages import Definition

DEFAULT_THRESHOLD = 0.6


class Location(NamedTuple):
    """Where an anchored symbol or file is at a target revision."""

    state: str  # found | gone | ambiguous | unverifiable
    path: str | None = None
    definition: Definition | None = None
    how: str = ""  # "", "file renamed", "moved", "renamed in place", "moved and renamed"
    candidates: tuple[str, ...] = ()
    # gone: the landing that deleted its file (path None), or took the symbol out of it (path: the file), if known
    deleted_in: str | None = None


def short(commit: str | None) -> str:
    return (commit or "?")[:10]


def _percent(share: float) -> str:
    """A share as whole percent, rounded down: a body that changed is never "100% similar", nor one
    below the threshold shown at it."""
    return f"{int(share * 100 + 1e-9)}%"


# -- resolution ------------------------------------------------------------------------------


FILE_RENAMED = "file renamed"  # a `Location.how`; its note reads "<name> file renamed: now <name there>"
_RENAMED_NOTE = re.compile(
    rf"(?P<old>[^:]+?)(?:::(?P<symbol>.+?))? {FILE_RENAMED}: now (?P<new>[^:]+?)(?:::(?P=symbol))?"
)


def moved_note(name: str, how: str, now: str) -> str:
    """A verdict's note that the anchor written `name` was followed (`Location.how`) to `now`."""
    return f"{name} {how}: now {now}"


_MOVED_HOWS = (FILE_RENAMED, "moved", "renamed in place", "moved and renamed", "folder moved")


def moved_to(name: str, notes: Iterable[str]) -> str | None:
    """Where a verdict's notes (`moved_note`) say the anchor written `name` is now, or None when it
    was not followed elsewhere: a listing names a record by its code as the status found it."""
    for note in notes:
        for how in _MOVED_HOWS:
            if note.startswith(prefix := f"{name} {how}: now "):
                return note[len(prefix) :]
    return None


def file_moves(notes: Iterable[str]) -> tuple[list[str], list[str]]:
    """(one line per file renamed, `a.rs → crates/a.rs (4 symbols)`, the other notes): a listing says
    a move once, not once per symbol of the file (`show` keeps every note, `--json` too)."""
    moved: dict[tuple[str, str], int] = {}
    rest: list[str] = []
    for note in notes:
        if m := _RENAMED_NOTE.fullmatch(note):
            key = (m["old"], m["new"])
            moved[key] = moved.get(key, 0) + (1 if m["symbol"] else 0)
        else:
            rest.append(note)
    counted = {key: f" ({n} symbol{'s' * (n != 1)})" if n else "" for key, n in moved.items()}
    return [f"{FILE_RENAMED}: {old} → {new}{count}" for (old, new), count in counted.items()], rest


def resolve_anchor(index: CodeIndex, anchor: Mapping[str, Any], rev: str = "HEAD") -> dict[str, Any]:
    """The anchor with commit, span and fingerprints at `rev`; AnchorError naming what is wrong."""
    commit = index.resolve(rev)
    out = dict(anchor) | {"commit": str(commit.id)}
    scope = anchor["scope"]
    if scope == "repo":
        return out
    if scope == "dependency":
        return out | _resolve_dependency(index, anchor, rev)
    if scope == "module":
        from comind.graph import build_graph

        snapshot = index.snapshot(rev)
        graph = build_graph(snapshot)
        path = graph.path_of(anchor["module"])
        if path is None:
            modules = sorted({m for p in snapshot.files if (m := graph.module_of(p))})
            raise AnchorError(
                f"anchor {anchor['raw']!r}: no module {anchor['module']!r} at {short(out['commit'])}"
                + _nearest(anchor["module"], modules)
            )
        return out | {"path": path}
    path = anchor["path"]
    tree = commit.tree
    if path.endswith("/"):
        if not is_dir(tree, path.rstrip("/")):
            raise AnchorError(f"anchor {anchor['raw']!r}: no folder {path} at {short(out['commit'])}")
        return out
    blob = blob_id(tree, path)
    if blob is None:
        where = f"anchor {anchor['raw']!r}: no file {path} at {short(out['commit'])}"
        if scope == "file" and "line" not in anchor and is_dir(tree, path):  # `app` for `app/`, as `why` says
            raise AnchorError(f"{where}: a folder, written {path}/")
        raise AnchorError(where + nearest_file(path, all_paths(tree), anchor.get("symbol")))
    out["blob"] = blob
    if scope == "file" and "line" not in anchor:
        return out
    data = _blob_data(index, out["commit"], path) or b""
    if "line" in anchor and (past := past_the_end(anchor, path, data)):
        raise AnchorError(f"anchor {anchor['raw']!r}: {past} at {short(out['commit'])}")
    from comind.languages import language_for_path, parse_file

    if language_for_path(path) is None:
        if scope == "symbol":
            raise AnchorError(
                f"anchor {anchor['raw']!r}: {path} is not a supported source file; anchor the file or a line instead"
            )
        return out
    definitions = parse_file(path, data).definitions
    if scope == "symbol":
        found = next((d for d in definitions if d.qualname == anchor["symbol"]), None)
        if found is None:
            raise AnchorError(
                f"anchor {anchor['raw']!r}: no symbol {anchor['symbol']!r} in {path}"
                + _nearest(anchor["symbol"], [d.qualname for d in definitions])
            )
        return out | fingerprint(found)
    line = int(anchor["line"])
    inner = innermost(definitions, line)
    if inner is None:
        return out  # a line outside any definition stays a file anchor with its line
    return out | {"scope": "symbol", "symbol": inner.qualname} | fingerprint(inner)


def past_the_end(anchor: Mapping[str, Any], path: str, data: bytes) -> str | None:
    """ "app/perm.py has 9 lines" when the anchor's line (or range) runs past the file's end."""
    count = data.count(b"\n") + (not data.endswith(b"\n") if data else 0)
    if int(anchor.get("end_line") or anchor["line"]) <= count:
        return None
    return f"{path} has {count} line{'s' * (count != 1)}"


def fingerprint(d: Definition) -> dict[str, Any]:
    return {
        "kind": d.kind,
        "span": [d.start_line, d.end_line],
        "sig_hash": d.sig_hash,
        "body_hash": d.body_hash,
        "shape_hash": d.shape_hash,
    }


def innermost(definitions: Iterable[Definition], line: int, last: int | None = None) -> Definition | None:
    """The most deeply nested definition holding `line` (through `last`, when given)."""
    last = line if last is None else last
    best = None
    for d in definitions:
        if (
            d.start_line <= line
            and last <= d.end_line
            and (best is None or (d.start_line, -d.end_line) > (best.start_line, -best.end_line))
        ):
            best = d
    return best


def _resolve_dependency(index: CodeIndex, anchor: Mapping[str, Any], rev: str) -> dict[str, Any]:
    from comind.deps import dependencies, normalize_name, version_in_range

    dep = dict(anchor["dep"])
    name = normalize_name(dep["ecosystem"], dep["package"])
    found = [d for d in dependencies(index.snapshot(rev)) if d.ecosystem == dep["ecosystem"] and d.name == name]
    locked = next((d.locked for d in found if d.locked), None) or next((d.declared for d in found if d.declared), None)
    if dep.get("version_range") and locked and locked[0].isdigit():
        try:
            version_in_range(dep["ecosystem"], locked, dep["version_range"])
        except ValueError as exc:
            raise AnchorError(f"anchor {anchor['raw']!r}: bad version range: {exc}") from None
    if locked:
        dep["at_commit"] = locked
    return {"dep": dep}


def _nearest(name: str, names: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(set(names)), n=5, cutoff=0.5)
    return f" (nearest: {', '.join(close)})" if close else ""


_WRITTEN = "a symbol is written PATH::Qual.name"
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def nearest_file(path: str, paths: Iterable[str], symbol: str | None = None) -> str:
    """The files named like `path`, or how a symbol is written when `path` reads as one: a file and
    a name after one colon (`app/cart.py:Cart.total`, the file's own name then; `app/cart.py:Cart::total`
    read as the file `app/cart.py:Cart` and the `symbol` `total`: `app/cart.py::Cart.total`, the
    member kept), or a bare name (`Cart.total`) no file's suffix ends like, for which files named
    alike would only mislead."""
    files = set(paths)
    file, colon, name = path.rpartition(":")
    if colon and file in files and _NAME.fullmatch(name):
        member = "." + symbol.replace("::", ".") if symbol else ""
        return f" ({_WRITTEN}: {file}::{name}{member})"
    suffix = posixpath.splitext(path)[1]
    bare = "/" not in path and _NAME.fullmatch(path) is not None
    if bare and suffix and not any(f.endswith(suffix) for f in files):
        return f" ({_WRITTEN}, e.g. app/cart.py::Cart.total)"
    close = _nearest(path, files)
    return close or ("" if "/" in path else f" ({_WRITTEN}, e.g. app/cart.py::Cart.total)")


# -- re-anchoring ----------------------------------------------------------------------------


class Anchorer:
    """Follows anchors from the commit they were made at to a target revision."""

    def __init__(self, index: CodeIndex, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.index = index
        self.threshold = threshold
        self._renames: dict[tuple[str, str, bool], tuple[dict[str, str], set[str]]] = {}
        self._moves: dict[tuple[str, str], _Moves] = {}
        self._chains: dict[str, tuple[list[str], dict[str, int]]] = {}
        self._merges: dict[str, dict[str, tuple[int, str]]] = {}
        self._tokens: dict[tuple[str, str, str], list[str] | None] = {}
        self._deps: dict[str, list[Any]] = {}
        self._located: dict[str, Location] = {}
        self._edits: dict[tuple[str, str, str], list[tuple[str, bytes]]] = {}  # `_edited`, oldest first
        self._edits_size = 0
        self._pending: dict[str, str] = {}  # locations not yet written to the index cache
        self._facts: dict[str, dict[str, str]] = {"defines": {}, "tokens": {}}  # `_defines`, `tokens_of`: likewise
        self._unread = index.unread

    def final(self, target: Snapshot | None = None) -> bool:
        """Whether what this anchorer found so far (at `target`) may be cached: no blob it read was
        missing (a partial clone's promisor away) and `target` lacks none. Else an answer may say a file
        is gone or a body could not be compared only until a fetch brings the blob."""
        return self.index.unread == self._unread and (target is None or not target.incomplete)

    def _why_missing(self) -> str:
        """What to do about a commit this clone lacks: a shallow clone lacks history; a full one, a
        commit written elsewhere (an imported ledger's, a branch never fetched)."""
        if self.index.repo.is_shallow:
            return "a shallow clone: fetch the full history, e.g. actions/checkout with fetch-depth: 0"
        return "written in another clone, or on a branch this one never fetched: fetch it"

    def has_commit(self, commit: str) -> bool:
        return self.index.has_commit(commit)

    def prefetch(self, records: Iterable[Record]) -> int:
        """In a partial clone, fetch in one request the anchored files' blobs as they were anchored,
        which comparing a body reads (one request per blob would be a round trip each)."""
        from comind.promisor import fetch_missing, promisor_remote

        if promisor_remote(self.index.repo) is None:
            return 0
        entries = (
            tree_entry(self.index.repo, anchor["commit"], anchor["path"])
            for record in records
            for anchor in record.anchors
            if anchor.get("commit") and anchor.get("path") and anchor.get("scope") == "symbol"
        )
        return fetch_missing(self.index.repo, [entry.id for entry in entries if entry is not None])

    def renames(self, old: str, new: str, far: bool = False) -> tuple[dict[str, str], set[str]]:
        """(old path -> new path for renamed files, deleted paths) between two commits; between
        trees `far` apart, within `RENAME_LIMIT`.

        Rename detection over years of history takes seconds, so the answer is kept in the index
        cache per pair of trees."""
        key = (old, new, far)
        if key not in self._renames:
            old_tree, new_tree = self.index.commit_info(old)[1], self.index.commit_info(new)[1]
            memo_key, kind = f"{old_tree}:{new_tree}", "renames-far" if far else "renames"
            cached = self.index.memo_get(kind, [memo_key]).get(memo_key)
            if cached is not None:
                renamed, deleted = json.loads(cached)
                self._renames[key] = (dict(renamed), set(deleted))
            else:
                moves = self._moves_in(old, new)  # (memoised: not diffed twice)
                limit = RENAME_LIMIT if far else None
                self._renames[key] = _renames(self.index, old_tree, new_tree, limit, moves)
                renamed, deleted = self._renames[key]
                if self.final():
                    self.index.memo_put(kind, {memo_key: json.dumps([renamed, sorted(deleted)])})
        return self._renames[key]

    def rename_of(self, path: str, old: str, new: str, far: bool = False) -> str | None:
        """Where a path `new` lacks went between two commits (None: deleted), in git's order since
        2.33: an added file with the same content; else, when the path's file name is unique among
        the deleted and among the added files, that added file if it is at least half the same; else
        full rename detection. One landing that moves 7,000 files (`move cli/tests/ -> tests/`)
        costs 5 s of full detection and 20 ms of the first steps. A file the landing edited in a
        folder it moved is looked for where that folder's unchanged files went.

        Between trees `far` apart (a branch forked long ago), full detection is skipped past
        `RENAME_LIMIT`, as git's diff does, and the few files of the path's name are compared."""
        exact, deleted, added, added_set, folders = self._moves_in(old, new)
        if path in exact:
            return str(exact[path])
        if path not in deleted:
            return None
        name = path.rsplit("/", 1)[-1]
        same = [p for p in added if p.rsplit("/", 1)[-1] == name]
        candidates = same if len(same) == 1 and sum(1 for p in deleted if p.rsplit("/", 1)[-1] == name) == 1 else []
        # where the folder's unchanged files went (`cli/tests/` -> `tests/`), the same name
        candidates += [c for c in _in_moved_folder(path, folders) if c in added_set and c not in candidates]
        if found := self._similar(path, old, new, candidates):
            return found
        if found := self.renames(old, new, far)[0].get(path):
            return found
        if far and len(deleted) * len(added) > RENAME_LIMIT**2 and len(same) <= SAME_NAMES:
            # no similarity computed: the most similar file of the same name, as a person would look
            found = self._similar(path, old, new, same, best=True)
        return found or _converted(path, deleted, added)

    def _moves_in(self, old: str, new: str) -> _Moves:
        """The files moved unchanged, deleted and added between two commits (one landing's)."""
        key = (old, new)
        if key not in self._moves:
            old_tree, new_tree = self.index.commit_info(old)[1], self.index.commit_info(new)[1]
            memo_key = f"{old_tree}:{new_tree}"
            cached = self.index.memo_get("moves-2", [memo_key]).get(memo_key)
            if cached is None:
                cached = json.dumps(_exact_moves(self.index, old_tree, new_tree))
                self.index.memo_put("moves-2", {memo_key: cached})
            exact, deleted, added = json.loads(cached)
            self._moves[key] = _Moves(exact, set(deleted), added, set(added), _moved_folders(exact))
        return self._moves[key]

    def _similar(self, path: str, old: str, new: str, candidates: list[str], best: bool = False) -> str | None:
        """The first of `candidates` at `new` at least half the same as `path` at `old`; with `best`,
        the most similar, of the blobs the clone has (no fetch for each of a guess's candidates)."""
        before = _blob_data(self.index, old, path) if candidates else None
        scored = []
        for candidate in candidates if before is not None else ():
            after = _blob_data(self.index, new, candidate, fetch=not best)
            score = _similarity(before, after) if before is not None and after is not None else 0.0
            if score >= 0.5 and not best:
                return candidate
            scored.append((score, candidate))
        score, found = max(scored, default=(0.0, None))
        return found if score >= 0.5 else None

    def follow_path(self, path: str, old: str, new: str) -> tuple[str | None, bool, str | None]:
        """(the path at `new`, whether it was renamed, the landing that deleted it); the path is None
        when the file is gone, and the landing None when it is there or not known (gone between two
        trees off the chain).

        Followed the way `git log --follow` reads history, forwards: along `new`'s first-parent
        chain a binary search finds the landing where the path goes, and renames are detected in
        that landing's own diff. Detecting them between two trees years apart instead pairs
        thousands of deleted files with thousands of added ones (2-12 s per pair on a 17,000-commit history), and
        misses a file that changed a little at a time. A commit off the chain (on a merged branch)
        is followed along that branch to the merge that landed it first, through the merge, then on
        the chain; one that `new` does not contain, directly.
        Limit: a file deleted and later restored may be found gone where it was deleted, when a probe
        of the search falls inside that gap (a few landings of thousands, at most ~15 probes).
        """
        if old == new:
            return path, False, None
        if self._has_path(new, path):
            return path, False, None  # still there: a rename only pairs a deleted path with an added one
        chain, position = self._chain(new)
        start = position.get(old)
        renamed = False
        if start is None:
            landed = self._merged(new).get(old)
            if landed is None:
                return *self._follow_between(path, old, new), None
            start, parent = landed
            followed, renamed, deleted_in = self.follow_path(path, old, parent)  # along the merged branch
            if followed is not None:
                followed, through = self._follow_between(followed, parent, chain[start])  # the merge
                renamed, deleted_in = renamed or through, None if followed else chain[start]
            if followed is None:
                return None, False, deleted_in
            path = followed
        while self._has_path(chain[start], path):
            if self._has_path(chain[-1], path):
                return path, renamed, None
            gone = _first_without(chain, start, partial(self._has_path, path=path))
            moved = self.rename_of(path, chain[gone - 1], chain[gone])
            if moved is None:
                return None, False, chain[gone]
            path, renamed, start = moved, True, gone
        return None, False, None

    def follow_folder(self, path: str, old: str, new: str) -> tuple[str | None, str | None]:
        """(the folder `path` is at `new`, the landing that took it away): git records no folder
        renames, so a folder gone from a landing is followed where its unchanged files went in it
        (`app/` -> `src/app/`), along `new`'s first-parent chain as a file is. A folder anchored off
        that chain is followed from the merge that landed it."""
        folder = path.rstrip("/")
        if self._has_folder(new, folder):
            return path, None
        chain, position = self._chain(new)
        start = position.get(old)
        if start is None:
            landed = self._merged(new).get(old)
            if landed is None:
                return None, None
            start = landed[0]
        while self._has_folder(chain[start], folder):
            if self._has_folder(chain[-1], folder):
                return folder + "/", None
            gone = _first_without(chain, start, partial(self._has_folder, path=folder))
            moved = self._moves_in(chain[gone - 1], chain[gone]).folders.get(folder)
            if moved is None or not self._has_folder(chain[gone], moved):
                return None, chain[gone]
            folder, start = moved, gone
        return None, None

    def _follow_between(self, path: str, old: str, new: str) -> tuple[str | None, bool]:
        """follow_path by the renames between the two trees, as git finds them (`rename_of`)."""
        if self._has_path(new, path) or not self._has_path(old, path):
            return path, False  # there, or not known: neither tree has it
        moved = self.rename_of(path, old, new, far=True)
        return moved, moved is not None

    def _has_folder(self, commit: str, path: str) -> bool:
        return is_dir(cast("pygit2.Tree", self.index.repo[self.index.commit_info(commit)[1]]), path.rstrip("/"))

    def _has_path(self, commit: str, path: str) -> bool:
        return blob_id(cast("pygit2.Tree", self.index.repo[self.index.commit_info(commit)[1]]), path) is not None

    def _chain(self, tip: str) -> tuple[list[str], dict[str, int]]:
        """The first-parent chain that ends at `tip`, oldest first, and each commit's position in it."""
        if tip not in self._chains:
            import pygit2

            walker = self.index.repo.walk(self.index.commit_id(tip), pygit2.enums.SortMode.NONE)
            walker.simplify_first_parent()
            chain = [str(c.id) for c in walker][::-1]
            self._chains[tip] = chain, {sha: i for i, sha in enumerate(chain)}
        return self._chains[tip]

    def _merged(self, tip: str) -> dict[str, tuple[int, str]]:
        """Each commit `tip` contains off its first-parent chain -> (the position of the first merge of
        the chain that brought it in, the parent of that merge whose history holds it)."""
        if tip not in self._merges:
            repo = self.index.repo
            chain = self._chain(tip)[0]
            landed: dict[str, tuple[int, str]] = {}
            # Oldest merge first, each commit once: what the chain held before a merge (its first
            # parent's history) is the chain so far and what earlier merges brought, all `seen`.
            # (A walk per merge that hides its first parent read 17,000 commits in 3.4 s.)
            seen = set(chain)
            for i, sha in enumerate(chain):
                for parent in _parents(repo, sha)[1:]:
                    todo = [str(parent)]
                    while todo:
                        commit = todo.pop()
                        if commit not in seen:
                            seen.add(commit)
                            landed[commit] = (i, str(parent))
                            todo += map(str, _parents(repo, commit))
            self._merges[tip] = landed
        return self._merges[tip]

    def locate(self, anchor: Mapping[str, Any], target: Snapshot) -> Location:
        """Where the anchor is at `target`; kept in the index cache (a function of the anchor's
        commit, path and fingerprints and of the target commit)."""
        commit = anchor.get("commit")
        key = self._location_key(anchor, target)
        if not commit or key is None:
            return Location("unverifiable")
        if key in self._located:
            return self._located[key]
        if key in self._pending:
            value: str | None = self._pending[key]
        else:
            value = self.index.memo_get("locate", [key]).get(key)
        if value is not None:
            state, path, position, how, candidates, _qualname, deleted_in = json.loads(value)
            definition = target.definitions(path)[position] if path is not None and position is not None else None
            where = Location(state, path, definition, how, tuple(candidates), deleted_in)
        else:
            where = self._locate(anchor, commit, target)
            # (a deepened clone may have the commit later, a fetch the blob)
            if where.state != "unverifiable" and self.final(target):
                position = (
                    target.definitions(where.path).index(where.definition)
                    if where.definition is not None and where.path is not None
                    else None
                )
                self._pending[key] = json.dumps(
                    [
                        where.state,
                        where.path,
                        position,
                        where.how,
                        list(where.candidates),
                        where.definition.qualname if where.definition else None,
                        where.deleted_in,
                    ]
                )
                if len(self._pending) >= 256:
                    self.flush()
        self._located[key] = where
        return where

    def where(self, anchor: Mapping[str, Any], target: Snapshot) -> tuple[str, str | None, str | None]:
        """(state, path, qualname) of :meth:`locate`, read from the index cache without decoding
        any symbols when it is there."""
        key = self._location_key(anchor, target)
        if key is not None and key not in self._located:
            value = self._pending.get(key) or self.index.memo_get("locate", [key]).get(key)
            if value is not None:
                state, path, _position, _how, _candidates, qualname, _deleted_in = json.loads(value)
                return state, path, qualname
        where = self.locate(anchor, target)
        return where.state, where.path, where.definition.qualname if where.definition else None

    @staticmethod
    def _location_key(anchor: Mapping[str, Any], target: Snapshot) -> str | None:
        if not anchor.get("commit"):
            return None
        # "follow-N": answers of follow_path commit by commit, N the rules and layout of the answer
        # (3: the landing that deleted a file, files converted to another format; 4: or a symbol;
        # 5: trees far apart within git's rename limit, every unchanged move paired; 6: a shape found
        # in another file only under the same name; 7: a body, only under the same last name; 8: a
        # symbol moved to another file and edited in one landing; 9: the landing that took a symbol
        # out of a file renamed since, looked for from the landing that gave the file its last name);
        # keys without it hold whole-tree answers
        return json.dumps(
            [
                "follow-9",
                anchor["commit"],
                anchor.get("path"),
                anchor.get("scope"),
                anchor.get("symbol"),
                anchor.get("body_hash"),
                anchor.get("shape_hash"),
                target.commit,
            ]
        )

    def flush(self) -> None:
        """Write the locations (and the facts they were found from) since the last flush to the
        index cache: one write each, not one per fact (a cold status asks ~1,000 of them)."""
        if self._pending:
            self.index.memo_put("locate", self._pending)
            self._pending = {}
        for kind, facts in self._facts.items():
            self.index.memo_put(kind, facts)
            self._facts[kind] = {}

    def _fact(self, kind: str, key: str) -> str | None:
        """A fact of `kind` found before, in this process or the index cache."""
        found = self._facts[kind].get(key)
        return found if found is not None else self.index.memo_get(kind, [key]).get(key)

    def _remember(self, kind: str, key: str, value: str) -> None:
        self._facts[kind][key] = value
        if len(self._facts[kind]) >= 256:
            self.flush()

    def _locate(self, anchor: Mapping[str, Any], commit: str, target: Snapshot) -> Location:
        if not self.has_commit(commit):
            return Location("unverifiable")
        path, renamed, deleted_in = self.follow_path(anchor["path"], commit, target.commit)
        if anchor.get("scope") != "symbol":
            if path is None:
                return Location("gone", deleted_in=deleted_in)
            return Location("found", path, how=FILE_RENAMED if renamed else "")
        symbol = anchor["symbol"]
        if path is not None and (found := target.find(path, symbol)):
            return Location("found", path, found, FILE_RENAMED if renamed else "")
        # Same file first: a rename in place keeps the body (or at least its shape).
        if path is not None:
            for key in ("body_hash", "shape_hash"):
                same = [d for d in target.definitions(path) if getattr(d, key) == anchor.get(key)]
                if len(same) == 1:
                    return Location("found", path, same[0], "renamed in place")
                if len(same) > 1:
                    return Location("ambiguous", candidates=tuple(f"{path}::{d.qualname}" for d in same))
        for key, lookup in (("body_hash", target.by_body_hash), ("shape_hash", target.by_shape_hash)):
            if not anchor.get(key):
                continue
            elsewhere = lookup(anchor[key])
            # Rule: code found in another file is the same definition only under its own name: the
            # same qualified name for a shape (names left out: `A.__init__` setting three fields is not
            # `B.__init__`), the same last name for a body word for word (`raise NotImplementedError`)
            last = _plain(symbol.rsplit(".", 1)[-1])
            elsewhere = [
                (p, d)
                for p, d in elsewhere
                if (d.qualname == symbol if key == "shape_hash" else _plain(d.qualname.rsplit(".", 1)[-1]) == last)
            ]
            if len(elsewhere) == 1:
                new_path, definition = elsewhere[0]
                how = "moved" if definition.qualname == symbol else "moved and renamed"
                return Location("found", new_path, definition, how)
            if len(elsewhere) > 1:
                return Location("ambiguous", candidates=tuple(f"{p}::{d.qualname}" for p, d in elsewhere[:10]))
        if path is not None:  # its file is there: which landing took the symbol out of it
            if renamed:
                removed_in = self._removed_in_renamed(path, symbol, commit, target.commit)
            else:
                removed_in = self._removed_in(path, symbol, commit, target.commit)
            if removed_in is not None and (went := self._moved_with_edit(anchor, path, removed_in, target)):
                return went
            return Location("gone", path, deleted_in=removed_in)
        if deleted_in is not None and (went := self._moved_with_edit(anchor, anchor["path"], deleted_in, target)):
            return went
        return Location("gone", deleted_in=deleted_in)

    def _moved_with_edit(self, anchor: Mapping[str, Any], path: str, landing: str, target: Snapshot) -> Location | None:
        """Where a symbol went that `landing` took out of `path` (or deleted `path` with it), edited on
        the way, so no hash finds it; then on from there to `target`. None: no sign of a move.

        Rule: the landing itself defines, in another file of the language that it adds or edits and
        that did not define it before, one symbol of the same kind and the same last name, holding
        again the drift threshold's share of its lines (a name alone would pair `A.__init__` with any
        `B.__init__`, or a package's `New` with every other's). One landing, so a namesake written
        later is not taken for it; several are never guessed between. Only a file holding the name
        and those lines is parsed: a cold status of a long history meets landings of hundreds of files."""
        from comind.languages import language_for_path, parse_file, span_of
        from comind.promisor import promisor_remote

        parents = _parents(self.index.repo, landing)
        lang = language_for_path(path)
        if not parents or lang is None or promisor_remote(self.index.repo) is not None:
            return None
        before, symbol, kind = str(parents[0]), anchor["symbol"], anchor.get("kind")
        held = _blob_data(self.index, before, path)
        if held is None:  # (its file renamed before the landing deleted it)
            return None
        last = _plain(symbol.rsplit(".", 1)[-1])
        naming = [(p, data) for p, data in _naming(self._edited(before, landing, lang.name), last) if p != path]
        own = span_of(path, held, symbol) if naming else None
        lines = _lines_of(held, *own) if own is not None else Counter()
        need = self.threshold * sum(lines.values())
        found: list[tuple[str, Definition]] = []
        for other, data in naming:
            text = data.decode("utf-8", errors="replace")  # (decoded as `_lines_of` reads them)
            if not lines or sum(min(n, text.count(line)) for line, n in lines.items()) < need:
                continue  # (the whole file does not hold them: no definition in it does)
            for d in parse_file(other, data).definitions:
                if (kind and d.kind != kind) or _plain(d.qualname.rsplit(".", 1)[-1]) != last:
                    continue
                if sum((lines & _lines_of(data, d.start_line, d.end_line)).values()) >= need and not self._defines(
                    before, other, d.qualname
                ):
                    found.append((other, d))
        if len(found) > 1:
            return Location("ambiguous", candidates=tuple(f"{p}::{d.qualname}" for p, d in found[:10]))
        if not found:
            return None
        other, definition = found[0]
        moved = {"scope": "symbol", "commit": landing, "path": other, "symbol": definition.qualname}
        where = self._locate(moved | fingerprint(definition), landing, target)
        if where.state != "found" or where.definition is None:
            return where
        return where._replace(how="moved" if where.definition.qualname == symbol else "moved and renamed")

    def _edited(self, before: str, landing: str, language: str) -> list[tuple[str, bytes]]:
        """(path, content) of each file of `language` that `landing` adds or edits, read once for all
        the symbols it took away: a landing that rewrites hundreds of files takes dozens of them
        (the last `EDITED_BYTES` of contents read are kept)."""
        key = (before, landing, language)
        files = self._edits.pop(key, None)
        if files is None:
            files = _edited(self.index.repo, before, landing, language)
            self._edits_size += sum(len(data) for _, data in files)
        self._edits[key] = files  # (the most recently asked last)
        while self._edits_size > EDITED_BYTES and len(self._edits) > 1:
            self._edits_size -= sum(len(data) for _, data in self._edits.pop(next(iter(self._edits))))
        return files

    def _removed_in(self, path: str, qualname: str, old: str, new: str) -> str | None:
        """The landing of `new`'s first-parent chain after which `path` no longer defines `qualname`,
        by a binary search from `old` (or the merge that landed it) as for a file: ~15 versions of the
        file parsed, each once (the tokens cache). Not in a partial clone, where each could be a fetch."""
        from comind.promisor import promisor_remote

        if promisor_remote(self.index.repo) is not None:
            return None
        chain, position = self._chain(new)
        start = position.get(old)
        if start is None:  # anchored on a merged branch: from the merge that landed it
            landed = self._merged(new).get(old)
            if landed is None or not self._defines(chain[landed[0]], path, qualname):
                return None
            start = landed[0]
        return chain[_first_without(chain, start, lambda commit: self._defines(commit, path, qualname))]

    def _removed_in_renamed(self, path: str, qualname: str, old: str, new: str) -> str | None:
        """`_removed_in` for a file renamed since `old`: searched from the landing of `new`'s chain
        that gave it its name `path`, if it still defined `qualname` there (a module split into
        several after its rename took its definitions out under that name). None: anchored off
        the chain, or the symbol went before the file took that name."""
        chain, position = self._chain(new)
        start = position.get(old)
        if start is None or self._has_path(chain[start], path):
            return None
        named = chain[_first_without(chain, start, lambda commit: not self._has_path(commit, path))]
        return self._removed_in(path, qualname, named, new) if self._defines(named, path, qualname) else None

    def _defines(self, commit: str, path: str, qualname: str) -> bool:
        """Does `path` define `qualname` at `commit`? Kept in the index cache: the search for where a
        symbol went asks it of a dozen versions of its file, each read only where the name is written."""
        blob = _blob_at(self.index, commit, path)
        if blob is None:
            return False
        key = _symbol_key(blob, path, qualname)
        found = self._fact("defines", key)
        if found is None:
            from comind.languages import defines

            data = _blob_data(self.index, commit, path)
            held = data is not None and defines(path, data, qualname)
            found = "1" if held else ""
            if self.final():
                self._remember("defines", key, found)
        return found == "1"

    def tokens_at(self, commit: str, path: str, qualname: str) -> list[str] | None:
        key = (commit, path, qualname)
        if key not in self._tokens:
            blob = _blob_at(self.index, commit, path)
            self._tokens[key] = (
                None
                if blob is None
                else self.tokens_of(blob, path, qualname, lambda: _blob_data(self.index, commit, path))
            )
        return self._tokens[key]

    def tokens_of(self, blob: str, path: str, qualname: str, data: Callable[[], bytes | None]) -> list[str] | None:
        """The body tokens of ``qualname`` in the blob (parsed as ``path``'s language), kept in the
        index cache: drift compares the anchored body with the current one at every new head, and
        the anchored side never changes."""
        key = _symbol_key(blob, path, qualname)
        found = self._fact("tokens", key)
        if found is not None:
            tokens: list[str] | None = json.loads(found)
            return tokens
        tokens = None
        if (raw := data()) is not None:
            from comind.languages import body_tokens

            tokens = body_tokens(path, raw, qualname)  # read where it is named, and its own subtree
        if self.final():
            self._remember("tokens", key, json.dumps(tokens))
        return tokens

    def dependencies(self, commit: str) -> list[Any]:
        if commit not in self._deps:
            from comind.deps import dependencies

            self._deps[commit] = dependencies(self.index.snapshot(commit))
        return self._deps[commit]

    def baseline(self, anchor: Mapping[str, Any], confirmed_at: str | None) -> dict[str, Any]:
        """The anchor as of its latest confirmation: a `confirms` at commit C resets the hashes to C."""
        if not confirmed_at or confirmed_at == anchor.get("commit") or not self.has_commit(confirmed_at):
            return dict(anchor)
        snapshot = self.index.snapshot(confirmed_at)
        where = self.locate(anchor, snapshot)
        if where.state != "found" or where.path is None:
            return dict(anchor)
        out = dict(anchor) | {"commit": snapshot.commit, "path": where.path}
        if where.definition is not None:
            out |= {"symbol": where.definition.qualname} | fingerprint(where.definition)
        if (entry := snapshot.files.get(where.path)) is not None:
            out["blob"] = entry.blob
        return out

    # -- verdicts ------------------------------------------------------------------------------

    def verdict(
        self, record: Record, target: Snapshot, confirmed_at: str | None = None, verify_evidence: Any = None
    ) -> CodeVerdict:
        """What the record's anchors say about the code at `target`."""
        notes: list[str] = []
        stale: list[str] = []
        gone: dict[tuple[str | None, str], list[tuple[str, str]]] = {}  # subjects gone, by landing
        unverifiable: list[str] = []
        subjects = 0  # code subjects compared
        for raw_anchor in record.anchors:
            anchor = self.baseline(raw_anchor, confirmed_at)
            role = anchor.get("role", "subject")
            name = format_anchor(raw_anchor)
            scope = anchor.get("scope")
            if scope == "dependency":
                self._dependency(record, anchor, target, notes, stale)
                continue
            if scope in ("repo", "module") or "path" not in anchor:
                continue
            if not anchor.get("commit"):
                continue  # stored as written, never resolved: nothing to compare against
            subjects += role == "subject"
            if anchor["path"].endswith("/"):  # a folder: there, moved with its files, or gone
                if not self.has_commit(anchor["commit"]):
                    continue
                folder, deleted_in = self.follow_folder(anchor["path"], anchor["commit"], target.commit)
                if folder == anchor["path"]:
                    continue
                moved = Location("found", folder, how="folder moved")
                where = moved if folder else Location("gone", deleted_in=deleted_in)
            else:
                where = self.locate(anchor, target)
                if where.state == "gone" and (where.deleted_in is None or where.deleted_in in own_commits(record)):
                    where = self._gone_after(record, anchor, where, target)
            since = short(anchor.get("commit"))
            told = told_commit(record, anchor.get("commit"))  # ("since the revert 6f7389e911")
            if where.state == "unverifiable":
                unverifiable.append(f"{name}: commit {since} is not in this clone ({self._why_missing()})")
            elif where.state == "ambiguous":
                stale.append(f"{name}: several candidates, none chosen: {', '.join(where.candidates)}")
            elif where.state == "gone":
                # The landing that deleted it (its file, or it from its file), when known; else when
                # it was anchored.
                how = ("removed" if where.path else "its file deleted") if scope == "symbol" else "deleted"
                if role == "subject":  # said per landing below
                    gone.setdefault((where.deleted_in, told), []).append((name, how))
                else:
                    stale.append(f"{role} anchor {name} is gone ({self._when(how, where.deleted_in, told)})")
            else:
                if where.how:
                    now = f"{where.path}::{where.definition.qualname}" if where.definition else str(where.path)
                    notes.append(moved_note(name, where.how, now))
                self._drift(anchor, where, target, role, name, told, notes, stale)
        verified = bool(verify_evidence and verify_evidence(record))
        orphaned = [self._gone(named, deleted_in, since) for (deleted_in, since), named in gone.items()]
        if gone and sum(map(len, gone.values())) >= subjects:
            return CodeVerdict("orphaned", "; ".join(orphaned), tuple(notes), verified)
        stale = orphaned + stale  # some of its subjects are gone, the others still there: review it
        if stale:
            return CodeVerdict("stale", "; ".join(stale), tuple(notes), verified)
        if unverifiable:
            return CodeVerdict("unverifiable", "; ".join(unverifiable), tuple(notes), verified)
        return CodeVerdict(None, "", tuple(notes), verified)

    def _gone_after(self, record: Record, anchor: Mapping[str, Any], where: Location, target: Snapshot) -> Location:
        """`where`, or, when the landing that took the anchor away is the record's own commit or not
        known (the change an attempt reverted deleted a file its revert brought back, and the search
        for where it went fell between the two, or off the chain), the anchor looked for again from the
        record's commit: its own change tells a reader nothing, the landing that took it later does."""
        later = record.data.get("valid_from")
        if not later or later in (where.deleted_in, anchor.get("commit")) or not self.has_commit(later):
            return where
        try:
            if not self.index.repo.descendant_of(later, where.deleted_in or anchor["commit"]):
                return where
        except (KeyError, ValueError):
            return where
        again = self.locate(dict(anchor) | {"commit": later}, target)
        if again.state == "gone" and (again.deleted_in is None or again.deleted_in in own_commits(record)):
            return where  # not there at the record's commit either: its own change did take it away
        return again

    def _when(self, how: str, deleted_in: str | None, since: str) -> str:
        return self._landing(how, deleted_in) if deleted_in else f"anchored at {since}"

    def _gone(self, named: list[tuple[str, str]], deleted_in: str | None, since: str) -> str:
        """ "a.py no longer exists (deleted in …)"; several subjects one landing took, counted, with the
        landing said once, before their names, so a listing that cuts the line keeps it."""
        if len(named) == 1:
            return f"{named[0][0]} no longer exists ({self._when(named[0][1], deleted_in, since)})"
        hows = {how for _, how in named}
        how = "removed" if hows == {"removed"} else "removed or deleted" if "removed" in hows else "deleted"
        names = ", ".join(name for name, _ in named)
        return f"{len(named)} anchors no longer exist ({self._when(how, deleted_in, since)}): {names}"

    def _landing(self, how: str, commit: str) -> str:
        """ "deleted in 03d3b8a3a1 “Move changes to markdown”"."""
        message = cast("pygit2.Commit", self.index.repo[commit]).message
        subject = clean_text(message.split("\n", 1)[0]).strip()  # before the cut: a cut secret is not found
        if len(subject) > 60:
            subject = subject[:59] + "…"
        return f"{how} in {short(commit)} {quoted(subject)}"

    def _drift(
        self,
        anchor: Mapping[str, Any],
        where: Location,
        target: Snapshot,
        role: str,
        name: str,
        since: str,
        notes: list[str],
        stale: list[str],
    ) -> None:
        if where.definition is None:  # a file anchor: changed or not
            entry = target.files.get(where.path or "")
            blob = entry.blob if entry else _blob_at(self.index, target.commit, where.path or "")
            if role != "subject" and anchor.get("blob") and blob != anchor["blob"]:
                stale.append(f"{role} file {name} changed since {since}")
            return
        d = where.definition
        if d.body_hash == anchor.get("body_hash"):
            if anchor.get("sig_hash") and d.sig_hash != anchor["sig_hash"]:
                notes.append(f"{name}: signature changed since {since} (body unchanged)")
            return
        if role != "subject":
            stale.append(f"{role} anchor {name} changed since {since}")
            return
        before = self.tokens_at(anchor["commit"], anchor["path"], anchor["symbol"])
        entry = target.files.get(where.path or "")
        after = (
            self.tokens_of(entry.blob, where.path or "", d.qualname, lambda: target.blob_data(where.path or ""))
            if entry is not None
            else target.body_tokens(where.path or "", d.qualname)
        )
        if before is None or after is None:
            stale.append(f"{name}: body changed since {since} and could not be compared")
            return
        from comind.languages import token_similarity

        similarity = token_similarity(before, after)
        if similarity < self.threshold:
            stale.append(
                f"{name}: body drifted since {since}: {_percent(similarity)} similar to the anchored "
                f"version (threshold {self.threshold:.0%})"
            )
        else:
            notes.append(f"{name}: body changed since {since} ({_percent(similarity)} similar)")

    def _dependency(
        self, record: Record, anchor: Mapping[str, Any], target: Snapshot, notes: list[str], stale: list[str]
    ) -> None:
        from comind.deps import exact_pin, normalize_name, version_in_range

        dep = anchor["dep"]
        if not dep.get("version_range"):
            return
        name = normalize_name(dep["ecosystem"], dep["package"])
        found = [d for d in self.dependencies(target.commit) if d.ecosystem == dep["ecosystem"] and d.name == name]
        version = next((d.locked for d in found if d.locked), None)
        if version is None:
            return
        try:
            inside = version_in_range(dep["ecosystem"], version, dep["version_range"])
            # an attempt's exact version (what a reverted change moved to): back below it is the revert,
            # not a fix; past it, the fix may have come
            pinned = exact_pin(dep["version_range"]) if record.kind == "attempt" else None
            beyond = pinned is None or version_in_range(dep["ecosystem"], version, f">{pinned.removeprefix('v')}")
        except ValueError:
            return
        if inside or not beyond:
            return
        text = f"{dep['package']} is now {version}, outside {dep['version_range']}"
        if record.kind == "attempt":
            notes.append(f"retry condition met: {text}")
        else:
            stale.append(f"re-check: {text}")


# git's `diff.renameLimit`: between trees far apart, past this many deleted files times this many
# added ones left after the unchanged moves, inexact rename detection is skipped, as git's diff
# skips it. Two trees years apart pair thousands with thousands: 30 s of similarity for one pair.
RENAME_LIMIT = 1000
EDITED_BYTES = 32 << 20  # contents of landings' edited files kept for `_moved_with_edit` (~1-2 MiB a big landing)
SAME_NAMES = 20  # past the limit, at most this many files of a deleted file's name are compared with it


def _renames(
    index: CodeIndex, old_tree: str, new_tree: str, limit: int | None, moves: _Moves
) -> tuple[dict[str, str], set[str]]:
    """(old path -> new path, deleted paths) between two trees, `moves` the exact moves between them."""
    import pygit2

    exact, deleted, added = dict(moves.exact), moves.deleted, moves.added
    if not deleted or not added or (limit is not None and len(deleted) * len(added) > limit**2):
        return exact, set(deleted)
    repo = index.repo
    diff = cast("pygit2.Tree", repo[old_tree]).diff_to_tree(cast("pygit2.Tree", repo[new_tree]))
    find = pygit2.enums.DiffFind
    try:
        diff.find_similar(flags=find.FIND_RENAMES)
    except pygit2.GitError:  # a blob this copy lacks (partial clone): renames by object id only
        index.unread += 1
        return exact, set(deleted)
    renamed, gone, _ = _changes(diff)
    return renamed, set(gone)


def _changes(diff: pygit2.Diff) -> tuple[dict[str, str], list[str], list[str]]:
    """(old path -> new path of the renamed files, the deleted paths, the added paths) of a diff."""
    renamed, deleted, added = {}, [], []
    for delta in diff.deltas:
        status = delta.status_char()
        if status == "R":
            renamed[delta.old_file.path] = delta.new_file.path
        elif status == "D":
            deleted.append(delta.old_file.path)
        elif status == "A":
            added.append(delta.new_file.path)
    return renamed, deleted, added


class _Moves(NamedTuple):
    """What a landing moved unchanged, and what it deleted and added besides (see `_exact_moves`)."""

    exact: dict[str, str]
    deleted: set[str]
    added: list[str]
    added_set: set[str]
    folders: dict[str, str]  # `_moved_folders(exact)`


def _exact_moves(index: CodeIndex, old_tree: str, new_tree: str) -> tuple[dict[str, str], list[str], list[str]]:
    """(old path -> new path of the files moved unchanged, the other deleted paths, the other added
    paths) between two trees: object ids compared, no content read.

    The pairing libgit2's `find_similar` makes with `FIND_EXACT_MATCH_ONLY` and no rename limit, by
    a lookup of each id: each added file, in path order, takes the first deleted file of its id not
    yet taken, in path order (links and submodules are not files). libgit2 compares every deleted
    file with every added one: 49 million pairs for a landing that moves 7,000 files."""
    repo = index.repo
    diff = cast("pygit2.Tree", repo[old_tree]).diff_to_tree(cast("pygit2.Tree", repo[new_tree]))
    deleted, added = [], []
    for delta in diff.deltas:
        status = delta.status_char()
        if status == "D":
            deleted.append(delta.old_file)
        elif status == "A":
            added.append(delta.new_file)
    sources: dict[pygit2.Oid, deque[str]] = {}
    for file in deleted:
        if _is_file(file.mode):
            sources.setdefault(file.id, deque()).append(file.path)
    moved: dict[str, str] = {}
    for file in added:
        if _is_file(file.mode) and (same := sources.get(file.id)):
            moved[same.popleft()] = file.path
    targets = set(moved.values())
    return (
        dict(sorted(moved.items(), key=lambda pair: pair[1])),  # as libgit2 sorts renames: by the new path
        [file.path for file in deleted if file.path not in moved],
        [file.path for file in added if file.path not in targets],
    )


def _is_file(mode: int) -> bool:
    """A blob's mode, executable or not (git's `S_ISREG`), not a link's or a submodule's."""
    return mode & 0o170000 == 0o100000


def _converted(path: str, deleted: Iterable[str], added: Iterable[str]) -> str | None:
    """The file `path` became in another format, in its folder: `CHANGES.rst` -> `CHANGES.md`,
    `setup.js` -> `setup.ts`, when the landing deletes one file of that name and adds one. Rename
    detection misses such a move when the conversion rewrote most lines (reST headings to Markdown)."""
    stem = _stem(path)
    if stem is None or sum(1 for p in deleted if _stem(p) == stem) != 1:
        return None
    same = [p for p in added if _stem(p) == stem]
    return same[0] if len(same) == 1 else None


def _stem(path: str) -> str | None:
    """`docs/guide.rst` -> `docs/guide`; None for a file name without an extension."""
    folder, _, name = path.rpartition("/")
    base, dot, _ext = name.rpartition(".")
    return f"{folder}/{base}" if dot and base else None


def _moved_folders(moved: Mapping[str, str]) -> dict[str, str]:
    """Folder -> where files of it moved unchanged (`cli/tests/a.ts` -> `tests/a.ts` gives `cli/tests`
    -> `tests` and `cli/tests/unit` -> `tests/unit`; the first file seen decides)."""
    folders: dict[str, str] = {}
    for old_path, new_path in moved.items():
        folder = old_path
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            tail = old_path[len(folder) :]
            if not new_path.endswith(tail):
                break
            folders.setdefault(folder, new_path[: len(new_path) - len(tail)])
    return folders


def _in_moved_folder(path: str, folders: Mapping[str, str]) -> list[str]:
    """Where `path` would be if its folders moved as their unchanged files did, deepest first."""
    found: list[str] = []
    folder = path
    while "/" in folder:
        folder = folder.rsplit("/", 1)[0]
        if folder in folders and (target := folders[folder] + path[len(folder) :]) not in found:
            found.append(target)
    return found


def _similarity(a: bytes, b: bytes) -> float:
    """The share of lines two texts have in common, as git scores a rename (of the larger one);
    binary files (a NUL in their first 8,000 bytes, as git tells) are the same or not at all."""
    import pygit2

    if a == b:
        return 1.0
    if b"\0" in a[:8000] or b"\0" in b[:8000]:
        return 0.0
    removed = pygit2.Patch.create_from(a, b, context_lines=0).line_stats[2]
    lines_a, lines_b = len(a.splitlines()), len(b.splitlines())
    longest = max(lines_a, lines_b)
    return (lines_a - removed) / longest if longest else 1.0


def _blob_data(index: CodeIndex, commit: str, path: str, fetch: bool = True) -> bytes | None:
    import pygit2

    from comind.promisor import fetch_missing

    entry = tree_entry(index.repo, commit, path)
    if entry is None or entry.type_str != "blob":
        return None
    if fetch:
        fetch_missing(index.repo, [entry.id])
    try:
        return bytes(cast("pygit2.Blob", index.repo[entry.id]).data)
    except (KeyError, ValueError, pygit2.GitError):
        index.unread += 1
        return None


def _symbol_key(blob: str, path: str, qualname: str) -> str:
    """A definition of a blob, parsed as `path`'s language: what the index cache keeps answers by."""
    return f"{blob}\0{posixpath.splitext(path)[1].lower()}\0{qualname}"


def _blob_at(index: CodeIndex, commit: str, path: str) -> str | None:
    """The id of the blob at `path` in `commit`."""
    entry = tree_entry(index.repo, commit, path)
    return None if entry is None else str(entry.id)


# a record's own commits, as a reason names them: a bare sha says nothing of where it stands
_OWN_ROLES = {
    "revert": "the revert",
    "reverted": "the reverted change",
    "fix": "the fix",
    "fixed": "the commit it fixes",
}


def told_commit(record: Record, commit: str | None) -> str:
    """`commit` short, named by its role when it is one of the record's own ("the revert 6f7389e911")."""
    role = next((e.get("role") for e in record.evidence if e.get("type") == "commit" and e.get("ref") == commit), None)
    word = _OWN_ROLES.get(str(role))
    return f"{word} {short(commit)}" if word else short(commit)


def own_commits(record: Record) -> set[str]:
    """The commits a record was made from: its evidence's and the one it holds from (an attempt's
    reverted change and its revert)."""
    shas = {str(e["ref"]) for e in record.evidence if e.get("type") == "commit" and e.get("ref")}
    if record.data.get("valid_from"):
        shas.add(str(record.data["valid_from"]))
    return shas


def _first_without(chain: list[str], start: int, holds: Callable[[str], bool]) -> int:
    """The index of the first landing after `start` where `holds` is false, by binary search: it holds
    at `start` and not at the chain's end (a file's path, a symbol in it; ~15 probes of thousands)."""
    present, gone = start, len(chain) - 1
    while gone - present > 1:
        middle = (present + gone) // 2
        if holds(chain[middle]):
            present = middle
        else:
            gone = middle
    return gone


CLOCK_SKEW = 86_400  # seconds a commit's time may precede its parent's


def evidence_verifier(index: CodeIndex, default_tip: str | None) -> Any:
    """A function telling whether a record's cited commits exist on the default branch (T1 -> T2)."""
    import pygit2

    repo = index.repo
    # One walk back from the tip, newest first, resumed as older commits are asked about: asking
    # libgit2 each time walks the history again (~0.1 s per commit cited on a 17,000-commit history).
    seen: set[str] = set()
    history: Iterator[pygit2.Commit] | None = None
    walked_all = False

    def reachable(sha: str) -> bool:
        nonlocal history, walked_all
        try:
            commit = repo[sha].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return False
        if default_tip is None:
            return False
        key = str(commit.id)
        if key in seen or walked_all:
            return key in seen
        if history is None:
            history = iter(repo.walk(default_tip, pygit2.enums.SortMode.TIME))
        floor = commit.commit_time - CLOCK_SKEW
        for older in history:
            oid = str(older.id)
            seen.add(oid)
            if oid == key or older.commit_time < floor:
                break
        else:
            walked_all = True
        # not met yet, with the walk a day older than it: a skewed clock, or not on the branch
        return key in seen or (not walked_all and bool(repo.descendant_of(default_tip, commit.id)))

    def verify(record: Record) -> bool:
        if any(e["ref"].startswith("unresolved:") for e in record.evidence):
            return False  # a harvester that could not resolve what it cites stays at T1
        commits = [e["ref"] for e in record.evidence if e.get("type") == "commit"]
        return bool(commits) and all(reachable(c) for c in commits)

    return verify


def _parents(repo: pygit2.Repository, commit: str) -> list[pygit2.Oid]:
    """A commit's parents; none past a shallow clone's edge (a commit the clone lacks)."""
    try:
        return list(cast("pygit2.Commit", repo[commit]).parent_ids)
    except KeyError:
        return []


def _edited(repo: pygit2.Repository, before: str, landing: str, language: str) -> list[tuple[str, bytes]]:
    """(path, content) of each file of `language` that `landing` adds or edits (since `before`)."""
    import pygit2

    from comind.languages import language_for_path

    old, new = repo[before], repo[landing]
    assert isinstance(old, pygit2.Commit) and isinstance(new, pygit2.Commit)
    out = []
    for delta in repo.diff(old.tree, new.tree).deltas:
        kind = language_for_path(delta.new_file.path)
        if delta.status_char() not in ("A", "M") or kind is None or kind.name != language:
            continue
        try:
            out.append((delta.new_file.path, bytes(cast("pygit2.Blob", repo[delta.new_file.id]).data)))
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return out


def _naming(files: Iterable[tuple[str, bytes]], name: str) -> list[tuple[str, bytes]]:
    """The files (`_edited`'s) whose content names `name` as a word: a text search, so that few
    files are parsed."""
    import re

    raw = name.encode()
    word = re.compile(rb"(?<![\w$])" + re.escape(raw) + rb"(?![\w$])")
    # (`in` first: a plain search is many times faster)
    return [(path, data) for path, data in files if raw in data and word.search(data)]


def _lines_of(data: bytes, start: int, end: int) -> Counter[str]:
    """A definition's non-blank lines (`start` to `end`), stripped, as a multiset."""
    text = data.decode("utf-8", errors="replace").splitlines()[start - 1 : end]
    return Counter(stripped for line in text if (stripped := line.strip()))


def _plain(name: str) -> str:
    """A name without its namesake number (`f#2` is `f`)."""
    return name.split("#", 1)[0]
