"""``graph`` checks: forbid or require import and call edges between module or path globs.

```yaml
type: graph
from: "myapp/handlers/**"          # or "myapp.handlers.*"; a string or a list
forbid: ["myapp.db.raw_query"]     # and/or require: [...]
edges: imports                     # imports (default) | calls | both
indirect: false                    # true: a path through the graph counts too
```

Globs: a glob with a ``/`` or a file extension is a path glob (``*`` within a segment, ``**``
across segments, a directory matches everything below it); anything else is a module glob in
import-linter style (``*`` one dotted segment, ``**`` one or more), and a module glob matches a
module and everything inside it (``myapp.db`` matches ``myapp.db.raw_query``). Targets are matched
against names as imported or called, made absolute: ``from myapp.db import raw_query`` imports
``myapp.db.raw_query`` (and ``myapp.db``); ``rq()`` after ``from myapp.db import raw_query as rq``
calls ``myapp.db.raw_query``. A call into an npm package is matched by the package's name, as its
import is (npm names hold dots): ``debounce()`` after ``import { debounce } from 'kit'`` calls
``kit.debounce``, which ``kit`` matches and ``kit.*`` (packages like ``kit.merge``) does not.

A forbidden edge is reported at the importing or calling line, once per site (direct: each name an
import statement imports, in every language) or once per (source, target) with the chain in the
message (indirect). A ``require`` target with no such edge
from any source is a violation without a location.
"""

from __future__ import annotations

import bisect
import itertools
import posixpath
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from comind.checks.context import CheckContext
from comind.checks.globs import (
    any_path_matches,
    check_glob,
    is_path_glob,
    module_glob_regex,
    module_matches,
    path_matches,
)
from comind.checks.interface import Check, CheckError, CheckField, Violation, check_strings, unmatched_globs
from comind.codeindex import Snapshot
from comind.graph import CallEdge, ImportGraph, csharp_namespaces
from comind.languages import language_for_path

if TYPE_CHECKING:
    from comind.symbols import Import

_T = TypeVar("_T")

# files that name modules, or map imports to them (package.json's "imports")
_LAYOUT = frozenset({"__init__.py", "__init__.pyi", "go.mod", "composer.json", "Cargo.toml", "package.json"})
# Languages whose modules are named by a path as their includes, requires and imports write it
# (`src/net/sock`, Ruby's `rack/utils`, JavaScript's `src/db/index`): a path glob may name the module,
# or a name in it (`src/db/index.rawQuery`). (A Go import path is no path a glob means: `forbid:
# [app/**]` must not match Go's module `app/db` in `db/`.)
_NAMED_BY_PATH = frozenset({"c", "cpp", "ruby", "php", "javascript", "typescript", "tsx"})
_GLOB_CHARS = frozenset("*?[")
_REVERSED_DOMAIN = frozenset({"java", "kotlin"})  # languages whose packages begin with a reversed domain


def _import_path(glob: str) -> bool:
    """Rule: a glob whose first segment is a domain (`github.com/org/repo/...`) names Go packages
    by import path, as go.mod's module paths begin; a folder is seldom named like a domain."""
    first = glob.split("/", 1)[0]
    return "/" in glob and "." in first.strip(".") and not _GLOB_CHARS & set(first)


def _names_package(glob: str, name: str) -> bool:
    """An import-path glob matches a package, `x/**` x itself too (as Go's `x/...` does)."""
    return path_matches(glob, name) or (glob.endswith("/**") and path_matches(glob[:-3], name))


@dataclass(frozen=True, slots=True)
class _Site:
    """One imported name in one file: candidates most specific first."""

    path: str
    line: int
    names: tuple[str, ...]


class _Matcher:
    """Glob matching of files (sources) and names (targets) against one graph."""

    def __init__(self, graph: ImportGraph) -> None:
        self.graph = graph
        self._module_paths: dict[str, list[str]] = {}
        self.named: list[str] = []  # the files that are (part of) a module, in path order
        for path in sorted(graph.snapshot.files):
            module = graph.module_of(path)
            if module is not None:
                self._module_paths.setdefault(module, []).append(path)
                self.named.append(path)

    def paths_of(self, module: str) -> list[str]:
        return self._module_paths.get(module, [])

    def _named_by_path(self, path: str) -> bool:
        entry = self.graph.snapshot.files.get(path)
        return entry is not None and entry.language in _NAMED_BY_PATH

    def file_matches(self, globs: Sequence[str], path: str) -> bool:
        module = self.graph.module_of(path)
        as_path = module if module is not None and self._named_by_path(path) else None  # (C's `src/net/sock`)
        for glob in globs:
            if is_path_glob(glob):
                if path_matches(glob, path) or (as_path is not None and path_matches(glob, as_path)):
                    return True
                if module is not None and _import_path(glob) and _names_package(glob, module):
                    return True
            elif module is not None and module_matches(glob, module):
                return True
        return False

    def name_matches(self, glob: str, name: str) -> bool:
        if not is_path_glob(glob):  # (a glob's `::` is read as a dot, so is a name's: C++'s `std::system`)
            return module_matches(glob, name.replace("::", ".") if "::" in name else name)
        # a path glob matches a name inside an indexed module whose file it matches
        prefix = name
        while prefix:
            paths = self._module_paths.get(prefix)
            if paths:
                if any(path_matches(glob, p) for p in paths):
                    return True
                if _import_path(glob):  # the package, or a name in it (`…/db.RawQuery`, a call's target)
                    return _names_package(glob, prefix) or path_matches(glob, name)
                return any(self._named_by_path(p) for p in paths) and (
                    path_matches(glob, prefix) or path_matches(glob, name)
                )
            prefix = prefix.rpartition(".")[0]
        return path_matches(glob, name)

    def first_target(self, globs: Sequence[str], names: Iterable[str]) -> tuple[str, str] | None:
        """(name, glob) for the first (most specific) name matching any glob."""
        for name in names:
            for glob in globs:
                if self.name_matches(glob, name):
                    return name, glob
        return None


def _matcher(ctx: CheckContext, graph: ImportGraph) -> _Matcher:
    """The matcher of ``graph``, made once per evaluation (checks of one revision share it)."""
    made: dict[ImportGraph, _Matcher] = ctx.cache.setdefault("graph-matchers", {})
    found = made.get(graph)
    if found is None:
        found = made[graph] = _Matcher(graph)
    return found


class GraphCheck(Check):
    type: ClassVar[str] = "graph"
    fields: ClassVar[tuple[CheckField, ...]] = (
        CheckField("from", "any", True, 'module or path globs of the sources, e.g. "myapp/handlers/**"'),
        CheckField("forbid", "any", False, 'targets no source may import or call, e.g. "myapp.db.raw_query"'),
        CheckField("require", "any", False, "targets some source must import or call"),
        CheckField("edges", "choice", False, "imports (default), calls or both", ("imports", "calls", "both")),
        CheckField("indirect", "bool", False, "count paths through other modules too (default false)"),
        CheckField("files", "globs", False, "only sources in files matching these path globs"),
    )

    def compile(self) -> None:
        spec = self.spec
        self.sources = self._targets("from")
        self.forbid = self._targets("forbid")
        self.require = self._targets("require")
        if not self.forbid and not self.require:
            raise CheckError('a graph check needs forbid: or require: (e.g. forbid: ["myapp.db.*"])', "check")
        self.edges: str = spec.get("edges", "imports")
        self.indirect: bool = bool(spec.get("indirect", False))
        self.files: list[str] = check_strings(spec["files"], "check.files") if "files" in spec else []

    def _targets(self, key: str) -> list[str]:
        if key not in self.spec:
            return []
        values = self.spec[key]
        where = f"check.{key}"
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not values:
            raise CheckError(
                'expected a list of module globs like "myapp.db.*" or path globs like "myapp/db/**"', where
            )
        out = []
        for i, value in enumerate(values):
            if not isinstance(value, str) or not value.strip() or len(value) > 1000:
                raise CheckError(f'expected a module glob like "myapp.db.*", got {value!r}'[:200], f"{where}[{i}]")
            if "::" in value and not is_path_glob(value):  # a Rust path, `netio::tcp`: named with dots
                value = value.replace("::", ".")
                if value.split(".")[0] in ("crate", "self", "super"):
                    raise CheckError(
                        f"a Rust crate's own modules are named by their files' paths (src/fs/** for crate::fs),"
                        f" not {values[i]!r}"[:300],
                        f"{where}[{i}]",
                    )
            out.append(check_glob(value, f"{where}[{i}]"))
        return out

    def affected_by(self, ctx: CheckContext, paths: Iterable[str]) -> bool:
        """Whether the change can change any edge: it adds, removes or renames an indexed file,
        touches what names modules (a C# file's namespace too), or changes a file's imports (calls
        and definitions, for call edges) other than by line numbers. Otherwise the base's
        violations are the head's."""
        touched = list(paths)
        if any(posixpath.basename(p) in _LAYOUT for p in touched):
            return True
        change = ctx.change
        if change is None:
            return any(language_for_path(p) is not None for p in touched)
        base, head = ctx.snapshot(change.base), ctx.snapshot(change.head)
        if any(old in base.files or new in head.files for old, new in change.renames.items()):
            return True
        if _renames_modules(ctx):
            return True
        for path in change.all_paths:
            if (path in base.files) != (path in head.files):
                return True  # an indexed file added or removed
            if path in head.files and self._edges_of(base, path) != self._edges_of(head, path):
                return True
        return False

    def _edges_of(self, snapshot: Snapshot, path: str) -> tuple[list[Any], ...]:
        """What one file contributes to the graph, without line numbers."""
        imports = sorted((i.module, i.names, i.alias or "", i.level) for i in snapshot.imports(path))
        if self.edges == "imports":
            return (imports,)
        calls = sorted((c.caller, c.callee) for c in snapshot.calls(path))
        definitions = sorted((d.qualname, d.kind) for d in snapshot.definitions(path))
        return imports, calls, definitions

    def local(self, ctx: CheckContext) -> bool:
        """Direct forbidden edges are per file (an edge is in the importing or calling file, named
        as written and resolved through that file's own bindings), unless the change adds or
        removes what names modules (``__init__.py``, ``go.mod``, a C# file's namespace). Indirect paths and ``require``
        need the whole graph."""
        if self.indirect or self.require or ctx.change is None:
            return False
        return not any(posixpath.basename(p) in _LAYOUT for p in ctx.change.all_paths) and not _renames_modules(ctx)

    # --- evaluation -----------------------------------------------------------------------------
    def evaluate(self, ctx: CheckContext, revision: str) -> Iterator[Violation]:
        scope = ctx.scope(revision) if self.local(ctx) else None
        graph = ctx.graph(revision) if scope is None else ctx.partial_graph(revision, scope)
        matcher = _matcher(ctx, graph)
        source_files = [
            p
            for p in sorted(graph.snapshot.files if scope is None else scope)
            if graph.module_of(p) is not None
            and matcher.file_matches(self.sources, p)
            and (not self.files or any_path_matches(self.files, p))
        ]
        kinds = ("imports", "calls") if self.edges == "both" else (self.edges,)
        if self.forbid:
            for kind in kinds:
                if kind == "imports":
                    yield from self._imports(graph, matcher, source_files, self.forbid)
                else:
                    yield from self._calls(graph, matcher, source_files, self.forbid)
        for target in self.require:
            found = False
            for kind in kinds:
                finder = self._imports if kind == "imports" else self._calls
                if next(iter(finder(graph, matcher, source_files, [target])), None) is not None:
                    found = True
                    break
            if not found:
                what = " or ".join(kinds)
                sources = ", ".join(self.sources)
                why = "no source file matches" if not source_files else "none of them"
                yield self.violation(
                    None,
                    None,
                    None,
                    f"requires {sources} {what} {target}",
                    self.message
                    or f"required: {sources} {what} {target}"
                    f"{' (directly or indirectly)' if self.indirect else ''}; {why} does",
                )

    def unmatched(self, ctx: CheckContext, revision: str) -> list[str]:
        """Source globs matching no module, and targets matching nothing of the tree: a forbidden
        one only when it is inside the tree's own packages (forbidding a third-party package nothing
        imports yet is the point of the check)."""
        graph = ctx.named_graph(revision)  # the one evaluating the check built: names every module
        matcher = _matcher(ctx, graph)
        named = matcher.named
        cannot = "so the check cannot pass" if self.require else "so the check cannot fail"
        out = unmatched_globs(
            "from",
            self.sources,
            lambda g: any(matcher.file_matches([g], p) for p in named),
            "matches no module of this tree",
            cannot,
        )
        out += unmatched_globs(
            "files",
            self.files,
            lambda g: any(path_matches(g, p) for p in named),
            "matches no module's file in this tree",
            cannot,
        )
        if (
            not out
            and self.files
            and not any(matcher.file_matches(self.sources, p) and any_path_matches(self.files, p) for p in named)
        ):
            out.append(f"from and files share no module of this tree, {cannot}")
        names = _Names(ctx, revision, matcher, self.edges)
        out += unmatched_globs(
            "forbid",
            self.forbid,
            lambda g: names.hit(g, outside_counts=True),
            "matches no module, definition or import of this tree",
            "so forbid cannot fail" if self.require else "so the check cannot fail",
        )
        out += unmatched_globs(
            "require",
            self.require,
            lambda g: names.hit(g, outside_counts=False),
            "matches no module, definition or import of this tree",
            "so the check cannot pass",
            each=True,
        )
        return out

    # imports -------------------------------------------------------------------------------------
    def _imports(
        self, graph: ImportGraph, matcher: _Matcher, source_files: list[str], targets: Sequence[str]
    ) -> Iterator[Violation]:
        sites = _import_sites(graph)
        if not self.indirect:
            for path in source_files:
                module = graph.module_of(path) or path
                for site in sites.get(path, ()):
                    hit = matcher.first_target(targets, site.names)
                    if hit:
                        yield self._import_violation(module, hit, site, [module, hit[0]])
            return
        adjacency: dict[str, set[str]] = {}
        edge_site: dict[tuple[str, str], tuple[str, int]] = {}
        for e in graph.import_edges():
            adjacency.setdefault(e.importer, set()).add(e.imported)
            edge_site.setdefault((e.path, e.imported), (e.path, e.line))
        # modules with an import matching a target, and the modules that can reach them
        hits: dict[str, list[tuple[_Site, tuple[str, str]]]] = {}
        for path, file_sites in sites.items():
            owner = graph.module_of(path)
            if owner is None:
                continue
            for site in file_sites:
                hit = matcher.first_target(targets, site.names)
                if hit:
                    hits.setdefault(owner, []).append((site, hit))
        useful = _reaching(adjacency, hits)
        by_module: dict[str, list[str]] = {}
        for path in source_files:
            by_module.setdefault(graph.module_of(path) or path, []).append(path)
        for start, start_files in sorted(by_module.items()):
            seen: set[str] = set()
            # depth 0: the source files' own imports
            for path in start_files:
                for site in sites.get(path, ()):
                    hit = matcher.first_target(targets, site.names)
                    if hit and hit[0] not in seen:
                        seen.add(hit[0])
                        yield self._import_violation(start, hit, site, [start, hit[0]])
            for site, hit, chain in _chains(start, adjacency, useful, hits, seen):
                first = next((edge_site[(p, chain[1])] for p in start_files if (p, chain[1]) in edge_site), None)
                where = _Site(first[0], first[1], site.names) if first else _Site(start_files[0], 0, ())
                yield self._import_violation(start, hit, where, [*chain, hit[0]])

    def _import_violation(self, module: str, hit: tuple[str, str], site: _Site, chain: list[str]) -> Violation:
        name, glob = hit
        via = f" via {' -> '.join(chain)}" if len(chain) > 2 else ""
        message = self.message or f"{module} imports {name}{via}, which is forbidden (matches {glob!r})"
        # the text leaves out the importer's name: the path says it, and follows renames
        return self.violation(site.path, site.line or None, site.line or None, f"imports {name}", message)

    # calls ---------------------------------------------------------------------------------------
    def _calls(
        self, graph: ImportGraph, matcher: _Matcher, source_files: list[str], targets: Sequence[str]
    ) -> Iterator[Violation]:
        wanted = set(source_files)
        edges = [e for e in graph.call_edges() if e.path in wanted]
        if not self.indirect:
            for e in edges:
                hit = _call_hit(matcher, targets, e)
                if hit:
                    yield self._call_violation(graph, e.caller, hit, e.path, e.line, [e.caller, hit[0]])
            return
        all_edges = graph.call_edges()
        by_caller: dict[str, list[CallEdge]] = {}
        for e in all_edges:
            by_caller.setdefault(e.caller, []).append(e)
        callers = sorted(by_caller)

        def outgoing(node: str) -> list[CallEdge]:
            """Calls made by ``node`` or by definitions nested in it."""
            out = list(by_caller.get(node, ()))
            i = bisect.bisect_left(callers, node + ".")
            while i < len(callers) and callers[i].startswith(node + "."):
                out.extend(by_caller[callers[i]])
                i += 1
            return out

        hit_nodes: dict[str, list[tuple[CallEdge, tuple[str, str]]]] = {}
        adjacency: dict[str, set[str]] = {}
        for e in all_edges:
            hit = _call_hit(matcher, targets, e)
            if hit:
                hit_nodes.setdefault(e.caller, []).append((e, hit))
            if e.resolved:
                adjacency.setdefault(e.caller, set()).add(e.callee)
        # a node reaches its nested definitions' calls too: fold them into its adjacency
        for caller in callers:
            parent = caller.rpartition(".")[0]
            while parent:
                if parent in adjacency or parent in by_caller:
                    adjacency.setdefault(parent, set()).add(caller)
                parent = parent.rpartition(".")[0]
        useful = _reaching(adjacency, hit_nodes)
        for start in sorted({e.caller for e in edges}):
            seen: set[str] = set()
            for e in by_caller.get(start, ()):
                if e.path not in wanted:
                    continue
                hit = _call_hit(matcher, targets, e)
                if hit and hit[0] not in seen:
                    seen.add(hit[0])
                    yield self._call_violation(graph, start, hit, e.path, e.line, [start, hit[0]])
            for e, hit, chain in _chains(start, adjacency, useful, hit_nodes, seen):
                first = next((c for c in outgoing(start) if c.callee == chain[1] and c.path in wanted), None)
                path, line = (first.path, first.line) if first else (e.path, e.line)
                yield self._call_violation(graph, start, hit, path, line, [*chain, hit[0]])

    def _call_violation(
        self, graph: ImportGraph, caller: str, hit: tuple[str, str], path: str, line: int, chain: list[str]
    ) -> Violation:
        name, glob = hit
        via = f" via {' -> '.join(chain)}" if len(chain) > 2 else ""
        message = self.message or f"{caller} calls {name}{via}, which is forbidden (matches {glob!r})"
        # the text names the caller inside its file (the path names the file, and follows renames)
        module = graph.module_of(path) or ""
        local = (
            caller[len(module) + 1 :]
            if module and caller.startswith(module + ".")
            else "<module>"
            if caller == module
            else caller
        )
        return self.violation(path, line or None, line or None, f"{local} calls {name}", message)


MAX_PREFIX_FILES = 32  # files read for the definitions of a target's module; beyond, assume it names one


class _Names:
    """Whether a target glob names something of a revision, cheapest question first: a module;
    a place outside the tree's own packages (a third-party name); a definition or import binding
    inside a module it points into; a name some file imports or calls (every file's imports, read
    only for a glob every other question missed)."""

    def __init__(self, ctx: CheckContext, revision: str, matcher: _Matcher, edges: str) -> None:
        self.ctx, self.revision, self.matcher, self.edges = ctx, revision, matcher, edges
        self._roots: dict[str, list[tuple[str, ...]]] | None = None
        self._used: set[str] | None = None
        self._read = 0  # files read for one glob's definitions

    def hit(self, glob: str, *, outside_counts: bool) -> bool:
        modules = self.matcher.graph.modules
        if any(self.matcher.name_matches(glob, m) for m in modules):
            return True
        if outside_counts and not self._inside(glob):
            return True
        return self._defined(glob) or self._used_name(glob)

    def _inside(self, glob: str) -> bool:
        """Whether the glob's literal start is inside one of the tree's top packages (``myapp``,
        Go's ``example.com/proj``; for a path glob, a top folder)."""
        if self._roots is None:
            modules = list(self.matcher.graph.modules)
            self._roots = {
                ".": _roots((m for m in modules if "/" not in m), ".", self._reversed_domain),
                "/": _roots(itertools.chain((m for m in modules if "/" in m), self.matcher.named), "/"),
            }
        sep = "/" if is_path_glob(glob) else "."
        literal = tuple(itertools.takewhile(lambda s: not _GLOB_CHARS & set(s), glob.strip("/").split(sep)))
        return any(literal[: len(root)] == root for root in self._roots[sep] if len(literal) >= len(root))

    def _reversed_domain(self, module: str) -> bool:
        """Whether the module is Java's or Kotlin's, named by a reversed domain (`com.acme.app`): its
        first segment alone (`com`, `org`) is no package of the tree's own."""
        files = self.matcher.graph.snapshot.files
        return any(
            (e := files.get(p)) is not None and e.language in _REVERSED_DOMAIN for p in self.matcher.paths_of(module)
        )

    def _defined(self, glob: str) -> bool:
        """Whether the glob names a definition or import binding of a module it points into
        (``myapp.db.raw_query``: ``raw_query`` of ``myapp.db``)."""
        path_glob = is_path_glob(glob)
        head, _, last = glob.rpartition("/") if path_glob else ("", "", glob)
        pieces = last.split(".")
        self._read = 0
        for j in range(len(pieces) - 1, 0, -1):
            prefix = "/".join(filter(None, (head, ".".join(pieces[:j]))))
            rest = ".".join(pieces[j:])
            rx = None if path_glob else module_glob_regex(prefix)
            for module in self.matcher.graph.modules:
                if (path_matches(prefix, module) if rx is None else rx.fullmatch(module)) and self._binds(module, rest):
                    return True
        return False

    def _binds(self, module: str, rest: str, depth: int = 0) -> bool:
        """Whether ``module`` defines ``rest``, or binds its first name by an import; a star import
        is followed into the module of the tree it names (any other could bind anything)."""
        snapshot, graph = self.ctx.snapshot(self.revision), self.matcher.graph
        files = self.matcher.paths_of(module)
        if "." not in rest and files and not any(posixpath.basename(p) in _LAYOUT for p in files):
            return True  # a module's own variable (`settings.SECRET_KEY`) is no definition the index holds
        first = module_glob_regex(rest.split(".")[0])
        for path in self.matcher.paths_of(module):
            self._read += 1
            if self._read > MAX_PREFIX_FILES:
                return True  # too wide to read through: assume it names something
            if any(module_matches(rest, d.qualname) for d in snapshot.definitions(path)):
                return True
            for imp in snapshot.imports(path):
                if "*" in imp.names:
                    star = _python_star(graph, snapshot, path, imp)
                    if star is None or star not in graph.modules or depth >= 3 or self._binds(star, rest, depth + 1):
                        return True
                elif any(first.fullmatch(imp.alias or n) for n in imp.names or (imp.module.split(".")[0],)):
                    return True
        return False

    def _used_name(self, glob: str) -> bool:
        if self._used is None:
            graph, snapshot = self.matcher.graph, self.ctx.snapshot(self.revision)
            used: set[str] = set()
            # the names imports write, read in one batch, for calls too: a call graph built only to
            # warn would cost a check of a large tree most of a second
            for path, imports in snapshot.all_imports().items():
                language = snapshot.files[path].language
                for imp in imports:
                    if language == "python":
                        full = _python_absolute(graph, path, imp)
                    else:  # (Rust's `a::b` is named `a.b`, as its edges are)
                        full = imp.module.replace("::", ".") if language == "rust" else imp.module
                    if full:
                        used.add(full)
                        used.update(f"{full}.{n}" for n in imp.names if n != "*")
            self._used = used
        return any(self.matcher.name_matches(glob, n) for n in self._used)


def _roots(names: Iterable[str], sep: str, wide: Callable[[str], bool] = lambda _name: False) -> list[tuple[str, ...]]:
    """Per first segment (the first two for a ``wide`` name: a reversed domain's), the longest start
    every name beginning with it shares."""
    roots: dict[tuple[str, ...], tuple[str, ...]] = {}
    for name in names:
        parts = tuple(name.split(sep))
        key = parts[:2] if len(parts) > 2 and wide(name) else parts[:1]
        have = roots.get(key)
        if have is None:
            roots[key] = parts
        else:
            n = 0
            while n < min(len(have), len(parts)) and have[n] == parts[n]:
                n += 1
            roots[key] = have[:n]
    return list(roots.values())


def _python_star(graph: ImportGraph, snapshot: Snapshot, path: str, imp: Import) -> str | None:
    """The module a Python star import names (None: another language's)."""
    entry = snapshot.files.get(path)
    return _python_absolute(graph, path, imp) if entry is not None and entry.language == "python" else None


def _python_absolute(graph: ImportGraph, path: str, imp: Import) -> str | None:
    """The module a Python import names, made absolute (None: the file has no module, or a
    relative import climbs above the top package)."""
    module = graph.module_of(path)
    if module is None:
        return None
    if not imp.level:
        return imp.module
    package = module if posixpath.basename(path) in ("__init__.py", "__init__.pyi") else module.rpartition(".")[0]
    parts = package.split(".") if package else []
    if imp.level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (imp.level - 1)])
    return f"{base}.{imp.module}" if base and imp.module else base or imp.module


def _renames_modules(ctx: CheckContext) -> bool:
    """Whether the change moves a C# file to another namespace: its module's name."""
    change = ctx.change
    paths = [p for p in change.all_paths if p.endswith(".cs")] if change is not None else []
    if change is None or not paths:
        return False
    base, head = ctx.snapshot(change.base), ctx.snapshot(change.head)
    both = [p for p in paths if p in base.files and p in head.files]
    return csharp_namespaces(base, both) != csharp_namespaces(head, both)


def _chains(
    start: str,
    adjacency: Mapping[str, set[str]],
    useful: set[str],
    hits: Mapping[str, list[tuple[_T, tuple[str, str]]]],
    seen: set[str],
) -> Iterator[tuple[_T, tuple[str, str], list[str]]]:
    """Breadth-first from `start` through the nodes that can reach a hit: (what hit, the target,
    the shortest chain start -> … -> the node that hits), each target once."""
    if start not in useful:
        return
    came_from = {start: start}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for nxt in sorted(adjacency.get(here, ())):
            if nxt in came_from or nxt not in useful:
                continue
            came_from[nxt] = here
            queue.append(nxt)
            for payload, hit in hits.get(nxt, ()):
                if hit[0] in seen:
                    continue
                seen.add(hit[0])
                chain = [nxt]
                while chain[-1] != start:
                    chain.append(came_from[chain[-1]])
                chain.reverse()
                yield payload, hit, chain


def _call_hit(matcher: _Matcher, targets: Sequence[str], edge: CallEdge) -> tuple[str, str] | None:
    """(the callee, the glob) when a target matches the call: a call into an npm package by the
    package's name, as its import is (`kit.*` names packages like kit.merge, not kit's own
    `debounce`), else by the callee."""
    hit = matcher.first_target(targets, (edge.package or edge.callee,))
    return (edge.callee, hit[1]) if hit else None


def _reaching(adjacency: dict[str, set[str]], hits: Iterable[str]) -> set[str]:
    """Every node with a path to one of ``hits`` (hits included)."""
    reverse: dict[str, set[str]] = {}
    for src, dsts in adjacency.items():
        for dst in dsts:
            reverse.setdefault(dst, set()).add(src)
    seen = set(hits)
    queue = deque(seen)
    while queue:
        here = queue.popleft()
        for prev in reverse.get(here, ()):
            if prev not in seen:
                seen.add(prev)
                queue.append(prev)
    return seen


def _import_sites(graph: ImportGraph) -> dict[str, list[_Site]]:
    """Per file, each imported name with its candidates (absolute name first, then its module)."""
    snapshot = graph.snapshot
    sites: dict[str, list[_Site]] = {}
    python = {p for p, e in snapshot.files.items() if e.language == "python"}
    for path in sorted(python):
        if graph.module_of(path) is None:
            continue
        out = sites.setdefault(path, [])
        for imp in snapshot.imports(path):
            full = _python_absolute(graph, path, imp)
            if not full:
                continue
            if not imp.names:
                out.append(_Site(path, imp.line, (full,)))
            for name in imp.names:
                names = (full,) if name == "*" else (f"{full}.{name}", full)
                out.append(_Site(path, imp.line, names))
    for e in graph.import_edges():
        if e.path not in python:
            sites.setdefault(e.path, []).append(_Site(e.path, e.line, (*e.names, e.imported)))
    return sites
