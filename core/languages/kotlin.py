"""Kotlin: classes (interfaces and enums among them), objects, companion objects (``companion``
unless named: the word written, where the JVM's ``Companion`` is not), functions, extension
functions (named without their receiver, as Kotlin calls them) and secondary constructors
(``constructor``); nested declarations give ``Outer.Inner.method``. A package does not prefix
qualnames (as a Java package does not). Properties are not definitions; namesakes are numbered (see
_base), as extension functions of one name on several receivers are.

The grammar names no body or parameter fields: the spans read are its children's kinds. A
signature holds the type parameters, parameters, supertypes and `where` clauses, not the return
type (the grammar gives it the kind a receiver type has).

Imports: ``import a.b.C`` is ``Import("a.b", ("C",))``, ``import a.b.*`` is
``Import("a.b", ("*",))``, ``import a.b.C as D`` binds ``D``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text

if TYPE_CHECKING:
    from tree_sitter import Node

CLASS = DefSpec(
    "class",
    sig=("type_parameters", "primary_constructor", "delegation_specifiers", "type_constraints"),
    body=("class_body", "enum_class_body"),
)


class Kotlin(Language):
    name = "kotlin"
    grammar = ("tree_sitter_kotlin", "language")
    ast_grep_name = "kotlin"
    extensions: ClassVar[tuple[str, ...]] = (".kt", ".kts")
    children_by_kind = True
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "class_declaration": CLASS,
        "object_declaration": CLASS,
        "companion_object": CLASS,
        "function_declaration": DefSpec(
            "function",
            sig=("type_parameters", "function_value_parameters", "type_constraints"),
            body=("function_body",),
        ),
        "secondary_constructor": DefSpec(
            "method", sig=("function_value_parameters", "constructor_delegation_call"), body=("block",)
        ),
    }
    comment_kinds = frozenset({"line_comment", "block_comment"})
    atomic_kinds = frozenset({"string_literal", "multiline_string_literal", "character_literal"})
    call_kinds = frozenset({"call_expression"})
    import_kinds = frozenset({"import"})

    def name_of(self, node: Node) -> str | None:
        if node.type == "secondary_constructor":
            return "constructor"
        if node.type == "companion_object":
            named = node.child_by_field_name("name")
            return text(named) if named is not None else "companion"
        return super().name_of(node)

    def kind_of(self, node: Node, spec: DefSpec, parent_kind: str | None) -> str:
        if node.type == "class_declaration":
            if any(c.type == "interface" for c in node.children):
                return "interface"
            modifiers = next((c for c in node.children if c.type == "modifiers"), None)
            if modifiers is not None and any(text(m) == "enum" for m in modifiers.children):
                return "enum"
        return super().kind_of(node, spec, parent_kind)

    def callee(self, node: Node) -> str | None:
        f = node.named_children[0] if node.named_children else None
        if f is None or f.type not in ("identifier", "navigation_expression"):
            return None  # a lambda, a parenthesised expression, a call's result called again
        return dotted(text(f))

    def imports(self, node: Node) -> list[Import]:
        path = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
        if path is None:
            return []
        line = node.start_point[0] + 1
        written = "".join(text(path).split())
        if any(c.type == "*" for c in node.children):
            return [Import(written, ("*",), None, line)]
        alias = next((c for c in node.named_children if c.type == "identifier"), None)
        module, _, last = written.rpartition(".")
        return [Import(module, (last,), text(alias) if alias is not None else None, line)]


LANGUAGE = Kotlin()
