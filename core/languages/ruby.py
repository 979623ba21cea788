"""Ruby: classes, modules, methods and singleton methods. ``class A::B`` inside ``module M`` is
``M.A.B``; ``def self.m`` and methods in ``class << self`` are ``Class.m`` like instance methods
(namesakes are numbered, see _base), and so is ``def Foo.m``. Modules are classes here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Language, dotted, text

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


LANGUAGE = Ruby()
