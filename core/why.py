"""`comind why`: the records behind a piece of code, then those one import or call away.

Candidates come from the ledger's anchor table (same path, same symbol name, same body or shape
hash), and re-anchoring confirms which of them point at the code now, so a record made before a
rename or a move is still found. Results are ordered intent, decisions, attempts, constraints,
gotchas, questions; each carries its status, trust and reason.

A warm read must not import pygit2 or the code index: modules on that path are imported
inside the functions that need them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from comind.anchors import AnchorError, format_anchor, parse_anchor
from comind.records import Record
from comind.status import HISTORY_STATES, Status

if TYPE_CHECKING:
    import pygit2

    from comind.codeindex import Snapshot
    from comind.ledger import Ledger
    from comind.workspace import Workspace

KIND_ORDER = ("intent", "decision", "attempt", "constraint", "gotcha", "question", "suppression")
HOP_LIMIT = 20  # neighbouring modules and callees looked at, at most


GRAPH_VERSION = "9"  # comind.graph's, here so a warm `why` imports no graph (a test holds them equal)


def _memo(kind: str) -> str:
    """A memo kind of the index cache, read again when the graph names modules otherwise."""
    return f"{kind}.{GRAPH_VERSION}"


class Item(NamedTuple):
    record: Record
    status: Status
    relevance: str  # "direct" or "one hop: <how>"
    anchor: dict[str, Any] | None = None  # the record's anchor that matched the question, as written


def in_words(relevance: str) -> str:
    """An item's relevance said for a reader (an agent's `why shown:`): `direct` and `one hop:` are
    labels for programs (`why --json`), not words."""
    if relevance == "direct":
        return "anchored to the code asked about"
    return "one import or call away: " + relevance.removeprefix("one hop: ")


class WhyAnswer(NamedTuple):
    heading: str
    items: list[Item]
    snapshot: Snapshot | None = None  # the code the answer was read at
    path: str | None = None  # the file or folder asked about, at that code


class Target(NamedTuple):
    path: str | None
    symbol: str | None
    span: tuple[int, int] | None
    description: str
    hashes: tuple[str, ...] = ()


def target_at(snapshot: Snapshot, anchor: dict[str, Any]) -> Target:
    """What the anchor names at the snapshot (AnchorError when it names nothing there: a file or a
    folder not in the tree, a symbol the file does not define, a line past its end, an unknown module); kept
    in the index cache per commit (a warm `why` then decodes no symbols at all)."""
    key = f"{snapshot.commit}\0{json.dumps(anchor, sort_keys=True)}"
    cached = snapshot.index.memo_get(_memo("why-target.2"), [key]).get(key)
    if cached is not None:
        path, symbol, span, description, hashes = json.loads(cached)
        return Target(path, symbol, tuple(span) if span else None, description, tuple(hashes))
    target = _find_target(snapshot, anchor)
    snapshot.index.memo_put(_memo("why-target.2"), {key: json.dumps(list(target))})  # 2: folders checked
    return target


def _find_target(snapshot: Snapshot, anchor: dict[str, Any]) -> Target:
    from comind.anchoring import _nearest, nearest_file, past_the_end  # the same messages as at resolution
    from comind.git import is_dir

    scope = anchor["scope"]
    at = snapshot.commit[:10]
    if scope == "module":
        from comind.graph import build_graph

        path = build_graph(snapshot.restricted(())).path_of(anchor["module"])  # names need no symbols
        if path is None:
            raise AnchorError(f"no module {anchor['module']!r} at {at}")
        return Target(path, None, None, f"module {anchor['module']} ({path}) at {at}")
    if scope in ("repo", "dependency"):
        return Target(None, None, None, f"{format_anchor(anchor)} at {at}")
    path = anchor["path"]
    if path.endswith("/"):
        tree = cast("pygit2.Tree", snapshot.index.repo[snapshot.tree])
        if not is_dir(tree, path.rstrip("/")):  # a typo would answer "no records", as if none were kept
            raise AnchorError(f"no folder {path} at {at}")
        return Target(path, None, None, f"folder {path} at {at}")
    known = path in snapshot.files
    if not known:
        try:
            snapshot.blob_data(path)
        except KeyError:
            tree = cast("pygit2.Tree", snapshot.index.repo[snapshot.tree])
            if scope == "file" and "line" not in anchor and is_dir(tree, path):  # `app` for `app/`
                raise AnchorError(f"no file {path} at {at}: a folder, written {path}/") from None
            raise AnchorError(
                f"no file {path} at {at}" + nearest_file(path, snapshot.files, anchor.get("symbol"))
            ) from None
    if scope == "symbol":
        found = snapshot.find(path, anchor["symbol"])
        if found is None:
            raise AnchorError(
                f"no symbol {anchor['symbol']!r} in {path} at {at}"
                + _nearest(anchor["symbol"], snapshot.qualnames(path))
            )
    elif "line" in anchor:
        if past := past_the_end(anchor, path, snapshot.blob_data(path)):
            raise AnchorError(f"{past} at {at}")
        found = snapshot.innermost(path, int(anchor["line"]))
    else:
        found = None
    if found is None:
        return Target(path, None, None, f"{path} at {at}")
    return Target(
        path,
        found.qualname,
        (found.start_line, found.end_line),
        f"{path}::{found.qualname} ({found.kind}, lines {found.start_line}-{found.end_line} at {at})",
        (found.body_hash, found.shape_hash),
    )


def explain(ws: Workspace, ledger: Ledger, text: str, *, at: str | None = None, include_all: bool = False) -> WhyAnswer:
    from comind.anchoring import Anchorer
    from comind.query import statuses

    index = ws.index
    snapshot = index.snapshot(at or "HEAD")
    moment = datetime.fromtimestamp(index.commit_info(snapshot.commit)[2], UTC) if at else None
    asked = parse_anchor(text)
    target = target_at(snapshot, asked)
    anchorer = Anchorer(index, ws.config.drift_threshold)

    known = _known_then(moment)
    names = [target.symbol.rsplit(".", 1)[-1]] if target.symbol else []
    paths = [target.path, *gone_paths(ledger, index, snapshot)] if target.path else []
    candidates = [r for r in ledger.anchored_near(paths, names, target.hashes) if known(r)]
    wanted = format_anchor(asked).split("@")[0]  # (the question as an anchor names it)
    if target.path is None:  # repo- or dependency-wide question: records anchored the same way
        candidates = [
            r for r in ledger.all() if known(r) and any(format_anchor(a).split("@")[0] == wanted for a in r.anchors)
        ]
    matched = {r.id: _matching(anchorer, r, snapshot, target, wanted) for r in candidates}
    direct = [r for r in candidates if matched[r.id] is not None]
    hops = _one_hop(ws, ledger, anchorer, snapshot, target, known, {r.id for r in direct})

    anchorer.flush()
    records = direct + [r for r, _, _ in hops]
    derived = statuses(ws, ledger, records, at=snapshot.commit, now=moment)
    # Dormant and stale records are shown, labelled: a why is a question someone asked.
    hidden = set() if include_all else set(HISTORY_STATES)
    items = [Item(r, derived[r.id], "direct", matched[r.id]) for r in direct]
    items += [Item(r, derived[r.id], f"one hop: {how}", anchor) for r, how, anchor in hops]
    items = [i for i in items if i.status.state not in hidden and i.status.state != "quarantined"]
    order = {k: n for n, k in enumerate(KIND_ORDER)}
    items.sort(key=lambda i: (i.relevance != "direct", order.get(i.record.kind, 99), i.record.created_at))
    return WhyAnswer(target.description, items, snapshot, target.path)


def gone_paths(ledger: Ledger, index: Any, snapshot: Snapshot) -> list[str]:
    """The files anchors name that the snapshot's tree no longer has: their records' code may have
    moved into what is asked about or changed (re-anchoring then says where each is). Kept in the memo, so a
    warm `why` reads no tree."""
    keys = {f"{snapshot.tree}\0{p}": p for p in ledger.anchor_paths() if not p.endswith("/")}
    known = index.memo_get("tree-lacks", keys)
    if len(known) < len(keys):
        tree = index.repo[snapshot.tree]
        found = {}
        for key in keys.keys() - known.keys():
            try:
                tree[keys[key]]
                found[key] = ""
            except KeyError:
                found[key] = "1"
        index.memo_put("tree-lacks", found)
        known |= found
    return sorted(keys[k] for k, lacks in known.items() if lacks)


def _known_then(moment: datetime | None) -> Callable[[Record], bool]:
    """Whether a record was known: always, or with --at when it was created by then."""
    if moment is None:
        return lambda _record: True
    cutoff = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return lambda record: record.created_at[:19] <= cutoff


# `Cls.method#2`: the second of several definitions of one name in a file (overloads, redefinitions)
_NUMBERED = re.compile(r"#\d+(?=\.|$)")


def _matching(anchorer: Any, record: Record, snapshot: Snapshot, target: Target, wanted: str) -> dict[str, Any] | None:
    """The record's anchor that points at the target, or None: what shows it (of a record on twelve
    files, the one asked about; one on the asked symbol before one on its whole file). `wanted`: the
    question as `format_anchor` writes it, which a repo- or dependency-wide question is matched by."""
    if target.path is None:  # repo- or dependency-wide question: an anchor of the same kind
        return next((a for a in record.anchors if format_anchor(a).split("@")[0] == wanted), None)
    best, found = 0, None
    for anchor in record.anchors:
        if (closeness := _points_at(anchorer, anchor, snapshot, target)) > best:
            best, found = closeness, anchor
            if best == 2:
                break
    return found


def _points_at(anchorer: Any, anchor: dict[str, Any], snapshot: Snapshot, target: Target) -> int:
    """0 when the anchor does not point at the target, 2 when its symbol does, else 1."""
    folder = target.path if target.path and target.path.endswith("/") else None  # a folder's question
    if "path" not in anchor:
        return 0
    if anchor["path"].endswith("/"):
        asked = target.path or ""
        inside = asked.startswith(anchor["path"]) or bool(folder and anchor["path"].startswith(folder))
        return int(bool(asked) and inside)
    if not anchor.get("commit"):  # never resolved: compare as written
        where_path, where_symbol = anchor["path"], anchor.get("symbol")
    else:
        state, found_path, found_symbol = anchorer.where(anchor, snapshot)
        if state != "found":
            where_path, where_symbol = anchor["path"], anchor.get("symbol")
        else:
            where_path, where_symbol = found_path, found_symbol
    if folder and where_path.startswith(folder):
        return 1  # what is anywhere in the folder asked about
    if where_path != target.path:
        return 0
    if target.symbol is None or where_symbol is None:
        return 1  # a file-level question, or a file-level record in the asked-about file
    if "#" not in target.symbol:  # a name asked without a number means each of its namesakes
        where_symbol = _NUMBERED.sub("", where_symbol)
    if (
        where_symbol == target.symbol
        or where_symbol.startswith(target.symbol + ".")
        or target.symbol.startswith(where_symbol + ".")
    ):
        return 2
    return 0


def _one_hop(
    ws: Workspace,
    ledger: Ledger,
    anchorer: Any,
    snapshot: Snapshot,
    target: Target,
    known: Callable[[Record], bool],
    seen: set[str],
) -> list[tuple[Record, str, dict[str, Any] | None]]:
    """Records anchored to modules the target imports or is imported by, and to what it calls, with
    the anchor that names the neighbour."""
    if target.path is None or target.path.endswith("/"):
        return []
    key = f"{snapshot.tree}\0{target.path}\0{target.symbol or ''}"
    cached = snapshot.index.memo_get(_memo("why-hop"), [key]).get(key)
    if cached is not None:
        neighbours = [(path, how) for path, how in json.loads(cached)]
    else:
        neighbours = _neighbours(snapshot, target)
        snapshot.index.memo_put(_memo("why-hop"), {key: json.dumps(neighbours)})
    out: list[tuple[Record, str, dict[str, Any] | None]] = []
    near = [
        r
        for r in ledger.anchored_near(dict.fromkeys(p for p, _ in neighbours))  # one query for all
        if known(r) and r.id not in seen and r.kind != "relation"
    ]
    for path, how in neighbours:
        for record in near:
            if record.id not in seen and (anchor := _anchored_at(record, path)) is not None:
                seen.add(record.id)
                out.append((record, how, anchor))
    return out


def _neighbours(snapshot: Snapshot, target: Target) -> list[tuple[str, str]]:
    """(path, how) of the files one import or call away from the target (a function of the tree)."""
    from comind.graph import build_graph, importers

    assert target.path is not None
    graph = build_graph(snapshot.restricted([target.path]))  # the target's own edges; names of all
    module = graph.module_of(target.path)
    if module is None:
        return []
    neighbours: list[tuple[str, str]] = []
    for other in sorted(graph.imports_of(module))[:HOP_LIMIT]:
        if (path := graph.path_of(other)) and path != target.path:
            neighbours.append((path, f"{target.path} imports {other}"))
    for other in sorted(importers(snapshot, module))[:HOP_LIMIT]:
        if (path := graph.path_of(other)) and path != target.path:
            neighbours.append((path, f"imported by {other}"))
    if target.symbol:
        caller = f"{module}.{target.symbol}"
        for edge in graph.calls_from(caller)[:HOP_LIMIT]:
            parts = edge.callee.split(".")  # the longest prefix that is a module holds the callee
            path = next((p for n in range(len(parts) - 1, 0, -1) if (p := graph.path_of(".".join(parts[:n])))), None)
            if path and path != target.path:
                neighbours.append((path, f"{target.symbol} calls {edge.callee}"))
    return neighbours


def _anchored_at(record: Record, path: str) -> dict[str, Any] | None:
    """The record's first anchor that names ``path`` or a folder holding it (as anchored_near)."""
    return next(
        (a for a in record.anchors if (p := a.get("path")) and (p == path or (p.endswith("/") and path.startswith(p)))),
        None,
    )
