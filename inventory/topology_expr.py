"""Name patterns and index expressions of the compact topology form, compiled once.

A pattern is text with ``{expression}`` or ``{expression:width}`` fields, such as
``gpu-n{n:04}`` or ``Ethernet{(n - 1) % 32 + 1}``. Expressions are integer arithmetic
over the rule's loop variables and the topology's constants: ``+ - * // %``,
comparisons, parentheses and four functions: ``min``, ``max``, ``letters(k)``
(0 -> a, 25 -> z, 26 -> aa) and ``choose(i, 'x', 'y', ...)`` (the i-th of the given
words; the only place a quoted word may appear). A pattern that is one field and
nothing else yields the integer itself (``rail: "{r}"``), any other pattern text.

Expressions are parsed with :mod:`ast` and checked against that grammar before
anything runs; the checked tree is compiled into a plain Python function, so expanding
tens of thousands of records costs about as much as building them by hand. Nothing a
fleet repo writes can reach any other name, attribute or call.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_WIDTH = 32
MAX_PATTERN = 200
_SPEC = re.compile(r"^(0?)([1-9][0-9]?)$")
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


class PatternError(ValueError):
    """A pattern or expression outside the grammar; the message says what."""


def letters(index: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa: row and group suffixes that never run out."""
    if index < 0:
        raise ValueError(f"letters() of a negative number ({index})")
    text = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        text = chr(ord("a") + rem) + text
    return text


def choose(index: int, *words: str) -> str:
    """The ``index``-th word (0-based; ``True``/``False`` pick the second/first)."""
    if not 0 <= index < len(words):
        raise ValueError(f"choose() index {index} is outside 0..{len(words) - 1}")
    return words[index]


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "letters": letters,
    "choose": choose,
}


def _check(node: ast.AST, names: frozenset[str], word_ok: bool = False) -> None:
    """Refuse every node outside the grammar (see the module docstring)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | str):
            raise PatternError(f"{node.value!r} is not allowed (integers only)")
        if isinstance(node.value, str) and not word_ok:
            raise PatternError("a quoted word may only be an argument of choose()")
    elif isinstance(node, ast.Name):
        if node.id not in names:
            known = ", ".join(sorted(names)) or "none"
            raise PatternError(f"unknown name {node.id!r} (known here: {known})")
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand, names)
    elif isinstance(node, ast.Compare) and all(isinstance(op, _COMPARE) for op in node.ops):
        for part in (node.left, *node.comparators):
            _check(part, names)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id not in _FUNCTIONS or node.keywords:
            raise PatternError(
                f"unknown function {node.func.id!r} (known: {', '.join(sorted(_FUNCTIONS))})"
            )
        if not node.args:
            raise PatternError(f"{node.func.id}() needs arguments")
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                raise PatternError("* arguments are not allowed")
            _check(arg, names, word_ok=node.func.id == "choose" and i > 0)
    else:
        raise PatternError(f"{ast.unparse(node)!r} is not allowed in an expression")


def parse_expression(text: str, names: Iterable[str]) -> ast.expr:
    """Parse and check one expression; raise PatternError when it leaves the grammar."""
    if len(text) > MAX_PATTERN:
        raise PatternError(f"expression longer than {MAX_PATTERN} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise PatternError(f"expression {text!r}: {exc.msg}") from None
    _check(tree.body, frozenset(names))
    return tree.body


def _fields(pattern: str) -> list[str | tuple[str, str]]:
    """Split a pattern into literal text and (expression, width spec) fields."""
    parts: list[str | tuple[str, str]] = []
    literal: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char in "{}" and pattern[i + 1 : i + 2] == char:
            literal.append(char)
            i += 2
        elif char == "{":
            end = pattern.find("}", i)
            if end < 0:
                raise PatternError(
                    f"pattern {pattern!r}: '{{' without '}}' (write {{{{ for a brace)"
                )
            field = pattern[i + 1 : end]
            expression, _, spec = field.rpartition(":") if ":" in field else (field, "", "")
            if spec and not _SPEC.match(spec):
                raise PatternError(
                    f"pattern {pattern!r}: width {spec!r} must be 1-{MAX_WIDTH}, "
                    "zero-padded with a leading 0 (e.g. {n:04})"
                )
            if spec and int(spec) > MAX_WIDTH:
                raise PatternError(f"pattern {pattern!r}: width {spec} is over {MAX_WIDTH}")
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append((expression, spec))
            i = end + 1
        elif char == "}":
            raise PatternError(f"pattern {pattern!r}: '}}' without '{{' (write }}}} for a brace)")
        else:
            literal.append(char)
            i += 1
    if literal:
        parts.append("".join(literal))
    return parts


def pattern_node(value: object, names: Iterable[str]) -> ast.expr:
    """The expression building ``value`` (a pattern, or a plain value kept as it is)."""
    if not isinstance(value, str):
        if value is not None and not isinstance(value, int | float):
            raise PatternError(f"{value!r} is neither a pattern nor a number")
        return ast.Constant(value)
    if len(value) > MAX_PATTERN:
        raise PatternError(f"pattern longer than {MAX_PATTERN} characters")
    known = tuple(names)
    parts = _fields(value)
    if len(parts) == 1 and isinstance(parts[0], tuple) and not parts[0][1]:
        return parse_expression(parts[0][0], known)
    if all(isinstance(part, str) for part in parts):
        return ast.Constant("".join(p for p in parts if isinstance(p, str)))
    values: list[ast.expr] = []
    for part in parts:
        if isinstance(part, str):
            values.append(ast.Constant(part))
        else:
            expression, spec = part
            spec_node = ast.JoinedStr([ast.Constant(spec + "d")]) if spec else None
            values.append(ast.FormattedValue(parse_expression(expression, known), -1, spec_node))
    return ast.JoinedStr(values)


def uses_names(node: ast.expr) -> frozenset[str]:
    """The names an expression reads (to order loops and spot constant patterns)."""
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


@dataclass(frozen=True)
class Compiled:
    """A function of the loop variables, in the order given."""

    function: Callable[..., Any]
    variables: tuple[str, ...]


def compile_function(
    body: ast.expr,
    variables: tuple[str, ...],
    constants: Mapping[str, int],
    label: str,
    *,
    with_range: bool = False,
) -> Compiled:
    """Compile ``lambda *variables: body`` with ``constants`` and the pattern functions
    (and ``range``, for the loops built here: no pattern may name it)."""
    arguments = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(v) for v in variables],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    tree = ast.Expression(ast.Lambda(arguments, body))
    ast.fix_missing_locations(tree)
    code = compile(tree, f"<topology {label}>", "eval")
    scope: dict[str, Any] = {"__builtins__": {}, **_FUNCTIONS, **constants}
    if with_range:
        scope["range"] = range
    return Compiled(eval(code, scope), variables)  # checked tree, no builtins


def evaluate(value: object, bindings: Mapping[str, int], constants: Mapping[str, int]) -> Any:
    """Evaluate one pattern for one binding (slow: for diagnostics and range bounds)."""
    node = pattern_node(value, (*bindings, *constants))
    names = tuple(bindings)
    compiled = compile_function(node, names, constants, "value")
    return compiled.function(*(bindings[n] for n in names))
