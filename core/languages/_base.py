"""What every language module shares: the data types, one tree walk and the fingerprints.

A language module describes its grammar (which node kinds define something, which are comments,
calls, imports) and supplies a few small hooks; :meth:`Language.analyse` walks the tree once and
yields definitions with their fingerprints, imports and calls.

Decisions worth knowing:

* Lines are 1-based and inclusive. A Python definition's span includes its decorators.
* Trees come from py-tree-sitter and each language's grammar package (tree-sitter-python, …): the
  walk reads every node, and through these bindings a node costs a third of what it costs through
  ast-grep-py (which the ast-grep checks use). Nodes are classified by their kind's number, never
  by its name, and tokens are slices of the source's bytes.
* Tokens are tree-sitter leaves. Comments are dropped by node kind; string literals (and the
  other ``atomic_kinds``) are one token each, with their text as written.
* A Python docstring (the first statement of a body, if it is a string) is documentation, like a
  comment in the other languages: it is left out of ``body_hash`` and ``shape_hash``.
* Decorators, modifiers and annotations are in the span but in no fingerprint.
* ``error`` names the lines of ERROR nodes anywhere and of MISSING tokens (zero-width leaves
  tree-sitter inserted) inside definitions; outside them the walk reads no token text.
* ``shape_hash`` renames every leaf whose kind ends in ``identifier`` to ``$0, $1, …`` in order of
  first appearance; keywords, operators and literal values stay as they are.
* Several definitions with one qualname in a file (overloads, conditional definitions, two Rust
  ``impl`` blocks with the same method): all are kept; the last keeps the plain qualname (in Python
  and TypeScript the last one is the one that runs) and the earlier ones get ``#1``, ``#2``, … in
  document order.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from typing import TYPE_CHECKING, ClassVar

from blake3 import blake3

from comind.symbols import Call as Call  # the data types, re-exported for the language modules
from comind.symbols import Definition as Definition
from comind.symbols import FileSymbols as FileSymbols
from comind.symbols import Import as Import

if TYPE_CHECKING:  # imported where used: reading cached symbols needs no parser
    from tree_sitter import Language as Grammar
    from tree_sitter import Node, Parser, Tree, TreeCursor

KINDS = ("function", "method", "class", "interface", "struct", "enum", "trait", "impl", "type")
# A function directly inside one of these is a method.
CONTAINERS = frozenset({"class", "interface", "struct", "enum", "trait", "impl"})


@dataclass(frozen=True, slots=True)
class DefSpec:
    """How one node kind defines something.

    ``kind`` is one of :data:`KINDS`, or ``""`` for a namespace (a Rust ``mod``, a TypeScript
    ``namespace``) that prefixes the qualnames inside it without being a definition itself.
    ``sig`` lists the fields whose tokens (after the name) make the signature; ``body`` names the
    field holding the body, or the fields one of which does (C#'s ``int X { get; }`` and
    ``int X => 1``); None: the definition has none, e.g. an interface method. In a language whose
    grammar names no such fields (Kotlin's, `Language.children_by_kind`), a name may be the kind
    of a child node instead.
    """

    kind: str
    sig: tuple[str, ...] = ("type_parameters", "parameters", "return_type")
    body: str | tuple[str, ...] | None = "body"


@dataclass(slots=True)
class _Open:
    """A definition (or namespace) met during the walk."""

    kind: str
    name: str
    qualname: str
    frame: str  # what nested definitions are prefixed with
    start_line: int
    end_line: int
    index: int  # position in the definitions list, -1 for a namespace
    depth: int = 0  # of its node in the tree
    roles: dict[int, int] = field(default_factory=dict)  # field id → _SIG or _BODY, until met
    skip_doc: bool = False
    sig_marks: list[int] = field(default_factory=list)
    body: tuple[int, int] = (0, 0)
    body_start: int = 0


@dataclass(slots=True)
class _Walked:
    """What the walks of one file found: tokens (with which are identifiers), the definitions
    opened in document order, calls, imports and the lines of syntax errors."""

    toks: list[bytes] = field(default_factory=list)
    ident: bytearray = field(default_factory=bytearray)
    opened: list[_Open] = field(default_factory=list)
    raw_calls: list[tuple[_Open | None, str, int]] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)


def _unique_qualnames(opened: list[_Open]) -> dict[int, str]:
    """Each definition's qualname, repeated ones disambiguated: the last keeps the plain name."""
    counts = Counter(r.qualname for r in opened)
    seen: Counter[str] = Counter()
    final: dict[int, str] = {}
    for r in opened:
        q = r.qualname
        if counts[q] > 1:
            seen[q] += 1
            if seen[q] < counts[q]:
                q = f"{q}#{seen[q]}"
        final[r.index] = q
    return final


def _definition(r: _Open, qualname: str, toks: list[bytes], ident: bytearray) -> Definition:
    """A definition met by the walk, with the fingerprints of its tokens."""
    s, e = r.body
    body_toks = toks[s:e]
    sig = [r.name.encode("utf-8", "surrogatepass")]
    marks = r.sig_marks
    for i in range(0, len(marks) - 1, 2):
        sig.extend(toks[marks[i] : marks[i + 1]])
    shape = _rename(body_toks, ident[s:e])
    return Definition(qualname, r.name, r.kind, r.start_line, r.end_line, digest(sig), digest(body_toks), digest(shape))


def _unprinted(r: _Open, qualname: str) -> Definition:
    """A definition met by the walk, without fingerprints (`Language.fingerprinted` adds them)."""
    return Definition(qualname, r.name, r.kind, r.start_line, r.end_line, "", "", "")


def text(node: Node) -> str:
    """A node's source text (the walk keeps bytes; hooks want str)."""
    return (node.text or b"").decode("utf-8", "surrogatepass")


# The fields of a definition that its fingerprints read, and what the walk does on leaving a node.
_SIG, _BODY = range(2)
_END_SIG, _END_BODY, _CLOSE = range(3)
# What the walk needs to know about a node kind, computed once per kind.
_COMMENT, _ATOMIC, _TEXT, _IDENT, _ERROR, _CALL, _IMPORT, _DEF, _HELD, _MISREAD = (1 << i for i in range(10))
_NOT_PLAIN = ~_IDENT  # a node with any other flag takes the long way


_ERROR_ID = 65535  # tree-sitter's number for ERROR nodes, past every grammar's own kinds


def _kind_flags(classify: Callable[[str], int], grammar: Grammar) -> list[int]:
    """Node kind number → flags, for every kind of the grammar and ERROR (the number, not the
    name: reading a node's kind name makes a string every time; a list, not a dict: indexing it
    is the walk's commonest operation)."""
    flags = [classify(grammar.node_kind_for_id(i) or "") for i in range(grammar.node_kind_count)]
    return flags + [0] * (_ERROR_ID - len(flags)) + [classify("ERROR")]


def _rename(tokens: list[bytes], ident: bytearray) -> list[bytes]:
    """Identifiers become ``$0, $1, …`` in order of first appearance."""
    names: dict[bytes, bytes] = {}
    out = tokens.copy()
    for i in compress(range(len(out)), ident):  # visits the identifiers only
        tok = out[i]
        renamed = names.get(tok)
        if renamed is None:
            renamed = names[tok] = b"$%d" % len(names)
        out[i] = renamed
    return out


_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")


def digest(tokens: list[bytes]) -> str:
    return blake3(b"\x1f".join(tokens)).hexdigest(length=16)


def dotted(text: str) -> str | None:
    """``text`` without whitespace if it is a dotted (or ``::``) name, else None."""
    if _DOTTED.fullmatch(text):  # the common case: nothing to normalise
        return text
    text = "".join(text.split()).replace("?.", ".")
    return text if _DOTTED.fullmatch(text) else None


def strip_generics(text: str) -> str:
    """``P::<Vec<u8>>::new`` → ``P::new``; ``Map<K, V>`` → ``Map``."""
    while True:
        stripped = re.sub(r"<[^<>]*>", "", text)
        if stripped == text:
            return text.replace("::::", "::")
        text = stripped


_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
_NOT_NAMES = frozenset({"mut", "dyn", "impl", "const"})


def type_name(text: str) -> str:
    """The base name of a type as written: ``&'a mut foo::Bar<T>`` → ``Bar``."""
    names = [n for n in _TYPE_NAME.findall(re.sub(r"'\w+", "", strip_generics(text))) if n not in _NOT_NAMES]
    return names[-1] if names else text


def unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`" else text


def _innermost_of(opened: list[_Open], wanted: list[int], spans: Iterable[tuple[int, int]] = ()) -> dict[int, _Open]:
    """Index -> the definitions innermost for one of the (sorted) lines, or holding the whole of one
    of the spans, as `innermost` picks."""
    inner: dict[int | tuple[int, int], _Open] = {}  # line or span -> the innermost definition holding it
    whole = sorted(set(spans))
    for r in opened:
        held: list[int | tuple[int, int]] = [
            *wanted[bisect_left(wanted, r.start_line) : bisect_right(wanted, r.end_line)],
            *((lo, hi) for lo, hi in whole if r.start_line <= lo and hi <= r.end_line),
        ]
        for key in held:
            best = inner.get(key)
            if best is None or (r.start_line, -r.end_line) > (best.start_line, -best.end_line):
                inner[key] = r
    return {r.index: r for r in inner.values()}


def _written(source: bytes, names: set[str]) -> list[int]:
    """Where the names are written as whole words (in code or not), in order: a word edge of a name
    must not run on into a word (`#x` may follow `static`). (The longest name is tried first where
    several start: a name written whole is the only one that can match there.)"""
    words = sorted((n.encode("utf-8", "surrogatepass") for n in names), key=lambda w: (-len(w), w))
    pattern = re.compile(b"|".join(map(re.escape, words)))
    found = []
    pos, end = 0, len(source)
    while (m := pattern.search(source, pos)) is not None:
        a, b = m.span()
        if (a and _WORDISH[source[a]] and _WORDISH[source[a - 1]]) or (
            b < end and _WORDISH[source[b - 1]] and _WORDISH[source[b]]
        ):
            pos = a + 1
        else:
            found.append(a)
            pos = b
    return found


def _always(node: Node, flags: int, parent: Node | None) -> bool:
    return True


_NAME_WORD = re.compile(r"[A-Za-z0-9_$]+")


def may_define(source: bytes, qualname: str) -> bool:
    """Can a file define `qualname`? Every part of a qualified name is a name written in the file
    (`Guard.drop`, `impl Drop for Guard` word by word; `#2` counts namesakes): a file missing one of
    its words does not define it, and need not be parsed to say so."""
    name = qualname.split("#", 1)[0] if qualname.rsplit("#", 1)[-1].isdigit() else qualname
    return not name.isascii() or all(word.encode() in source for word in _NAME_WORD.findall(name))


def _names_one(spots: list[int], node: Node, flags: int, parent: Node | None) -> bool:
    """Does the node hold one of `spots` (`_written`'s)? A definition named by what holds it
    (`_HELD`) is asked of its parent."""
    around = parent if flags & _HELD and parent is not None else node
    i = bisect_left(spots, around.start_byte)
    return i < len(spots) and spots[i] < around.end_byte


class _Trees:
    """The trees of the files parsed last, up to `limit` bytes of source in all, while some caller
    keeps them (`keeping_trees`); a tree takes about 25 times its source in memory. Following
    records to head reads the same versions of a large file for each symbol it held: on a
    17,000-commit history's first check 4 MiB spared 3.6 s of 9.9 s of parsing (docs/benchmarks.md).
    A harvest reads each version about once."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size, self.users = limit, 0, 0
        self._trees: OrderedDict[tuple[str, bytes], Tree] = OrderedDict()
        # Where in a kept tree `definitions_at` found definitions, for `fingerprinted` to read them.
        self._located: dict[tuple[str, bytes], dict[Definition, tuple[Node, _Open | None]]] = {}
        self._lock = threading.Lock()  # (the MCP server's and the hooks' threads may parse too)

    def get(self, language: str, source: bytes) -> Tree | None:
        if not self.users:
            return None
        with self._lock:
            tree = self._trees.get((language, source))
            if tree is not None:
                self._trees.move_to_end((language, source))
            return tree

    def put(self, language: str, source: bytes, tree: Tree) -> None:
        if not self.users or len(source) > self.limit // 4:  # (one file would push out the others)
            return
        with self._lock:
            if not self.users:  # (the last caller left meanwhile, and emptied it)
                return
            if (language, source) not in self._trees:
                self._trees[language, source] = tree
                self.size += len(source)
            while self.size > self.limit:
                (lang, old), _ = self._trees.popitem(last=False)
                self._located.pop((lang, old), None)
                self.size -= len(old)

    def located(self, language: str, source: bytes) -> dict[Definition, tuple[Node, _Open | None]] | None:
        """The nodes of definitions found in the kept tree of `source` (to be added to), or None when
        its tree is not kept."""
        with self._lock:
            if (language, source) not in self._trees:
                return None
            return self._located.setdefault((language, source), {})

    @contextmanager
    def kept(self) -> Iterator[None]:
        with self._lock:
            self.users += 1
        try:
            yield
        finally:
            with self._lock:
                self.users -= 1
                if not self.users:
                    self._trees.clear()
                    self._located.clear()
                    self.size = 0


_TREES = _Trees(4 << 20)


def keeping_trees() -> AbstractContextManager[None]:
    """Within it, a source parsed again (the same language and bytes) gets the tree parsed before."""
    return _TREES.kept()


_WORDISH = [chr(c).isalnum() or chr(c) in "_$" for c in range(128)] + [False] * 128  # ASCII word bytes


class Language:
    """The interface of a language module; subclasses set the class attributes and hooks."""

    name: ClassVar[str]
    grammar: ClassVar[tuple[str, str]]  # (module, function) of the tree-sitter grammar package
    ast_grep_name: ClassVar[str]  # the same language in ast-grep (checks, the benchmark's peer)
    extensions: ClassVar[tuple[str, ...]]
    definition_kinds: ClassVar[Mapping[str, DefSpec]]
    comment_kinds: ClassVar[frozenset[str]] = frozenset({"comment"})
    atomic_kinds: ClassVar[frozenset[str]] = frozenset()  # one token each (string literals)
    text_kinds: ClassVar[frozenset[str]] = frozenset()  # free text: whitespace is collapsed
    call_kinds: ClassVar[frozenset[str]] = frozenset()
    import_kinds: ClassVar[frozenset[str]] = frozenset()
    import_callees: ClassVar[frozenset[str]] = frozenset()  # calls that import: require("x")
    string_calls: ClassVar[bool] = True  # whether an atomic node (a string) may hold calls
    named_by_parent: ClassVar[frozenset[str]] = frozenset()  # definitions `name_of` may name from their parent
    owner_nests: ClassVar[bool] = False  # an `owner_of` is inside the enclosing namespace (C++), not instead of it
    children_by_kind: ClassVar[bool] = False  # DefSpec names may be child kinds (a grammar without such fields)
    misread_kinds: ClassVar[frozenset[str]] = frozenset()  # what `reread` is asked of

    # --- hooks -------------------------------------------------------------------------------
    def name_of(self, node: Node) -> str | None:
        """The definition's own name, or None for an anonymous one (skipped)."""
        n = node.child_by_field_name("name")
        return text(n) if n is not None else None

    def kind_of(self, node: Node, spec: DefSpec, parent_kind: str | None) -> str:
        if spec.kind == "function" and parent_kind in CONTAINERS:
            return "method"
        return spec.kind

    def owner_of(self, node: Node) -> str | None:
        """An explicit qualname prefix (a Go method's receiver type), else None."""
        return None

    def frame_of(self, node: Node, qualname: str, prefix: str) -> str:
        """The prefix for definitions nested in this one (a Rust impl uses its type)."""
        return qualname

    def start_line(self, node: Node, start: int) -> int:
        return start

    def written_word(self, name: str) -> str:
        """A word of a definition's name that is written in the definition, as `_written` finds it
        (`defines` and `definitions_at` walk only into where it is): by default its last."""
        return name.rsplit(" ", 1)[-1]

    def has_docstring(self, body: Node) -> bool:
        return False

    def reread(self, node: Node, source: bytes) -> Node | None:
        """A node of `misread_kinds` that the grammar misread, read again: the root of a tree of the
        same source whose children the walks take instead of the node (their places are the same),
        or None to walk the node as it is."""
        return None

    def imports(self, node: Node) -> list[Import]:
        return []

    def callee(self, node: Node) -> str | None:
        f = node.child_by_field_name("function")
        return dotted(text(f)) if f is not None else None

    # --- the walk ----------------------------------------------------------------------------
    _grammars: ClassVar[dict[str, Grammar]] = {}
    _parsers: ClassVar[dict[str, Parser]] = {}

    def load_grammar(self) -> Grammar:
        """The tree-sitter grammar, loaded once per process (a worker forked after this has it)."""
        grammar = self._grammars.get(self.name)
        if grammar is None:
            import importlib

            from tree_sitter import Language as Grammar

            module, function = self.grammar
            grammar = self._grammars[self.name] = Grammar(getattr(importlib.import_module(module), function)())
        return grammar

    def parse(self, source: str | bytes) -> Tree:
        """The tree of ``source`` (str is encoded as UTF-8; bytes must be UTF-8 already); within
        `keeping_trees`, the tree parsed before for the same source. Trees are read, never edited."""
        data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
        if (tree := _TREES.get(self.name, data)) is not None:
            return tree
        parser = self._parsers.get(self.name)
        if parser is None:
            from tree_sitter import Parser

            parser = self._parsers[self.name] = Parser(self.load_grammar())
        tree = parser.parse(data)
        _TREES.put(self.name, data, tree)
        return tree

    def analyse(self, source: str | bytes, *, keep_tokens: bool = False) -> tuple[FileSymbols, dict[str, list[str]]]:
        """Walk the tree once: definitions with fingerprints, imports, calls, syntax errors.

        ``source`` is the file's text: str, or UTF-8 bytes.
        With ``keep_tokens`` also return each definition's body tokens by qualname.
        The walk is iterative: deeply nested expressions must not hit the recursion limit.
        """
        src = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
        walked = _Walked()
        self._walk(self.parse(src).walk(), src, [], [], walked)
        return self._finish(walked, keep_tokens)

    def definitions_at(
        self,
        source: bytes,
        lines: Iterable[int],
        spans: Iterable[tuple[int, int]] = (),
        *,
        fingerprints: bool = True,
    ) -> tuple[Definition, ...]:
        """The innermost definition holding each of `lines`, and the whole of each of `spans` (those
        :func:`innermost` picks among all a file has), exactly as :meth:`analyse` gives them:
        qualnames made unique among all the file's definitions, fingerprints. Anchoring a few changed
        lines of a large file needs a few of its definitions: the walk goes down only into the nodes
        holding one of the lines, and for the `#n` suffixes into those where the definitions' names
        are written; only the tokens of the definitions found are read. Without `fingerprints` not
        even those: the hashes are empty, for `fingerprinted` to fill in for the few a caller keeps."""
        spans = [(lo, hi) for lo, hi in spans if lo <= hi]
        wanted = sorted(set(lines) | {lo for lo, _ in spans})  # what holds a span holds its first line
        if not wanted:
            return ()
        root = self.parse(source).root_node
        opened, where = self._opened(source, root, partial(self._holds_a_line, wanted))
        needed = _innermost_of(opened, sorted(set(lines)), spans)
        if not needed:
            return ()
        # Every definition of one qualname has the same name, written in it (or, for one named by what
        # holds it, in its parent): the walk goes down where they are written.
        spots = _written(source, {self.written_word(r.name) for r in needed.values()})
        named, named_where = self._opened(source, root, partial(_names_one, spots))
        place = {}
        for n, ((node, _), r) in enumerate(zip(named_where, named, strict=True)):
            place[node.start_byte, node.end_byte, r.qualname] = n
        qualnames = {}
        for index, r in needed.items():
            found = place.get((where[index][0].start_byte, where[index][0].end_byte, r.qualname))
            if found is None:  # (not expected) the whole file's qualnames, then
                qualnames = _unique_qualnames(self._opened(source, root, _always)[0])
                break
            same = [m for m, other in enumerate(named) if other.qualname == r.qualname]
            k = same.index(found) + 1
            qualnames[index] = r.qualname if k == len(same) else f"{r.qualname}#{k}"
        if not fingerprints:
            unprinted = tuple(_unprinted(needed[index], qualnames[index]) for index in sorted(needed))
            if (located := _TREES.located(self.name, source)) is not None:
                located.update(zip(unprinted, (where[index] for index in sorted(needed)), strict=True))
            return unprinted
        return self._fingerprinted(source, needed, where, qualnames)

    def fingerprinted(self, source: bytes, chosen: Iterable[Definition]) -> tuple[Definition, ...] | None:
        """`chosen` (some of what `definitions_at` gave without fingerprints) with their fingerprints,
        read from each one's own subtree: each found again on the way down to its last line, by its
        qualname and span. (Namesakes spanning the same lines, which those cannot tell apart: the
        whole file's walk.)"""
        chosen = list(chosen)
        located = _TREES.located(self.name, source) or {}
        if all(d in located for d in chosen):  # (found in the tree kept since: no walk to find them again)
            return tuple(self._fingerprint(source, *located[d], d.qualname) for d in chosen)
        wanted = sorted({d.end_line for d in chosen})  # (what holds a definition holds its last line)
        opened, where = self._opened(source, self.parse(source).root_node, partial(self._holds_a_line, wanted))
        at: dict[tuple[str, str, int, int], list[int]] = {}
        for n, r in enumerate(opened):
            at.setdefault((r.qualname, r.kind, r.start_line, r.end_line), []).append(n)
        needed: dict[int, _Open] = {}
        qualnames: dict[int, str] = {}
        for d in chosen:
            base, _, k = d.qualname.rpartition("#")
            found = at.get((base if base and k.isdigit() else d.qualname, d.kind, d.start_line, d.end_line), [])
            if len(found) != 1:
                every = {e.qualname: e for e in self.analyse(source)[0].definitions}
                return tuple(every[d.qualname] for d in chosen) if all(d.qualname in every for d in chosen) else None
            needed[found[0]], qualnames[found[0]] = opened[found[0]], d.qualname
        printed = {d.qualname: d for d in self._fingerprinted(source, needed, where, qualnames)}
        return tuple(printed[d.qualname] for d in chosen)

    def _holds_a_line(self, wanted: list[int], node: Node, flags: int, parent: Node | None) -> bool:
        """Does the node's span (a definition's as `_open` spans it) hold one of the sorted `wanted` lines?"""
        first = node.start_point[0] + 1
        if flags & _DEF:  # (a Python definition's span starts at its decorators, in its parent)
            first = self.start_line(node, first)
        i = bisect_left(wanted, first)
        return i < len(wanted) and wanted[i] <= node.end_point[0] + 1

    def defines(self, source: bytes, qualname: str) -> bool:
        """Whether the file has a definition of `qualname` as :meth:`analyse` names it (`#n` for all
        but the last of namesakes), found walking only into the nodes where its name is written."""
        return self._named(source, qualname) is not None

    def first_line_of(self, source: bytes, qualname: str) -> int | None:
        """The first line of the definition of `qualname` (as :meth:`analyse` numbers it), found
        where its name is written; None when the file has none."""
        span = self.span_of(source, qualname)
        return None if span is None else span[0]

    def span_of(self, source: bytes, qualname: str) -> tuple[int, int] | None:
        """The first and last lines of the definition of `qualname`, as :meth:`analyse` spans it
        (`_open`), found where its name is written; None when the file has none."""
        found = self._named(source, qualname)
        if found is None:
            return None
        node = found[0]
        return self.start_line(node, node.start_point[0] + 1), node.end_point[0] + 1

    def framed(self, qualname: str) -> str | None:
        """The symbol a definition that names none stands for (a Rust `impl Foo` for `Foo`), or None."""
        return None

    def body_tokens_of(self, source: bytes, qualname: str) -> list[str] | None:
        """The body tokens :meth:`analyse` keeps for `qualname` (None: no such definition), read
        from its own subtree once found where its name is written."""
        found = self._named(source, qualname)
        if found is None:
            return None
        node, parent = found
        walked = _Walked()
        self._walk(node.walk(), source, [parent] if parent is not None else [], [None], walked, notes=False)
        s, e = walked.opened[0].body
        return [t.decode("utf-8", "surrogatepass") for t in walked.toks[s:e]]

    def _named(self, source: bytes, qualname: str) -> tuple[Node, _Open | None] | None:
        """The node of the definition `qualname` names (and its enclosing one), or None."""
        if not may_define(source, qualname):
            return None  # (history's searches for where a symbol went ask this of many versions)
        base, _, n = qualname.rpartition("#")
        if not (base and n.isdigit()):
            base, n = qualname, ""
        word = self.written_word(base.rsplit(".", 1)[-1])
        spots = _written(source, {word}) if word else []
        if not spots:  # (a name written only inside longer words: nothing to walk into, nothing to parse)
            return None
        named, where = self._opened(source, self.parse(source).root_node, partial(_names_one, spots))
        namesakes = [i for i, r in enumerate(named) if r.qualname == base]
        if n:  # `#k`: the k-th of several, never the last (which keeps the plain name)
            k = int(n)
            return where[namesakes[k - 1]] if 0 < k < len(namesakes) else None
        return where[namesakes[-1]] if namesakes else None

    def _opened(
        self, source: bytes, root: Node, wanted: Callable[[Node, int, Node | None], bool]
    ) -> tuple[list[_Open], list[tuple[Node, _Open | None]]]:
        """The definitions as the full walk opens them (kind, qualname, span), without tokens, each
        with its node and enclosing frame: those on the way down into the nodes `wanted` (node, its
        kind's flags, its parent) says yes to."""
        opened: list[_Open] = []
        where: list[tuple[Node, _Open | None]] = []
        self._open_down(source, root, None, wanted, [], opened, where)
        return opened, where

    def _open_down(
        self,
        source: bytes,
        root: Node,
        above: Node | None,
        wanted: Callable[[Node, int, Node | None], bool],
        frames: list[_Open],
        opened: list[_Open],
        where: list[tuple[Node, _Open | None]],
    ) -> None:
        """`_opened`'s walk from `root` (below `above`) down, inside `frames`."""
        flags_of = self._kind_flags()
        leaving: list[int] = []  # depths of the open frames' nodes
        path: list[Node] = [above] if above is not None else []  # the nodes above the cursor's
        cursor = root.walk()
        depth = 0
        while True:
            node = cursor.node
            assert node is not None
            flags = flags_of[node.kind_id]
            down = (
                not flags & (_COMMENT | _ATOMIC)  # what the full walk goes into
                and node.child_count > 0
                and wanted(node, flags, path[-1] if path else None)
            )
            if down and flags & _MISREAD and (again := self.reread(node, source)) is not None:
                self._open_down(source, again, path[-1] if path else None, wanted, frames, opened, where)
                down = False
            if down and flags & _DEF:
                parent = frames[-1] if frames else None
                if (rec := self._open(node, frames, opened)) is not None:
                    if rec.index >= 0:
                        where.append((node, parent))
                    frames.append(rec)
                    leaving.append(depth)
            if down and cursor.goto_first_child():
                path.append(node)
                depth += 1
                continue
            while True:
                while leaving and leaving[-1] == depth:
                    leaving.pop()
                    frames.pop()
                if depth == 0 or cursor.goto_next_sibling():
                    break
                cursor.goto_parent()
                path.pop()
                depth -= 1
            if depth == 0:
                break

    def _fingerprinted(
        self,
        source: bytes,
        needed: dict[int, _Open],
        where: list[tuple[Node, _Open | None]],
        qualnames: Mapping[int, str],
    ) -> tuple[Definition, ...]:
        """The needed definitions with their fingerprints, each from a walk of its own subtree."""
        return tuple(self._fingerprint(source, *where[index], qualnames[index]) for index in sorted(needed))

    def _fingerprint(self, source: bytes, node: Node, parent: _Open | None, qualname: str) -> Definition:
        """The definition at `node` (inside `parent`) with its fingerprints, from a walk of its subtree."""
        walked = _Walked()
        self._walk(node.walk(), source, [parent] if parent is not None else [], [None], walked, notes=False)
        return _definition(walked.opened[0], qualname, walked.toks, walked.ident)

    def _walk(
        self,
        cursor: TreeCursor,
        src: bytes,
        frames: list[_Open],
        callers: list[_Open | None],
        out: _Walked,
        notes: bool = True,
    ) -> None:
        """The walk of `analyse`, from the cursor's node down: `frames` are the definitions and
        namespaces enclosing it, `callers` for each frame the innermost definition (not namespace).
        Without `notes`, the calls and imports are not read, nor the definitions inside the first one
        opened (fingerprints need only that one's tokens)."""
        toks, ident, opened, raw_calls, imports, errors = (
            out.toks,
            out.ident,
            out.opened,
            out.raw_calls,
            out.imports,
            out.errors,
        )
        flags_of, by_kind = self._kind_flags(), self._by_kind()
        not_plain, string_calls, ident_flag = _NOT_PLAIN, self.string_calls and notes, _IDENT
        noted = (_CALL | _IMPORT) if notes else 0
        tok_append, ident_append = toks.append, ident.append
        # Depth first, in document order, with one tree cursor (no list of children per node).
        # What must happen when the walk leaves a node (a field of a definition ends, the
        # definition ends) waits on `leaving` with the node's depth.
        leaving: list[tuple[int, int, _Open]] = []
        leave_depth = -1  # depth of the top of `leaving`
        role_depth = -1  # depth of the innermost definition's children while some field is unmet
        depth = 0
        while True:
            node = cursor.node
            assert node is not None
            flags = flags_of[node.kind_id]
            if depth == role_depth:  # a child of the innermost definition: a field it reads?
                rec = frames[-1]
                role = rec.roles.pop(cursor.field_id, None)  # type: ignore[arg-type]
                if role is None and by_kind:  # (a child read by its kind: a key below zero)
                    role = rec.roles.pop(-1 - node.kind_id, None)
                if role is not None:
                    if role == _SIG:
                        rec.sig_marks.append(len(toks))
                        leaving.append((depth, _END_SIG, rec))
                    else:
                        rec.body_start = len(toks)
                        rec.skip_doc = self.has_docstring(node)
                        leaving.append((depth, _END_BODY, rec))
                    leave_depth = depth
                    if not rec.roles:
                        role_depth = -1
            if not flags & not_plain:  # the common cases: a token, an interior node of no interest
                if cursor.goto_first_child():
                    depth += 1
                    continue
                if frames:  # outside every definition a token counts for nothing
                    a, b = node.start_byte, node.end_byte
                    if a != b:
                        tok_append(src[a:b])  # (node.text costs more than this)
                        ident_append(flags & ident_flag)
                    else:  # a zero-width leaf: a MISSING token tree-sitter made up
                        errors.append(node.start_point[0] + 1)
            elif flags & _COMMENT:  # (its children are never looked at)
                pass
            elif flags & _ATOMIC or not node.child_count:  # one token (a string); free text; an ERROR leaf
                tok = src[node.start_byte : node.end_byte]
                if frames:
                    if flags & _TEXT:
                        tok = " ".join(text(node).split()).encode("utf-8", "surrogatepass")
                    if tok:
                        tok_append(tok)
                        ident_append(flags & _IDENT)
                    elif depth:  # a zero-width node: a MISSING token
                        errors.append(node.start_point[0] + 1)
                # An f-string or template literal may call things.
                if flags & _ATOMIC and string_calls and b"{" in tok and node.child_count:
                    self._calls_in_string(node, callers[-1] if callers else None, raw_calls, imports)
                if flags & _ERROR:
                    errors.append(node.start_point[0] + 1)
            elif flags & _MISREAD and (again := self.reread(node, src)) is not None:
                for part in again.children:  # (not a token the second reading made up)
                    if not part.is_missing:
                        self._walk(part.walk(), src, frames, callers, out, notes)
            else:
                if flags & _ERROR:
                    errors.append(node.start_point[0] + 1)
                if flags & noted:
                    self._note(node, flags, callers[-1] if callers else None, raw_calls, imports)
                # (a fingerprint's walk opens its own definition only: those inside it change none of its tokens)
                if flags & _DEF and (notes or not opened) and (new := self._open(node, frames, opened)) is not None:
                    rec = new
                    rec.depth = depth
                    callers.append(rec if rec.index >= 0 else callers[-1] if callers else None)
                    frames.append(rec)
                    leaving.append((depth, _CLOSE, rec))
                    leave_depth = depth
                    role_depth = depth + 1 if rec.roles else -1
                cursor.goto_first_child()
                depth += 1
                continue
            # Leave this node, and every ancestor it was the last child of.
            while True:
                while depth == leave_depth:
                    _, op, rec = leaving.pop()
                    if op == _END_SIG:
                        rec.sig_marks.append(len(toks))
                    elif op == _END_BODY:
                        rec.body = (rec.body_start + rec.skip_doc, len(toks))
                    else:
                        frames.pop()
                        callers.pop()
                        role_depth = frames[-1].depth + 1 if frames and frames[-1].roles else -1
                    leave_depth = leaving[-1][0] if leaving else -1
                if depth == 0 or cursor.goto_next_sibling():
                    break
                cursor.goto_parent()
                depth -= 1
            if depth == 0:  # the root is left
                break

    def _finish(self, walked: _Walked, keep_tokens: bool) -> tuple[FileSymbols, dict[str, list[str]]]:
        """Definitions with their fingerprints, calls, imports, syntax errors."""
        opened, toks, ident, raw_calls, imports, errors = (
            walked.opened,
            walked.toks,
            walked.ident,
            walked.raw_calls,
            walked.imports,
            walked.errors,
        )
        final = _unique_qualnames(opened)
        defs: list[Definition] = []
        tokens: dict[str, list[str]] = {}
        for r in opened:
            q = final[r.index]
            defs.append(_definition(r, q, toks, ident))
            if keep_tokens:
                s, e = r.body
                tokens[q] = [t.decode("utf-8", "surrogatepass") for t in toks[s:e]]
        calls = tuple(
            Call(final[c.index] if c is not None else "", callee, line)
            for c, callee, line in sorted(raw_calls, key=lambda c: c[2])
        )
        error = None
        if errors:
            where = ", ".join(str(n) for n in sorted(set(errors))[:5])
            error = f"syntax error: {len(errors)} ERROR or MISSING node(s), at line(s) {where}"
        return FileSymbols(self.name, tuple(defs), tuple(imports), calls, error), tokens

    def _note(
        self,
        node: Node,
        flags: int,
        caller: _Open | None,
        calls: list[tuple[_Open | None, str, int]],
        imports: list[Import],
    ) -> None:
        """Record a node that is a call or an import (not its children)."""
        if flags & _CALL and (callee := self.callee(node)):
            calls.append((caller, callee, node.start_point[0] + 1))
            if callee in self.import_callees:
                imports.extend(self.imports(node))
        if flags & _IMPORT:
            imports.extend(self.imports(node))

    def _calls_in_string(
        self, node: Node, caller: _Open | None, calls: list[tuple[_Open | None, str, int]], imports: list[Import]
    ) -> None:
        """Calls inside the substitutions of a string, which is one token to the walk: every
        call below ``node``, nested ones too, in document order."""
        flags_of = self._kind_flags()
        todo = list(reversed(node.children))
        while todo:
            inner = todo.pop()
            flags = flags_of[inner.kind_id]
            if flags & _CALL:
                self._note(inner, flags, caller, calls, imports)
            todo.extend(reversed(inner.children))

    _flags_cache: ClassVar[dict[str, list[int]]] = {}

    def _kind_flags(self) -> list[int]:
        flags = self._flags_cache.get(self.name)
        if flags is None:
            flags = self._flags_cache[self.name] = _kind_flags(self._classify, self.load_grammar())
        return flags

    def _classify(self, kind: str) -> int:
        flags = 0
        for bit, present in (
            (_COMMENT, kind in self.comment_kinds),
            (_ATOMIC, kind in self.atomic_kinds),
            (_TEXT, kind in self.text_kinds),
            (_IDENT, kind.endswith("identifier")),
            (_ERROR, kind == "ERROR"),
            (_CALL, kind in self.call_kinds),
            (_IMPORT, kind in self.import_kinds),
            (_DEF, kind in self.definition_kinds),
            (_HELD, kind in self.named_by_parent),
            (_MISREAD, kind in self.misread_kinds),
        ):
            if present:
                flags |= bit
        return flags

    def _open(self, node: Node, frames: list[_Open], opened: list[_Open]) -> _Open | None:
        spec = self.definition_kinds[node.type]
        name = self.name_of(node)
        if not name:
            return None
        parent = frames[-1] if frames else None
        owner = self.owner_of(node)
        frame = parent.frame if parent is not None else ""
        nested = owner is not None and self.owner_nests and frame
        prefix = f"{frame}.{owner}" if nested else owner if owner is not None else frame
        qualname = f"{prefix}.{name}" if prefix else name
        start, end = self.start_line(node, node.start_point[0] + 1), node.end_point[0] + 1
        if not spec.kind:  # a namespace: prefixes qualnames, defines nothing
            return _Open("", name, qualname, qualname, start, end, -1, roles=self._roles(spec))
        kind = self.kind_of(node, spec, parent.kind if parent is not None else None)
        rec = _Open(
            kind,
            name,
            qualname,
            self.frame_of(node, qualname, prefix),
            start,
            end,
            len(opened),
            roles=self._roles(spec),
        )
        opened.append(rec)
        return rec

    _roles_cache: ClassVar[dict[tuple[str, DefSpec], dict[int, int]]] = {}

    def _roles(self, spec: DefSpec) -> dict[int, int]:
        """Field id → role of the fields a definition's fingerprints read (a fresh dict: the walk
        removes each field when it meets it, as only a field's first node counts)."""
        roles = self._roles_cache.get((self.name, spec))
        if roles is None:
            grammar = self.load_grammar()
            roles = {}
            for names, role in (
                (spec.sig, _SIG),
                ((spec.body,) if isinstance(spec.body, str) else spec.body or (), _BODY),
            ):
                for name in names:
                    if (fid := grammar.field_id_for_name(name)) is not None:
                        roles[fid] = role
                    elif self.children_by_kind and (kind := grammar.id_for_node_kind(name, True)):
                        roles[-1 - kind] = role
            self._roles_cache[(self.name, spec)] = roles
        return dict(roles)

    def _by_kind(self) -> bool:
        """Whether some definition's fields are read by the kinds of its children."""
        found = self._by_kind_cache.get(self.name)
        if found is None:
            found = self._by_kind_cache[self.name] = any(
                key < 0 for spec in self.definition_kinds.values() for key in self._roles(spec)
            )
        return found

    _by_kind_cache: ClassVar[dict[str, bool]] = {}
