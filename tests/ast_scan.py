"""Reading the service's own source for the codes it can produce (the docs tests)."""

from __future__ import annotations

import ast


def constants(node: ast.AST | None) -> list[str]:
    """The string constants an expression can be: ``"x"`` or ``"x" if c else "y"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return constants(node.body) + constants(node.orelse)
    return []


def call_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
