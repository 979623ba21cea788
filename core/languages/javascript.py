"""JavaScript (and JSX): functions, arrow functions bound to names, classes and methods.

``const f = () => …``, ``f = function () {…}`` (in a class field), ``{ f: () => … }`` and
``exports.f = function () {…}`` define ``f``; a function or class nobody names is skipped.
Imports are ``import``/``export … from`` statements, ``require("x")`` and ``import("x")``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text, unquote

if TYPE_CHECKING:
    from tree_sitter import Node

FUNCTION = DefSpec("function", sig=("type_parameters", "parameters", "parameter", "return_type"))
# Nameless by themselves: named by the declarator, field, property or assignment holding them.
ANONYMOUS = frozenset({"arrow_function", "function_expression", "class"})
_IDENT = re.compile(r"[A-Za-z_$#][\w$]*")


class JavaScript(Language):
    name = "javascript"
    grammar = ("tree_sitter_javascript", "language")
    ast_grep_name = "javascript"
    extensions: ClassVar[tuple[str, ...]] = (".js", ".mjs", ".cjs", ".jsx")
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_declaration": FUNCTION,
        "generator_function_declaration": FUNCTION,
        "function_expression": FUNCTION,
        "arrow_function": FUNCTION,
        "method_definition": FUNCTION,  # a method in a class, a function in an object literal
        "class_declaration": DefSpec("class", sig=("type_parameters",)),
        "class": DefSpec("class", sig=("type_parameters",)),
    }
    comment_kinds = frozenset({"comment", "html_comment"})
    atomic_kinds = frozenset({"string", "template_string", "regex"})
    text_kinds = frozenset({"jsx_text"})
    call_kinds = frozenset({"call_expression", "new_expression"})
    import_kinds = frozenset({"import_statement", "export_statement"})
    import_callees = frozenset({"require", "import"})
    named_by_parent = ANONYMOUS

    def name_of(self, node: Node) -> str | None:
        if node.type in ANONYMOUS and (held := _holder_name(node)) is not None:
            return held
        n = node.child_by_field_name("name")
        if n is None:
            return None
        name = unquote(text(n))
        return name if _IDENT.fullmatch(name) else None

    def callee(self, node: Node) -> str | None:
        f = node.child_by_field_name("constructor" if node.type == "new_expression" else "function")
        return dotted(text(f)) if f is not None else None

    def imports(self, node: Node) -> list[Import]:
        line = node.start_point[0] + 1
        kind = node.type
        if kind == "call_expression":
            args = node.child_by_field_name("arguments")
            if args is None:
                return []
            first = next(iter(args.named_children), None)
            if first is None or first.type != "string":
                return []
            parent = node.parent
            alias = None
            if parent is not None and parent.type == "variable_declarator":
                n = parent.child_by_field_name("name")
                alias = text(n) if n is not None and n.type == "identifier" else None
            return [Import(unquote(text(first)), (), alias, line)]
        source = node.child_by_field_name("source")
        if kind == "import_statement" and source is None:  # TS: import x = require("y")
            for c in node.children:
                if c.type == "import_require_clause":
                    ident = next((x for x in c.children if x.type == "identifier"), None)
                    src = next((x for x in c.children if x.type == "string"), None)
                    if src is not None:
                        return [Import(unquote(text(src)), (), text(ident) if ident else None, line)]
            return []
        if source is None:
            return []
        module = unquote(text(source))
        out: list[Import] = []
        for c in node.children:
            ck = c.type
            if ck == "import_clause":
                for part in c.children:
                    pk = part.type
                    if pk == "identifier":
                        out.append(Import(module, ("default",), text(part), line))
                    elif pk == "namespace_import":
                        out.append(Import(module, ("*",), _last_identifier(part), line))
                    elif pk == "named_imports":
                        out.extend(_specifiers(part, "import_specifier", module, line))
            elif ck == "export_clause":
                out.extend(_specifiers(c, "export_specifier", module, line))
            elif ck == "namespace_export":
                out.append(Import(module, ("*",), _last_identifier(c), line))
            elif ck == "*":
                out.append(Import(module, ("*",), None, line))
        return out or [Import(module, (), None, line)]


def _holder_name(node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    pk = parent.type
    if pk == "variable_declarator":
        key = parent.child_by_field_name("name")
    elif pk in ("public_field_definition", "field_definition"):
        key = parent.child_by_field_name("name") or parent.child_by_field_name("property")
    elif pk == "pair":
        key = parent.child_by_field_name("key")
    elif pk == "assignment_expression":
        key = parent.child_by_field_name("left")
        if key is not None and key.type == "member_expression":
            key = key.child_by_field_name("property")
    else:
        return None
    if key is None:
        return None
    name = unquote(text(key))
    return name if _IDENT.fullmatch(name) else None


def _last_identifier(node: Node) -> str | None:
    idents = [text(c) for c in node.children if c.type == "identifier"]
    return idents[-1] if idents else None


def _specifiers(node: Node, kind: str, module: str, line: int) -> list[Import]:
    out = []
    for spec in node.children:
        if spec.type != kind:
            continue
        name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
        if name is not None:
            out.append(Import(module, (unquote(text(name)),), text(alias) if alias else None, line))
    return out


LANGUAGE = JavaScript()
