"""The import graph and a best-effort call graph of a revision, built from its code index.

Module names:

* Python: the dotted name, with package roots found by ``__init__.py`` chains (so a ``src/``
  layout gives ``pkg.sub``; right below ``src/`` a folder without one is a namespace package, PEP 420);
  a file outside any package is its stem.
* JavaScript/TypeScript: the path without its extension (``src/db/index``); relative imports are
  resolved to files (``./x``, ``../y``, ``.js`` written for a ``.ts`` file, ``dir/index.*``), and
  ``#subpath`` imports through the nearest package.json's "imports" map; one it maps to no indexed
  file is still the package's own (named as written, with its members), never an npm package.
* Go: the package import path (``go.mod`` module path + directory), as imports write it.
* Java and Kotlin: the dotted path under ``…/java/``, ``…/kotlin/`` or ``src/`` (``com.acme.Db``),
  so that each imports the other's classes. An import of a member (``a.b.C.Inner``,
  ``a.b.C.Companion.f``) is one of the longest module its name starts with; Kotlin's import of a
  package's top-level function or class (``a.b.closeQuietly``) is one of the file of that package
  that defines it.
* Rust: the path without ``.rs``. A ``use`` path is resolved to the file of the longest module it
  names, in a Cargo package's ``src/`` (a library's ``[lib] path``: beside that root file):
  ``crate::``, ``self::``, ``super::`` (read from the file's module: in an inline ``mod tests``,
  ``super::`` is the file's own), a child module of the file's
  own, or a crate of the repository its package depends on by path (or by ``workspace = true``,
  or through the workspace's ``[patch]``), by the name it uses (``rt::sync::Mutex`` from
  ``rt-util``); what follows is a member of that module, and a module's use of its own items is no
  edge. The edge names it by its crate too (``rt.sync.Mutex``). In a package with a library and a
  binary, a module only ``main.rs`` declares is the binary's: its ``crate::`` is ``main.rs``, which
  no crate names. A ``#[path = "unix/mod.rs"] mod imp;`` module is that file (the first of several,
  one per ``cfg``). A name a module only re-exports (``pub use inner::Thing;``, any ``use`` binding
  it) is an edge to the module that defines it, followed from binding to binding; the edge names
  it both as written and as defined (``src/db/mod.Query``, ``src/db/raw.Query``), so that a
  forbid of either matches, once. A glob (``pub use inner::*;``) is followed to the first module it
  brings the name from (breadth first), unless the module defines the name itself.
  Another crate's path is written with dots (``netio.tcp.Stream``), as calls through ``::`` are
  (``std.process.exit``).
* C and C++: the path without its extension, so a header and its source are one module
  (``src/net/sock``); an ``#include`` is resolved beside the file (``"x.h"``), then to the one file
  whose path ends with what it names (the nearest to the includer when several do).
* Ruby: the path without ``.rb``, below the last ``lib/`` when there is one (``rack/utils``, as
  ``require`` writes it); ``require_relative`` is resolved beside the file.
* PHP: the class name by composer.json's PSR-4 prefixes (``App.Http.Kernel`` for
  ``app/Http/Kernel.php`` under ``"App\\": "app/"``), else the path without ``.php``; ``use``
  clauses name classes, internal when one is indexed.
* C#: the namespace the file declares first (``Acme.Data``: every file of it is one module, as a
  Go package is), else the path without ``.cs``. ``using Acme.Data;`` imports it; ``using static
  Acme.Data.Db;`` and ``using D = Acme.Data.Db;`` import the type's namespace. A call resolves
  through the types of the file's own namespace, the namespaces enclosing it and those it uses.

Python imports follow grimp's rule, so the internal edges equal ``grimp.build_graph``'s: each
imported name ``F`` (``import a.b`` → ``a.b``; ``from a import b`` → ``a.b``; ``from a import *``
→ ``a.*``) is an import of ``F`` if ``F`` is a module, else of its parent if that is one, else of
nothing internal. Imports inside functions and ``if TYPE_CHECKING:`` blocks count; a module
importing itself is an edge too.

Calls are resolved through the file's import bindings and its own top-level definitions:
``import myapp.db as d; d.raw_query()`` and ``from myapp.db import raw_query as rq; rq()`` both
call ``myapp.db.raw_query``; ``self.m()`` in a method calls ``module.Class.m``. A callee nothing
explains stays as written with ``resolved=False``. Resolved names join module and member with
``.`` in every language (``src/db/index.query``, ``example.com/app/db.Open``).

Limits: two Python packages with one name in a repository (``tests/`` and ``sub/tests/`` in a
monorepo) share module names, and the first by path answers :meth:`ImportGraph.path_of`; calls
through attributes of objects (``self.db.query()``, ``obj.m()``) are not typed, so they stay
unresolved; TypeScript path aliases (``@/x``) are treated as external.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import takewhile
from typing import TYPE_CHECKING, Any

from .codeindex import Snapshot

if TYPE_CHECKING:
    from .symbols import Definition, FileSymbols, Import

_JS_EXTS = (".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_JS_LANGS = frozenset({"javascript", "typescript", "tsx"})
_C_LANGS = frozenset({"c", "cpp"})
# Headers of the C standard library and POSIX (and Windows'): an include of one is the system's.
_SYSTEM_HEADER_NAMES = """
    assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h
    setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbit.h stdbool.h stdckdint.h stddef.h stdint.h
    stdio.h stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h aio.h
    dirent.h dlfcn.h fcntl.h fnmatch.h glob.h grp.h iconv.h langinfo.h libgen.h netdb.h poll.h
    pthread.h pwd.h regex.h sched.h semaphore.h spawn.h strings.h syslog.h termios.h unistd.h utime.h
    arpa/inet.h net/if.h netinet/in.h netinet/tcp.h windows.h winsock2.h ws2tcpip.h
"""
_SYSTEM_HEADERS = frozenset(_SYSTEM_HEADER_NAMES.split())
_SOURCE_SET = re.compile(r"(?:^|/)src/[^/]+/(?:java|kotlin)/")  # Gradle's and Maven's source roots
# `namespace A.B {`, `namespace A.B;`, then maybe a comment: a line of prose naming a namespace is none
# (a line's own indent, `[^\S\n]*`: `^\s*` ran from every line start over all the blank lines below it)
_CS_NAMESPACE = re.compile(r"^[^\S\n]*namespace\s+(@?\w+(?:\s*\.\s*@?\w+)*)\s*(?:[{;]|//|/\*|$)", re.MULTILINE)
# Bump when module names or edges change: what the index cache keeps of them (importers, `why`'s
# neighbours) is read again.
# 2: C# namespaces are modules. 3: Java and Kotlin imports of members and top-level functions.
# 4: Rust `use` paths resolved to the crate's module files. 5: only to the crates a package depends on.
# 6: Python namespace packages below `src/`.
# 7: Rust: a binary's modules' `crate::` is main.rs; `#[path]` modules; re-exports to where defined;
# JS call edges name the package they call into. 8: only a folder right below `src/` is a namespace package.
# 9: JS default imports bind the module, `#subpath` imports; Rust glob re-exports, `[lib] path`.
GRAPH_VERSION = "9"
_TYPE_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "impl"})
# A Rust module declaration (`pub(crate) mod x;`, `mod x {`), after its attributes (from a line start,
# its own indent only: `^\s*` ran from every line start over all the blank lines below it)
_RUST_MOD = re.compile(r"(?:^[^\S\n]*|[;{}\]]\s*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(?:r#)?(\w+)\s*[;{]", re.MULTILINE)
_RUST_LINE_COMMENT = re.compile(r"//[^\n]*")
_MOD_RS = ("/mod.rs", "/lib.rs", "/main.rs")  # files whose child modules are in their own folder
# the folders (and build script) beside a package's Cargo.toml that cargo compiles as crates of their own
_CARGO_OWN_CRATES = frozenset({"tests", "benches", "examples", "build"})
_REEXPORT_HOPS = 8  # `pub use` followed from module to module, at most
# `#[path = "unix/mod.rs"]` (maybe among other attributes) on `mod imp;`
_RUST_PATH_MOD = re.compile(
    r'#\[\s*path\s*=\s*"([^"]+)"\s*\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(?:r#)?(\w+)\s*;'
)
_Place = tuple[str, list[str], str]  # a Rust file's package `src/`, its module path there, its crate's root file


@dataclass(frozen=True, slots=True)
class ImportEdge:
    importer: str  # module name of the importing file
    imported: str  # an indexed module when internal, else the name as written
    path: str  # the importing file
    line: int
    internal: bool
    names: tuple[str, ...] = ()  # the members it imports by name, in full (`src/db.raw`), where known


@dataclass(frozen=True, slots=True)
class CallEdge:
    caller: str  # the calling module, or module.Qual.name of the calling definition
    callee: str  # resolved dotted name, or the callee as written when unresolved
    path: str
    line: int
    resolved: bool
    # the npm package it calls into, through the file's import of it (`debounce()` after `import {
    # debounce } from 'kit'`: kit), as its import names it: npm names hold dots
    package: str = ""


class ImportGraph:
    """Import edges module → module and call edges symbol → name for one snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        imports = self._imports = snapshot.all_imports()  # of the restricted paths only, for a restricted view
        self._module_of: dict[str, str] = {}
        self._go_mods: dict[str, str | None] = {}
        self._manifests: dict[str, dict[str, Any] | None] = {}  # a folder -> its Cargo.toml, read (None: none)
        self._package_jsons: dict[str, dict[str, Any] | None] = {}  # a folder -> its package.json's "imports"
        self._package_crates: dict[str, dict[str, str]] = {}  # a Cargo package's folder -> the crates it may `use`
        self._folder_crates: dict[str, dict[str, str]] = {}  # the same per folder of its files (asked per `use`)
        self._libraries: dict[str, str | None] = {}  # a Cargo package's folder -> its library's crate name
        self._mods: dict[str, frozenset[str]] = {}  # a Rust crate root -> the modules it declares
        self._path_mods: dict[str, dict[str, str]] | None = None  # a Rust file -> its `#[path]` modules' files
        self._uses: dict[str, list[tuple[Import, list[str], tuple[str, str, str] | None]]] = {}  # Rust, resolved
        self._exports: dict[str, dict[str, tuple[str, str, str]]] = {}  # Rust: a file's `use` bindings, resolved
        self._rust_modules: dict[tuple[str, tuple[str, ...], str], str | None] = {}  # `_rust_module`'s answers
        self._whole: Snapshot | None = None  # the snapshot with every file's imports, of a restricted view
        self._headers: dict[str, list[str]] | None = None  # C and C++ files by name, for includes
        self._namespaces: dict[str, dict[str, str]] | None = None  # PHP classes by namespace
        self._scopes: dict[str, list[str]] = {}  # C# file → the internal namespaces its calls see
        self._name_modules({path: entry.language for path, entry in snapshot.files.items()})
        self.modules: dict[str, str] = {}  # module → path (first by path order on a clash)
        for path in sorted(self._module_of):
            self.modules.setdefault(self._module_of[path], path)
        self._import_edges: list[ImportEdge] = []
        self._calls: list[CallEdge] | None = None  # built on first use: most questions are about imports
        self._bindings: dict[str, dict[str, str]] = {}  # path → name → what it is bound to
        self._npm: dict[str, dict[str, str]] = {}  # JS path → name → the package it is bound into
        self._members: list[tuple[str, str, Import, str]] = []  # Kotlin imports of package members, to resolve
        for path in sorted(imports):
            self._add_file(path, snapshot.files[path].language, imports[path])
        self._package_members()
        self._adjacency: dict[str, set[str]] = {}
        for e in self._import_edges:
            self._adjacency.setdefault(e.importer, set()).add(e.imported)

    # --- queries ------------------------------------------------------------------------------
    def module_of(self, path: str) -> str | None:
        return self._module_of.get(path)

    def path_of(self, module: str) -> str | None:
        return self.modules.get(module)

    def import_edges(self) -> list[ImportEdge]:
        return list(self._import_edges)

    def call_edges(self) -> list[CallEdge]:
        return list(self._call_edges)

    @property
    def _call_edges(self) -> list[CallEdge]:
        """Call edges, resolved through each file's import bindings (the files' definitions and
        calls are decoded here, on the first question about calls)."""
        if self._calls is None:
            self._calls = []
            symbols = self.snapshot.all_symbols()
            # the types of the namespaces files with calls see (in a partial graph, few files have any)
            seen = {n for p, scope in self._scopes.items() if (fs := symbols.get(p)) and fs.calls for n in scope}
            types = self._csharp_types(seen) if seen else {}
            for path in sorted(self._bindings):
                fs = symbols.get(path)
                if fs is not None:
                    bindings = self._bindings[path]
                    for namespace in self._scopes.get(path, ()):  # the innermost namespace first
                        bindings = types.get(namespace, {}) | bindings
                    self._add_calls(path, self._module_of[path], fs, bindings, self._npm.get(path, {}))
        return self._calls

    def edges(self, *, external: bool = False) -> set[tuple[str, str]]:
        """(importer, imported) module pairs; internal only unless ``external``."""
        return {(e.importer, e.imported) for e in self._import_edges if external or e.internal}

    def imports_of(self, module: str) -> set[str]:
        """What a module imports directly (indexed modules and external names)."""
        return set(self._adjacency.get(module, ()))

    def importers_of(self, module: str) -> set[str]:
        return {e.importer for e in self._import_edges if e.imported == module}

    def path(self, src: str, dst: str) -> list[str] | None:
        """A shortest import chain from ``src`` to ``dst`` (both included), or None."""
        if src == dst:
            return [src]
        came_from: dict[str, str] = {src: src}
        queue = deque([src])
        while queue:
            here = queue.popleft()
            for nxt in sorted(self._adjacency.get(here, ())):
                if nxt in came_from:
                    continue
                came_from[nxt] = here
                if nxt == dst:
                    chain = [dst]
                    while chain[-1] != src:
                        chain.append(came_from[chain[-1]])
                    return chain[::-1]
                queue.append(nxt)
        return None

    def calls_from(self, caller: str) -> list[CallEdge]:
        """Call edges whose caller is ``caller`` or nested in it (``mod`` covers ``mod.f``)."""
        return [c for c in self._call_edges if c.caller == caller or c.caller.startswith(caller + ".")]

    # --- module names -------------------------------------------------------------------------
    def _name_modules(self, languages: Mapping[str, str]) -> None:
        by_lang: dict[str, list[str]] = {}
        for path, language in languages.items():
            by_lang.setdefault(language, []).append(path)
        py = by_lang.get("python", [])
        init_dirs = {posixpath.dirname(p) for p in py if posixpath.basename(p) in ("__init__.py", "__init__.pyi")}
        # .py before .pyi so a stub never shadows its module
        for path in sorted(py, key=lambda p: (p.endswith(".pyi"), p)):
            self._module_of[path] = _python_module(path, init_dirs)
        for lang in _JS_LANGS:
            for path in by_lang.get(lang, []):
                self._module_of[path] = _strip_js_ext(path)
        for path in by_lang.get("go", []):
            self._module_of[path] = self._go_package(posixpath.dirname(path))
        for path in by_lang.get("java", []) + by_lang.get("kotlin", []):
            self._module_of[path] = _java_module(path)
        for path in by_lang.get("rust", []):
            self._module_of[path] = path[:-3]
        for lang in _C_LANGS:
            for path in by_lang.get(lang, []):
                self._module_of[path] = posixpath.splitext(path)[0]
        for path in by_lang.get("ruby", []):
            self._module_of[path] = _ruby_module(path)
        if cs := by_lang.get("csharp", []):
            for path, namespace in csharp_namespaces(self.snapshot, cs).items():
                self._module_of[path] = namespace or path.removesuffix(".cs")
        if php := by_lang.get("php", []):
            prefixes = self._psr4()
            for path in php:
                self._module_of[path] = _php_module(path, prefixes)

    def _psr4(self) -> list[tuple[str, str]]:
        try:
            return psr4_prefixes(json.loads(self.snapshot.blob_text("composer.json")))
        except (KeyError, ValueError, RecursionError):  # none, not JSON, or nested beyond the parser
            return []

    def _go_package(self, directory: str) -> str:
        """The import path of the Go package in ``directory``, from the nearest go.mod."""
        d = directory
        while True:
            module = self._go_module_at(d)
            if module is not None:
                rel = directory[len(d) :].lstrip("/") if d else directory
                return f"{module}/{rel}" if rel else module
            if not d:
                return directory or "."
            d = posixpath.dirname(d)

    def _go_module_at(self, directory: str) -> str | None:
        if directory not in self._go_mods:
            gomod = posixpath.join(directory, "go.mod") if directory else "go.mod"
            try:
                text = self.snapshot.blob_text(gomod)
            except KeyError:
                self._go_mods[directory] = None
            else:
                m = re.search(r"^[^\S\n]*module\s+\"?([^\s\"]+)", text, re.MULTILINE)
                self._go_mods[directory] = m.group(1) if m else None
        return self._go_mods[directory]

    # --- edges --------------------------------------------------------------------------------
    def _add_file(self, path: str, language: str, imports: tuple[Import, ...]) -> None:
        module = self._module_of.get(path)
        if module is None:
            return
        if language == "python":
            bindings = self._python_imports(path, module, imports)
        elif language in _JS_LANGS:
            bindings = self._js_imports(path, module, imports)
        elif language == "go":
            bindings = self._go_imports(path, module, imports)
        elif language in ("java", "kotlin"):
            bindings = self._java_imports(path, module, imports, language == "kotlin")
        elif language in _C_LANGS:
            bindings = self._include_edges(path, module, imports)
        elif language == "ruby":
            bindings = self._require_edges(path, module, imports)
        elif language == "php":
            bindings = self._php_imports(path, module, imports)
        elif language == "csharp":
            bindings = self._using_edges(path, module, imports)
        elif language == "rust":
            bindings = self._use_edges(path, module, imports)
        else:
            bindings = {}
            for imp in imports:
                name = "::".join(p for p in (imp.module, *imp.names) if p)
                self._edge(module, name, path, imp.line, False)
        self._bindings[path] = bindings

    def _edge(
        self, importer: str, imported: str, path: str, line: int, internal: bool, names: tuple[str, ...] = ()
    ) -> None:
        self._import_edges.append(ImportEdge(importer, imported, path, line, internal, names))

    def _python_imports(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        is_package = posixpath.basename(path) in ("__init__.py", "__init__.pyi")
        package = module if is_package else module.rpartition(".")[0]
        bindings: dict[str, str] = {}
        for imp in imports:
            if imp.level:
                parts = package.split(".") if package else []
                if imp.level - 1 >= len(parts):
                    continue  # beyond the top-level package: an error when run
                base = ".".join(parts[: len(parts) - (imp.level - 1)])
                full = f"{base}.{imp.module}" if base and imp.module else base or imp.module
            else:
                full = imp.module
            if not imp.names:  # import a.b.c [as x]
                self._python_edge(module, full, path, imp.line)
                if imp.alias:
                    bindings[imp.alias] = full
                else:
                    head = full.split(".")[0]
                    bindings[head] = head
                continue
            for name in imp.names:
                self._python_edge(module, f"{full}.{name}", path, imp.line)
                if name != "*":
                    bindings[imp.alias or name] = f"{full}.{name}"
        return bindings

    def _python_edge(self, importer: str, name: str, path: str, line: int) -> None:
        parent = name.rpartition(".")[0]
        if name in self.modules:
            self._edge(importer, name, path, line, True)
        elif parent in self.modules:
            self._edge(importer, parent, path, line, True)
        else:
            self._edge(importer, parent if name.endswith(".*") else name, path, line, False)

    def _js_imports(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        bindings: dict[str, str] = {}
        packages: dict[str, str] = {}  # a name bound into a package -> the package (none: the tree's own)
        edges: set[tuple[str, int, tuple[str, ...]]] = set()
        for imp in imports:
            target = self._resolve_js(path, imp.module)
            internal = target is not None
            own = internal or imp.module.startswith("#")  # a `#subpath` is the package's own, mapped or not
            name = target if target is not None else imp.module
            # `import db from` takes the module's default export: the module itself, as Python's `import db`.
            # Only the tree's own modules name members: npm names hold dots (`get` of `util` is no package `util.get`)
            names = imp.names if own else ()
            members = tuple(f"{name}.{n}" for n in names if n not in ("*", "default"))
            if (name, imp.line, members) not in edges:  # `import { a, b } from 'kit'`: kit once
                edges.add((name, imp.line, members))
                self._edge(module, name, path, imp.line, internal, members)
            if imp.alias is None:
                continue
            if imp.names in ((), ("*",), ("default",)):  # the default export: the module, as `require` binds it
                bindings[imp.alias] = name
            else:
                bindings[imp.alias] = f"{name}.{imp.names[0]}"
            packages[imp.alias] = "" if own else imp.module
        for imp in imports:  # named imports without alias bind their own name
            if imp.alias is None and imp.names and imp.names[0] not in ("*", "default"):
                target = self._resolve_js(path, imp.module)
                bindings[imp.names[0]] = f"{target or imp.module}.{imp.names[0]}"
                packages[imp.names[0]] = "" if target is not None or imp.module.startswith("#") else imp.module
        if any(packages.values()):
            self._npm[path] = {n: p for n, p in packages.items() if p}
        return bindings

    def _resolve_js(self, path: str, spec: str) -> str | None:
        if spec.startswith("#"):
            return self._resolve_subpath(path, spec)
        if not spec.startswith((".", "/")):
            return None
        return self._js_file(posixpath.normpath(posixpath.join(posixpath.dirname(path), spec)).lstrip("/"))

    def _resolve_subpath(self, path: str, spec: str) -> str | None:
        """The module a `#subpath` import names through the "imports" map of the nearest package.json
        (Node's rule): the exact key, else the pattern with the longest start before its `*`; of
        several targets (conditions, a list), the first that is an indexed file."""
        folder = posixpath.dirname(path)
        while (mapping := self._subpaths(folder)) is None and folder:
            folder = posixpath.dirname(folder)
        if not mapping:
            return None
        target, star = mapping.get(spec), ""
        if target is None:
            patterns = [k for k in mapping if k.count("*") == 1 and len(k) <= len(spec)]
            for key in sorted(patterns, key=lambda k: -len(k.partition("*")[0])):
                head, _, tail = key.partition("*")
                if spec.startswith(head) and spec.endswith(tail) and len(spec) >= len(head) + len(tail):
                    target, star = mapping[key], spec[len(head) : len(spec) - len(tail)]
                    break
        for written in _subpath_targets(target):
            if written.startswith("./"):
                base = posixpath.normpath(posixpath.join(folder, written.replace("*", star))).lstrip("/")
                if (found := self._js_file(base)) is not None:
                    return found
        return None

    def _subpaths(self, folder: str) -> dict[str, Any] | None:
        """The "imports" map of a folder's package.json: None when it has no package.json, {} when
        the file names none (or is no JSON object)."""
        if folder not in self._package_jsons:
            try:
                manifest = json.loads(self.snapshot.blob_text(posixpath.join(folder, "package.json")))
            except KeyError:
                self._package_jsons[folder] = None
            except (ValueError, RecursionError):
                self._package_jsons[folder] = {}
            else:
                found = manifest.get("imports") if isinstance(manifest, dict) else None
                self._package_jsons[folder] = found if isinstance(found, dict) else {}
        return self._package_jsons[folder]

    def _js_file(self, base: str) -> str | None:
        """The module of the JS or TS file a path names: itself, with an extension (`.js` written for
        a `.ts` file), or its folder's index."""
        stem = _strip_js_ext(base)
        files = self.snapshot.files
        if base in files:
            return self._module_of.get(base)
        for candidate in (stem, base, posixpath.join(base, "index")):
            for ext in _JS_EXTS:
                if candidate + ext in files:
                    return self._module_of.get(candidate + ext)
        return None

    def _go_imports(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        bindings: dict[str, str] = {}
        for imp in imports:
            internal = imp.module in self.modules
            self._edge(module, imp.module, path, imp.line, internal)
            name = imp.alias
            if name is None:
                segments = imp.module.split("/")
                name = segments[-2] if len(segments) > 1 and re.fullmatch(r"v\d+", segments[-1]) else segments[-1]
                # the usual package name: go-sqlite3 → sqlite3, yaml.v3 → yaml
                name = re.sub(r"\.v\d+$", "", name.replace("-", "_")).removeprefix("go_")
            if name not in ("_", "."):
                bindings[name] = imp.module
        return bindings

    def _java_imports(self, path: str, module: str, imports: Iterable[Import], kotlin: bool) -> dict[str, str]:
        bindings: dict[str, str] = {}
        for imp in imports:
            if imp.names == ("*",):
                self._edge(module, imp.module, path, imp.line, imp.module in self.modules)
                continue
            name = f"{imp.module}.{imp.names[0]}" if imp.module else imp.names[0]
            bindings[imp.alias or imp.names[0]] = name  # (Kotlin's `import a.B as C` binds C)
            # `import static a.b.C.member`, `import a.b.C.Inner`, `import a.b.C.Companion.f`
            owner = next((m for m in _prefixes(name) if m in self.modules), None)
            if owner is not None:
                self._edge(module, owner, path, imp.line, True)
            elif kotlin and imp.module in self._packages:  # a package's top-level function or class
                self._members.append((path, module, imp, name))
            else:
                self._edge(module, name, path, imp.line, False)
        return bindings

    @cached_property
    def _packages(self) -> set[str]:
        """The packages Java and Kotlin modules are in (`a.b` for `a.b.Db`)."""
        return {m.rpartition(".")[0] for p, m in self._module_of.items() if p.endswith((".kt", ".kts", ".java"))}

    def _package_members(self) -> None:
        """Kotlin's imports of a package's top-level function or class, resolved to the file of the
        package that defines it (its definitions read, for those packages only), else external."""
        if not self._members:
            return
        wanted = {imp.module for _, _, imp, _ in self._members}
        defined: dict[str, str] = {}  # `a.b.f` -> the module of the file that defines it
        for package, module, d in self._top_level("kotlin", wanted, lambda m: m.rpartition(".")[0]):
            defined.setdefault(f"{package}.{d.qualname.split('#')[0]}", module)  # (`f#2`: an overload)
        for path, module, imp, name in self._members:
            owner = defined.get(name)
            self._edge(module, owner or name, path, imp.line, owner is not None)
            if owner is not None:
                self._bindings[path][imp.alias or imp.names[0]] = f"{owner}.{imp.names[0]}"

    def _include_edges(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        for imp in imports:
            target = self._resolve_include(path, imp.module, imp.level)
            self._edge(module, target or imp.module, path, imp.line, target is not None)
        return {}

    def _resolve_include(self, path: str, written: str, beside: int) -> str | None:
        """The module an include names: the file beside the includer (for `"x.h"`), else the
        indexed C or C++ file whose path ends with it, the nearest to the includer of several."""
        files = self.snapshot.files
        if beside:
            here = posixpath.normpath(posixpath.join(posixpath.dirname(path), written))
            if here in files and files[here].language in _C_LANGS:
                return self._module_of.get(here)
        if self._headers is None:
            self._headers = {}
            for p, entry in files.items():
                if entry.language in _C_LANGS:
                    self._headers.setdefault(posixpath.basename(p), []).append(p)
        name = posixpath.normpath(written)
        if name in _SYSTEM_HEADERS or name.startswith("sys/"):
            return None  # the system's, not a vendored namesake (a library's test/math.h)
        found = [
            p
            for p in self._headers.get(posixpath.basename(name), [])
            if p != path and (p == name or p.endswith("/" + name))
        ]
        if not found:
            return None
        folder = posixpath.dirname(path).split("/")
        best = max(found, key=lambda p: (_shared(folder, p.split("/")), -len(p), p))
        return self._module_of.get(best)

    def _require_edges(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        for imp in imports:
            if imp.level:  # require_relative
                here = posixpath.normpath(posixpath.join(posixpath.dirname(path), imp.module))
                target = self._module_of.get(here if here.endswith(".rb") else here + ".rb")
            else:
                name = imp.module.removesuffix(".rb")
                target = name if name in self.modules else None
            self._edge(module, target or imp.module, path, imp.line, target is not None)
        return {}

    def _use_edges(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        bindings: dict[str, str] = {}
        for imp, segments, found in self._rust_uses(path, imports):
            if found is None:
                name = ".".join(segments)
                self._edge(module, name, path, imp.line, False)
            else:
                target, member, by_crate = found
                name = f"{target}.{member}" if member else target
                # named by its path, and by its crate's (`rt.sync.Mutex`), as a Rust glob may name it
                names: tuple[str, ...] = (name if member else "", by_crate)
                # a name the module re-exports: an edge to where it is defined, named both ways (its
                # own re-exports, `use super::Thing` in its `mod tests`, are no new edge)
                defined = self._reexported(target, member) if member and target != module else None
                if defined is not None and defined[0] not in (module, target):
                    target, member, by_crate = defined
                    names += (f"{target}.{member}" if member else "", by_crate)
                if target != module:  # its own items (`use super::*` in its `mod tests`): no edge
                    self._edge(module, target, path, imp.line, True, tuple(dict.fromkeys(n for n in names if n)))
            if segments and segments[-1] != "self":
                bindings[imp.alias or segments[-1]] = name
        return bindings

    def _rust_uses(
        self, path: str, imports: Iterable[Import] | None = None
    ) -> list[tuple[Import, list[str], tuple[str, str, str] | None]]:
        """Each `use` of a Rust file (`imports`, else read from the whole snapshot) with its path's
        segments and `_resolve_use`'s answer. Kept per file when read from the whole snapshot: a file
        re-exporting names is asked again by each file using them (a restricted view's other files
        come with no imports, so theirs are read)."""
        found = self._uses.get(path)
        if found is None:
            whole = self._whole_snapshot()
            if imports is None or whole is self.snapshot:
                if imports is None:
                    imports = self._imports.get(path, ()) if whole is self.snapshot else whole.imports(path)
                found = self._uses[path] = []
            else:
                found = []
            place = self._rust_place(path)
            for imp in imports:
                segments = [s for s in imp.module.split("::") if s] + [n for n in imp.names if n != "*"]
                found.append((imp, segments, self._resolve_use(path, place, segments)))
        return found

    def _whole_snapshot(self) -> Snapshot:
        if self._whole is None:
            self._whole = self.snapshot.whole()
        return self._whole

    def _reexported(self, target: str, member: str) -> tuple[str, str, str] | None:
        """Where a Rust module's member is defined when the module only re-exports it (`pub use
        inner::Thing;` in `a`, for `crate::a::Thing`): `_resolve_use`'s answer for the `use` binding its
        first name, else the module a glob (`pub use inner::*;`) brings it from, followed through
        further re-exports; None when the module binds no such name (it defines it). Code that
        compiles binds a name once in a module, so the binding is the name's."""
        found = None
        seen = {(target, member)}
        while (path := self.path_of(target)) is not None and len(seen) <= _REEXPORT_HOPS:
            head, _, rest = member.partition(".")
            binding = self._rust_exports(path).get(head) or self._globbed(path, head)
            if binding is None:
                break
            target, inner, by_crate = binding
            member = ".".join(p for p in (inner, rest) if p)
            found = target, member, f"{by_crate}.{rest}" if by_crate and rest else by_crate
            if not member or (target, member) in seen:
                break
            seen.add((target, member))
        return found

    def _globbed(self, path: str, name: str) -> tuple[str, str, str] | None:
        """(module, name, the name by its crate) of the module of the repository a Rust file's glob
        `use`s (`pub use inner::*;`) bring `name` from: the first, breadth first through their own
        globs, that defines it or binds it by a `use`; None when the file defines it itself (a name
        of its own shadows a glob's) or no glob brings it."""
        todo = deque(self._rust_globs(path))
        if not todo or self._defines(path, name):
            return None
        seen = {path}
        while todo and len(seen) <= _REEXPORT_HOPS:
            target, by_crate = todo.popleft()
            where = self.path_of(target)
            if where is None or where in seen:
                continue
            seen.add(where)
            if name in self._rust_exports(where) or self._defines(where, name):
                return target, name, f"{by_crate}.{name}" if by_crate else ""
            todo.extend(self._rust_globs(where))
        return None

    def _rust_globs(self, path: str) -> list[tuple[str, str]]:
        """(module, its name by its crate) of each module of the repository a Rust file's globs use."""
        return [
            (resolved[0], resolved[2])
            for imp, _, resolved in self._rust_uses(path)
            if "*" in imp.names and resolved is not None and not resolved[1]
        ]

    def _defines(self, path: str, name: str) -> bool:
        """Whether a file has a top-level definition of `name` (`Thing`, `Thing#2`)."""
        return any(d.qualname.split("#")[0] == name for d in self._whole_snapshot().definitions(path))

    def _rust_exports(self, path: str) -> dict[str, tuple[str, str, str]]:
        """The names a Rust file's `use`s bind to modules of the repository (not its globs')."""
        found = self._exports.get(path)
        if found is None:
            found = self._exports[path] = {
                imp.alias or segments[-1]: resolved
                for imp, segments, resolved in self._rust_uses(path)
                if resolved is not None and segments and "*" not in imp.names
            }
        return found

    def _resolve_use(self, path: str, place: _Place | None, segments: list[str]) -> tuple[str, str, str] | None:
        """(the module a `use` path in file `path` names, the rest as a member, the whole as its
        crate names it: `rt.sync.Mutex`, or "" for a crate no other can use) when it is of this
        repository: the longest prefix that is a module file, from where the path starts (`crate`,
        `self`, `super`, a child module, a crate of the repository the file's package depends on);
        None for another crate's, or a module not found."""
        if not segments or segments[0] == "*":
            return None
        first = segments[0]
        if first in ("crate", "self", "super"):
            if place is None:
                return None  # a test, bench or example: a crate of its own, not this package's
            src, base, root = place[0], list(place[1]), place[2]
            rest = segments[1:]
            if first == "crate":
                base = []
            elif first == "super":
                while True:
                    if not base:
                        return None
                    base.pop()
                    if not rest or rest[0] != "super":
                        break
                    rest = rest[1:]
        elif place is not None and self._rust_module(place[0], [*place[1], first]) is not None:
            src, base, rest, root = place[0], list(place[1]), segments, place[2]  # a child module: `use db::x`
        elif first in (crates := self._crates_seen_from(path)):
            (src, root), base, rest = posixpath.split(crates[first]), [], segments[1:]
        else:
            return None
        # the binary's crate (main.rs's tree) is no crate another can use: it has no such name
        package = self._package_of(src) if root != "main.rs" else None
        crate = (self._library(package) or "") if package is not None else ""
        for n in range(len(rest), -1, -1):
            target = self._rust_module(src, base + rest[:n], root)
            if target is not None:
                return target, ".".join(rest[n:]), ".".join([crate, *base, *rest]) if crate else ""
        return None

    def _rust_module(self, src: str, segments: list[str], root: str = "lib.rs") -> str | None:
        """The module of the file that holds module `segments` of the crate whose source is in `src`
        and whose root is `root` (the library's, `lib.rs` or its `[lib] path`, else `main.rs`; the
        other when the package has no such file)."""
        key = (src, tuple(segments), root)
        if key not in self._rust_modules:
            self._rust_modules[key] = self._find_rust_module(src, segments, root)
        return self._rust_modules[key]

    def _find_rust_module(self, src: str, segments: list[str], root: str) -> str | None:
        folder = posixpath.join(src, *segments) if segments else src
        other = "lib.rs" if root == "main.rs" else "main.rs"
        candidates = (
            [f"{folder}.rs", posixpath.join(folder, "mod.rs")]
            if segments
            else [posixpath.join(src, root), posixpath.join(src, other)]
        )
        found = next((self._module_of[c] for c in candidates if c in self._module_of), None)
        if found is None and segments and (parent := self._rust_module(src, segments[:-1], root)) is not None:
            # a `#[path]` module; a child of one is beside its file (rustc reads a file `#[path]` names
            # as a mod.rs), not where its path says
            where, name = self.path_of(parent) or "", segments[-1]
            candidates = [self._attributed(where).get(name, "")]
            up = posixpath.dirname(folder)  # the parent's folder, where its path says
            if segments[:-1] and where not in (f"{up}.rs", f"{up}/mod.rs"):  # a `#[path]` parent
                beside = posixpath.dirname(where)
                folders = [beside] if where.endswith(_MOD_RS) else [where[:-3], beside]
                candidates += [f"{f}/{name}{end}" for f in folders for end in (".rs", "/mod.rs")]
            found = next((self._module_of[c] for c in candidates if c in self._module_of), None)
        return found

    def _attributed(self, path: str) -> dict[str, str]:
        """The files of the modules a Rust file declares with a `#[path]`, by name."""
        if self._path_mods is None:
            rust = [p for p, entry in self.snapshot.files.items() if entry.language == "rust"]
            self._path_mods = rust_path_modules(self.snapshot, rust)
        return self._path_mods.get(path, {})

    def _rust_place(self, path: str) -> _Place | None:
        """`_rust_place`'s (src, module path) of a Rust file, with the root of the crate whose module
        tree holds it: a package with a library and a binary compiles `src/` twice, and a module only
        `main.rs` declares (`mod cli;`) is the binary's, where `crate::` is main.rs. A library's
        `[lib] path` (`src/mylib.rs`, `lib.rs`) is its root, whose folder holds its modules."""
        place = _rust_place(path)
        package = self._package_of(posixpath.dirname(path))
        lib = self._lib_root(package) if package is not None else None
        folder, name = posixpath.split(lib) if lib is not None else ("", "lib.rs")
        if lib is not None and lib != posixpath.join(package or "", "src", "lib.rs"):  # a `[lib] path`
            if path == lib:
                return folder, [], name
            inner = path[len(folder) + 1 if folder else 0 : -3].split("/")
            if (
                place is None  # beside the root, but not a binary's, test's, bench's, example's or build.rs
                and (not folder or path.startswith(folder + "/"))
                and not (inner[0] in _CARGO_OWN_CRATES if folder == package else inner[0] == "bin")
            ):
                return folder, inner[:-1] if inner[-1] == "mod" else inner, name
        if place is None:
            return None
        src, base = place
        root = name if src == folder else "lib.rs"
        lib, main = posixpath.join(src, root), posixpath.join(src, "main.rs")
        if main not in self._module_of:
            return src, base, root
        if lib not in self._module_of or path == main:
            return src, base, "main.rs"
        binary = bool(base) and base[0] in self._declared(main) and base[0] not in self._declared(lib)
        return src, base, "main.rs" if binary else root

    def _lib_root(self, package: str) -> str:
        """The root file of a Cargo package's library: its `[lib] path` (within the repository),
        else `src/lib.rs`."""
        written = _table(self._manifest(package) or {}, "lib").get("path")
        if isinstance(written, str) and written.endswith(".rs"):
            root = posixpath.normpath(posixpath.join(package, written))
            if root.split("/", 1)[0] != "..":
                return root
        return posixpath.join(package, "src", "lib.rs")

    def _declared(self, root: str) -> frozenset[str]:
        """The modules a crate root file declares (`mod x;`, `pub mod x { … }`), read from its text."""
        if root not in self._mods:
            try:
                text = self.snapshot.blob_text(root)
            except KeyError:  # (a blob the clone lacks)
                text = ""
            self._mods[root] = frozenset(m.group(1) for m in _RUST_MOD.finditer(_RUST_LINE_COMMENT.sub("", text)))
        return self._mods[root]

    def _crates_seen_from(self, path: str) -> dict[str, str]:
        """Crate name -> its library's root file, of the repository's crates a Rust file may `use`: its package's
        own library, and the dependencies its Cargo.toml takes from a path (directly, through
        `workspace = true`, or from a registry the workspace's `[patch]` points at a path), by the
        names its code uses. A package of the repository it does not depend on is none of them:
        a test fixture package named `std` is not what `use std::…` means."""
        folder = posixpath.dirname(path)
        if folder not in self._folder_crates:
            package = self._package_of(folder)
            self._folder_crates[folder] = self._crates_of(package) if package is not None else {}
        return self._folder_crates[folder]

    def _crates_of(self, package: str) -> dict[str, str]:
        if package not in self._package_crates:
            seen: dict[str, str] = {}
            if own := self._library(package):
                seen[own] = self._lib_root(package)
            root = self._workspace_root(package)
            workspace = (self._manifest(root) or {}) if root is not None else {}
            for key, spec in _dependencies(self._manifest(package) or {}):
                folder, renamed = package, "package" in spec
                if spec.get("workspace") is True:
                    folder, spec = root or "", _table(workspace, "workspace", "dependencies", key)
                    renamed = renamed or "package" in spec
                written = spec.get("path")
                if not isinstance(written, str):  # a registry's or git's, unless the workspace patches it
                    name = spec["package"] if isinstance(spec.get("package"), str) else key
                    sources = _table(workspace, "patch").values()
                    patched = (_table(source, name).get("path") for source in sources if isinstance(source, dict))
                    folder, written = root or "", next((p for p in patched if isinstance(p, str)), None)
                if not isinstance(written, str):
                    continue
                target = posixpath.normpath(posixpath.join(folder, written))
                target = "" if target == "." else target
                if target.split("/", 1)[0] != ".." and (library := self._library(target)):
                    # (a renamed dependency is used by its key; another by its library's name)
                    seen[key.replace("-", "_") if renamed else library] = self._lib_root(target)
            self._package_crates[package] = seen
        return self._package_crates[package]

    def _library(self, package: str) -> str | None:
        """The crate name of a package's library (`[lib] name`, else its name with `-` read as `_`),
        when it has one (`src/lib.rs`, or its `[lib] path`)."""
        if package not in self._libraries:
            manifest = self._manifest(package) or {}
            names = (t.get("name") for t in (manifest.get("lib"), manifest.get("package")) if isinstance(t, dict))
            name = next((n for n in names if isinstance(n, str) and n), None)
            has_lib = self._lib_root(package) in self._module_of
            self._libraries[package] = name.replace("-", "_") if name and has_lib else None
        return self._libraries[package]

    def _package_of(self, folder: str) -> str | None:
        """The folder of the Cargo package a folder's files are of: the nearest holding a Cargo.toml."""
        while self._manifest(folder) is None:
            if not folder:
                return None
            folder = posixpath.dirname(folder)
        return folder

    def _workspace_root(self, package: str) -> str | None:
        """The folder of the workspace a package is in: the nearest whose Cargo.toml has `[workspace]`."""
        folder = package
        while not isinstance((self._manifest(folder) or {}).get("workspace"), dict):
            if not folder:
                return None
            folder = posixpath.dirname(folder)
        return folder

    def _manifest(self, folder: str) -> dict[str, Any] | None:
        """The Cargo.toml of a folder, read; None when it has none, {} when it is no TOML (cargo
        refuses it too: it names nothing)."""
        if folder not in self._manifests:
            from .toolchains import read_toml  # on use: only Rust trees read TOML here

            try:
                text = self.snapshot.blob_text(posixpath.join(folder, "Cargo.toml"))
            except KeyError:
                self._manifests[folder] = None
            else:
                try:
                    self._manifests[folder] = read_toml(text)
                except (ValueError, RecursionError):
                    self._manifests[folder] = {}
        return self._manifests[folder]

    def _php_imports(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        # a class of the file's own namespace needs no `use`: its short name is bound already
        bindings = dict(self._php_namespaces().get(module.rpartition(".")[0], {}))
        for imp in imports:
            for name in imp.names:
                full = f"{imp.module}.{name}" if imp.module else name
                self._edge(module, full, path, imp.line, full in self.modules)
                bindings[imp.alias or name] = full
        return bindings

    def _using_edges(self, path: str, module: str, imports: Iterable[Import]) -> dict[str, str]:
        parts = module.split(".")
        enclosing = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        scope = [n for n in enclosing if n in self.modules]
        bindings: dict[str, str] = {}
        for imp in imports:
            written = imp.module.split("<", 1)[0]  # `using R = A.Repo<A.User>;` names A.Repo
            # as written, else (a using inside a namespace) relative to an enclosing one
            names = [written, *(f"{e}.{written}" for e in enclosing)]
            namespace = next((n for n in names if n in self.modules), None)
            # else a type of one: `using static A.B.C;`, `using D = A.B.C;`
            typed = None if namespace else next((n for n in names if n.rpartition(".")[0] in self.modules), None)
            target = namespace or (typed.rpartition(".")[0] if typed else None)
            self._edge(module, target or written, path, imp.line, target is not None)
            if imp.alias:
                bindings[imp.alias] = namespace or typed or written
            elif namespace:
                scope.append(namespace)
        self._scopes[path] = scope
        return bindings

    def _csharp_types(self, wanted: set[str]) -> dict[str, dict[str, str]]:
        """The top-level C# types of the `wanted` namespaces, by namespace: short name →
        `Namespace.Type`."""
        types: dict[str, dict[str, str]] = {}
        for namespace, _, d in self._top_level("csharp", wanted, lambda m: m):
            if d.kind in _TYPE_KINDS:
                types.setdefault(namespace, {}).setdefault(d.qualname, f"{namespace}.{d.qualname}")
        return types

    def _top_level(
        self, language: str, wanted: set[str], group: Callable[[str], str]
    ) -> Iterator[tuple[str, str, Definition]]:
        """(group, module, definition) of each top-level definition of the `language` files whose
        module's group is wanted (read from every such file, in a restricted view too)."""
        whole = self.snapshot.whole()
        for path in sorted(self._module_of):
            module = self._module_of[path]
            if (key := group(module)) in wanted and self.snapshot.files[path].language == language:
                for d in whole.definitions(path):
                    if "." not in d.qualname:
                        yield key, module, d

    def _php_namespaces(self) -> dict[str, dict[str, str]]:
        """PHP modules by namespace: short name → module (`App.Http` → {`Kernel`: `App.Http.Kernel`})."""
        if self._namespaces is None:
            self._namespaces = {}
            for p, m in self._module_of.items():
                if self.snapshot.files[p].language == "php" and "." in m:
                    namespace, _, short = m.rpartition(".")
                    self._namespaces.setdefault(namespace, {})[short] = m
        return self._namespaces

    def _add_calls(
        self, path: str, module: str, fs: FileSymbols, bindings: Mapping[str, str], packages: Mapping[str, str]
    ) -> None:
        quals = {d.qualname for d in fs.definitions}
        classes = {d.qualname for d in fs.definitions if d.kind in _TYPE_KINDS}
        rust = path.endswith(".rs")  # `File::open(…)`: a path, resolved as a `use` path, else through bindings
        place = self._rust_place(path) if rust else None
        for call in fs.calls:
            caller = f"{module}.{call.caller}" if call.caller else module
            callee = call.callee.replace("::", ".") if rust else call.callee
            head, _, rest = callee.partition(".")
            resolved: str | None = None
            package = ""
            if rust and "::" in call.callee and (found := self._resolve_use(path, place, call.callee.split("::"))):
                resolved = f"{found[0]}.{found[1]}" if found[1] else found[0]  # (by its path, as calls are)
            elif head in bindings:
                resolved = bindings[head] + (f".{rest}" if rest else "")
                package = packages.get(head, "")
            elif head in ("self", "this", "cls") and rest:
                owner = _enclosing_class(call.caller, classes)
                if owner:
                    resolved = f"{module}.{owner}.{rest}"
            elif "::" not in callee:
                resolved = _local(module, call.caller, head, callee, quals)
            assert self._calls is not None
            self._calls.append(CallEdge(caller, resolved or callee, path, call.line, resolved is not None, package))


def _local(module: str, caller: str, head: str, callee: str, quals: set[str]) -> str | None:
    """A call of a definition of the same file, looked up from the innermost scope outwards."""
    scope = caller
    while True:
        name = f"{scope}.{head}" if scope else head
        if name in quals:
            return f"{module}.{scope}.{callee}" if scope else f"{module}.{callee}"
        if not scope:
            return None
        scope = scope.rpartition(".")[0]


def _enclosing_class(qualname: str, classes: set[str]) -> str | None:
    parts = qualname.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:i]) in classes:
            return ".".join(parts[:i])
    return None


def _python_module(path: str, init_dirs: set[str]) -> str:
    directory, filename = posixpath.split(path)
    stem = filename.rsplit(".", 1)[0]
    parts = [] if stem == "__init__" else [stem]
    while directory and (directory in init_dirs or _namespace_package(directory, init_dirs)):
        directory, name = posixpath.split(directory)
        parts.insert(0, name)
    return ".".join(parts) or stem


def _namespace_package(directory: str, init_dirs: set[str]) -> bool:
    """A folder right below a `src/` that is no package, holding no __init__.py (PEP 420: the src
    layout's top package may be a namespace shared with other distributions, `src/acme/db/` is
    `acme.db`). Deeper folders without one stay outside the name (`src/main/python/pkg/` is `pkg`)."""
    parent, _, name = directory.rpartition("/")
    return name.isidentifier() and (parent == "src" or parent.endswith("/src")) and parent not in init_dirs


def _subpath_targets(target: object, depth: int = 0) -> Iterator[str]:
    """The paths an "imports" target names, in order: a string, a condition object's values, a
    list's items (`{"types": "./a.d.ts", "default": "./dist/a.js"}`), nested a few deep at most."""
    if isinstance(target, str):
        yield target
    elif isinstance(target, (dict, list)) and depth < 8:
        for inner in target.values() if isinstance(target, dict) else target:
            yield from _subpath_targets(inner, depth + 1)


def _strip_js_ext(path: str) -> str:
    for ext in _JS_EXTS[4:] + _JS_EXTS[:4]:  # ".d.ts" before ".ts"
        if path.endswith(ext):
            return path[: -len(ext)]
    return path


def _prefixes(name: str) -> Iterator[str]:
    """`a.b.C.f`'s dotted prefixes, longest first: `a.b.C.f`, `a.b.C`, `a.b`, `a`."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        yield ".".join(parts[:n])


def _java_module(path: str) -> str:
    rel = posixpath.splitext(path)[0]
    root = _SOURCE_SET.search(rel)  # `src/main/java/`, `src/jvmMain/kotlin/`: a package may say kotlin
    cut = (
        root.end()
        if root
        else max((i + len(m) for m in ("/java/", "/kotlin/") if (i := rel.rfind(m)) >= 0), default=-1)
    )
    if cut < 0 and (i := rel.rfind("src/")) >= 0 and (i == 0 or rel[i - 1] == "/"):
        cut = i + 4
    return (rel[cut:] if cut >= 0 else rel).replace("/", ".")


def psr4_prefixes(manifest: object) -> list[tuple[str, str]]:
    """(folder, namespace) pairs of a composer.json's PSR-4 autoload, the longest folder first;
    whatever else the JSON holds (`"autoload": []` is valid) gives none."""
    pairs = []
    for section in ("autoload", "autoload-dev"):
        autoload = manifest.get(section) if isinstance(manifest, dict) else None
        mapping = autoload.get("psr-4") if isinstance(autoload, dict) else None
        for prefix, folders in mapping.items() if isinstance(mapping, dict) else ():
            for folder in [folders] if isinstance(folders, str) else folders if isinstance(folders, list) else []:
                if isinstance(folder, str) and isinstance(prefix, str):
                    namespace = ".".join(p for p in prefix.split("\\") if p)
                    where = posixpath.normpath(folder).strip("/") if folder else ""
                    pairs.append(("" if where == "." else where, namespace))
    return sorted(pairs, key=lambda p: -len(p[0]))


def _rust_place(path: str) -> tuple[str, list[str]] | None:
    """(the `src/` folder of its Cargo package, its module path there) of a Rust file of a package's
    library or main binary: `rt/src/sync/mutex.rs` -> ("rt/src", ["sync", "mutex"]); a crate
    root (`lib.rs`, `main.rs`) has none. None for a file of no `src/`, or another binary's (`src/bin/`)."""
    parts = path.removesuffix(".rs").split("/")
    if "src" not in parts[:-1]:
        return None
    i = len(parts) - 2 - parts[-2::-1].index("src")  # the last `src` folder holding it
    src, inner = "/".join(parts[: i + 1]), parts[i + 1 :]
    if inner[0] == "bin":
        return None
    if inner in (["lib"], ["main"]):
        return src, []
    return src, inner[:-1] if inner[-1] == "mod" else inner


def _dependencies(manifest: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(key, table) of each dependency a Cargo.toml declares (`x = "1"` as `{ version = "1" }`):
    normal, dev and build ones, and those of each `[target.…]`."""
    targets = manifest.get("target")
    for base in (manifest, *(targets.values() if isinstance(targets, dict) else ())):
        for kind in ("dependencies", "dev-dependencies", "build-dependencies"):
            table = base.get(kind) if isinstance(base, dict) else None
            for key, spec in table.items() if isinstance(table, dict) else ():
                if isinstance(spec, (str, dict)):
                    yield key, spec if isinstance(spec, dict) else {"version": spec}


def _table(document: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The table at `keys` of a TOML document, {} when there is none."""
    found: Any = document
    for key in keys:
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def _ruby_module(path: str) -> str:
    parts = path.removesuffix(".rb").split("/")
    for i in range(len(parts) - 2, -1, -1):  # below the last lib/ folder
        if parts[i] == "lib":
            return "/".join(parts[i + 1 :])
    return "/".join(parts)


def _php_module(path: str, prefixes: list[tuple[str, str]]) -> str:
    stem = path.removesuffix(".php")
    for folder, namespace in prefixes:
        if not folder or stem.startswith(folder + "/"):
            rest = stem[len(folder) + 1 :] if folder else stem
            return ".".join(p for p in (namespace, rest.replace("/", ".")) if p)
    return stem


def _per_blob(snapshot: Snapshot, paths: Iterable[str], kind: str, read: Callable[[str], str]) -> dict[str, str]:
    """`read(text)` of each file, kept in the index cache per blob under `kind` (a blob the clone
    lacks reads as empty)."""
    blobs = {path: snapshot.files[path].blob for path in paths}
    known = snapshot.index.memo_get(kind, blobs.values())
    found: dict[str, str] = {}
    for path, blob in blobs.items():
        if blob not in known:
            try:
                text = snapshot.blob_text(path)
            except KeyError:  # (a blob the clone lacks)
                text = ""
            found[blob] = known[blob] = read(text)
    snapshot.index.memo_put(kind, found)
    return {path: known[blob] for path, blob in blobs.items()}


def csharp_namespaces(snapshot: Snapshot, paths: Iterable[str]) -> dict[str, str]:
    """The namespace each C# file declares first ("" for none), kept in the index cache per blob."""

    def namespace(text: str) -> str:
        m = _CS_NAMESPACE.search(text.removeprefix("\ufeff"))
        return "".join(m.group(1).split()) if m else ""

    return _per_blob(snapshot, paths, f"cs-namespace.{GRAPH_VERSION}", namespace)


def rust_path_modules(snapshot: Snapshot, paths: Iterable[str]) -> dict[str, dict[str, str]]:
    """Of the Rust files that declare modules with a `#[path]` (`#[path = "unix/mod.rs"] mod imp;`),
    name -> the file, beside the declaring one (the first of several: one per `cfg`); kept in the
    index cache per blob, as most files have none."""

    def declared(text: str) -> str:
        found: dict[str, str] = {}
        if "#[path" in text:
            for m in _RUST_PATH_MOD.finditer(_RUST_LINE_COMMENT.sub("", text)):
                found.setdefault(m.group(2), m.group(1))
        return json.dumps(found) if found else ""

    known = _per_blob(snapshot, paths, f"rs-path-mods.{GRAPH_VERSION}", declared)
    return {
        path: {name: posixpath.normpath(posixpath.join(posixpath.dirname(path), to)) for name, to in mods.items()}
        for path, text in known.items()
        if text and isinstance(mods := json.loads(text), dict)
    }


def _shared(a: list[str], b: list[str]) -> int:
    """How many leading folders two paths share."""
    return sum(1 for _ in takewhile(lambda pair: pair[0] == pair[1], zip(a, b, strict=False)))


def build_graph(snapshot: Snapshot) -> ImportGraph:
    return ImportGraph(snapshot)


def importers(snapshot: Snapshot, module: str) -> set[str]:
    """The modules that import ``module`` (internal edges), from a reverse import index kept in
    the index cache per tree: built once from the whole graph, then one lookup per question."""
    index = snapshot.index
    key = f"{snapshot.tree}\0{module}"
    found = index.memo_get(f"importers.{GRAPH_VERSION}", [key]).get(key)
    if found is not None:
        return set(json.loads(found))
    if index.memo_get(f"importers-tree.{GRAPH_VERSION}", [snapshot.tree]):
        return set()  # the tree is indexed and nothing imports the module
    reverse: dict[str, set[str]] = {}
    for importer, imported in build_graph(snapshot).edges():
        reverse.setdefault(imported, set()).add(importer)
    index.memo_put(
        f"importers.{GRAPH_VERSION}", {f"{snapshot.tree}\0{m}": json.dumps(sorted(v)) for m, v in reverse.items()}
    )
    index.memo_put(f"importers-tree.{GRAPH_VERSION}", {snapshot.tree: "1"})
    return reverse.get(module, set())
