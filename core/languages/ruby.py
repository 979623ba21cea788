"""Ruby: classes, modules, methods and singleton methods. ``class A::B`` inside ``module M`` is
``M.A.B``; ``def self.m`` and methods in ``class << self`` are ``Class.m`` like instance methods
(namesakes are numbered, see _base), and so is ``def Foo.m``. Modules are classes here.

Imports are ``require "rack/utils"`` and ``autoload :Utils, "rack/utils"`` (level 0) and
``require_relative "../x"`` (level 1) of a string literal; a computed one is not read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text

if TYPE_CHECKING:
    from tree_sitter import Node


class Ruby(Language):
    name = "ruby"
    grammar = ("tree_sitter_ruby", "language")
    ast_grep_name = "ruby"
    extensions: ClassVar[tuple[str, ...]] = (".rb", ".rake", ".gemspec")
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "class": DefSpec("class", sig=("superclass",)),
        "module": DefSpec("class", sig=()),
        "method": DefSpec("function", sig=("parameters",)),
        "singleton_method": DefSpec("function", sig=("parameters",)),
    }
    atomic_kinds = frozenset({"string", "heredoc_body", "regex", "simple_symbol", "delimited_symbol"})
    call_kinds = frozenset({"call"})
    import_callees = frozenset({"require", "require_relative", "autoload"})
    owner_nests = True  # `module M; class A::B` is M.A.B

    def name_of(self, node: Node) -> str | None:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        while name.type == "scope_resolution" and (last := name.child_by_field_name("name")) is not None:
            name = last
        return text(name)

    def owner_of(self, node: Node) -> str | None:
        if node.type == "singleton_method":
            return None  # `def self.m`, `def Foo.m` in Foo: the class's own
        name = node.child_by_field_name("name")
        if name is None or name.type != "scope_resolution" or (scope := name.child_by_field_name("scope")) is None:
            return None
        return dotted(text(scope).replace("::", "."))

    def callee(self, node: Node) -> str | None:
        method, receiver = node.child_by_field_name("method"), node.child_by_field_name("receiver")
        if method is None:
            return None
        return dotted(f"{text(receiver)}.{text(method)}" if receiver is not None else text(method))

    def imports(self, node: Node) -> list[Import]:
        found = _required(node)
        return [found] if found is not None else []


def _required(node: Node) -> Import | None:
    args = node.child_by_field_name("arguments")
    method = text(node.child_by_field_name("method") or node)
    given = args.named_children if args is not None else []
    at = 1 if method == "autoload" else 0  # autoload :Name, "path"
    path = given[at] if len(given) > at else None
    if path is None or path.type != "string" or any(c.type == "interpolation" for c in path.named_children):
        return None
    written = text(path)[1:-1].strip()
    return Import(written, (), None, node.start_point[0] + 1, int(method == "require_relative")) if written else None


LANGUAGE = Ruby()
