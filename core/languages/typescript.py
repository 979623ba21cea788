"""TypeScript and TSX: the JavaScript definitions plus interfaces, type aliases, enums,
abstract classes, overload and interface signatures; ``namespace X`` prefixes qualnames."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ._base import DefSpec
from .javascript import FUNCTION, JavaScript


class TypeScript(JavaScript):
    name = "typescript"
    grammar = ("tree_sitter_typescript", "language_typescript")
    ast_grep_name = "typescript"
    extensions: ClassVar[tuple[str, ...]] = (".ts", ".mts", ".cts")
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        **JavaScript.definition_kinds,
        "function_signature": FUNCTION,  # overloads, `declare function`
        "method_signature": FUNCTION,
        "abstract_method_signature": FUNCTION,
        "abstract_class_declaration": DefSpec("class", sig=("type_parameters",)),
        "interface_declaration": DefSpec("interface", sig=("type_parameters",)),
        "type_alias_declaration": DefSpec("type", sig=("type_parameters",), body="value"),
        "enum_declaration": DefSpec("enum", sig=()),
        "internal_module": DefSpec(""),  # namespace X { … }
    }


class TSX(TypeScript):
    name = "tsx"
    grammar = ("tree_sitter_typescript", "language_tsx")
    ast_grep_name = "tsx"
    extensions: ClassVar[tuple[str, ...]] = (".tsx",)


TYPESCRIPT = TypeScript()
TSX_LANGUAGE = TSX()
