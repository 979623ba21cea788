"""JavaScript (and JSX): functions, arrow functions bound to names, classes and methods.

``const f = () => …``, ``f = function () {…}`` (in a class field), ``{ f: () => … }`` and
``exports.f = function () {…}`` define ``f``; a function or class nobody names is skipped.
Imports are ``import``/``export … from`` statements, ``require("x")`` and ``import("x")``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, unquote

if TYPE_CHECKING:
    from ast_grep_py import SgNode

FUNCTION = DefSpec("function", sig=("type_parameters", "parameters", "parameter", "return_type"))
# Nameless by themselves: named by the declarator, field, property or assignment holding them.
ANONYMOUS = frozenset({"arrow_function", "function_expression", "class"})
_IDENT = re.compile(r"[A-Za-z_$#][\w$]*")


class JavaScript(Language):
    name = "javascript"
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

    def name_of(self, node: SgNode) -> str | None:
        if node.kind() in ANONYMOUS and (held := _holder_name(node)) is not None:
            return held
        n = node.field("name")
        if n is None:
            return None
        text = unquote(n.text())
        return text if _IDENT.fullmatch(text) else None

    def callee(self, node: SgNode) -> str | None:
        f = node.field("constructor" if node.kind() == "new_expression" else "function")
        return dotted(f.text()) if f is not None else None

    def imports(self, node: SgNode) -> list[Import]:
        line = node.range().start.line + 1
        kind = node.kind()
        if kind == "call_expression":
            args = node.field("arguments")
            if args is None:
                return []
            first = next(iter(args.named_children()), None)
            if first is None or first.kind() != "string":
                return []
            parent = node.parent()
            alias = None
            if parent is not None and parent.kind() == "variable_declarator":
                n = parent.field("name")
                alias = n.text() if n is not None and n.kind() == "identifier" else None
            return [Import(unquote(first.text()), (), alias, line)]
        source = node.field("source")
        if kind == "import_statement" and source is None:  # TS: import x = require("y")
            for c in node.children():
                if c.kind() == "import_require_clause":
                    ident = next((x for x in c.children() if x.kind() == "identifier"), None)
                    src = next((x for x in c.children() if x.kind() == "string"), None)
                    if src is not None:
                        return [Import(unquote(src.text()), (), ident.text() if ident else None, line)]
            return []
        if source is None:
            return []
        module = unquote(source.text())
        out: list[Import] = []
        for c in node.children():
            ck = c.kind()
            if ck == "import_clause":
                for part in c.children():
                    pk = part.kind()
                    if pk == "identifier":
                        out.append(Import(module, ("default",), part.text(), line))
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


def _holder_name(node: SgNode) -> str | None:
    parent = node.parent()
    if parent is None:
        return None
    pk = parent.kind()
    if pk == "variable_declarator":
        key = parent.field("name")
    elif pk in ("public_field_definition", "field_definition"):
        key = parent.field("name") or parent.field("property")
    elif pk == "pair":
        key = parent.field("key")
    elif pk == "assignment_expression":
        key = parent.field("left")
        if key is not None and key.kind() == "member_expression":
            key = key.field("property")
    else:
        return None
    if key is None:
        return None
    text = unquote(key.text())
    return text if _IDENT.fullmatch(text) else None


def _last_identifier(node: SgNode) -> str | None:
    idents = [c.text() for c in node.children() if c.kind() == "identifier"]
    return idents[-1] if idents else None


def _specifiers(node: SgNode, kind: str, module: str, line: int) -> list[Import]:
    out = []
    for spec in node.children():
        if spec.kind() != kind:
            continue
        name, alias = spec.field("name"), spec.field("alias")
        if name is not None:
            out.append(Import(module, (unquote(name.text()),), alias.text() if alias else None, line))
    return out


LANGUAGE = JavaScript()
