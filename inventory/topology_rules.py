"""One topology rule -> its records: loops, patterns, the lengths table, overlap checks.

Part of the expansion in :mod:`inventory.topology`. A rule's loops become one compiled
generator of index tuples and its fields one compiled function building a record
dict, so a rule of 32,768 cables costs about what building them by hand would.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inventory.problems import Location, Problem
from inventory.source import Document, Key
from inventory.topology_doc import KINDS, GeneratedLocation, RuleRef
from inventory.topology_expr import (
    PatternError,
    compile_function,
    evaluate,
    parse_expression,
    pattern_node,
)
from inventory.topology_model import DeviceRule, LinkRule, NicRule, Rule

MAX_RECORDS = 2_000_000
"""Generated records per file: far above any fabric (32,768 GPUs is ~76,000 records),
far below what would exhaust memory."""

RESERVED = frozenset({"min", "max", "letters", "choose", "range"})
_FAILURES = (ArithmeticError, ValueError, TypeError, IndexError)


@dataclass
class Generated:
    """Records generated so far in one file, per section, with their rules."""

    records: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"racks": [], "devices": [], "links": []}
    )
    rules: dict[str, list[RuleRef]] = field(
        default_factory=lambda: {"racks": [], "devices": [], "links": []}
    )
    keys: dict[tuple[str, Any], int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(r) for r in self.records.values())


def record_keys(section: str, record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """What makes a record the same as another: a name, or either end of a cable."""
    if section == "links":
        return [
            ("links", (record.get("a"), record.get("a_port"))),
            ("links", (record.get("b"), record.get("b_port"))),
        ]
    return [(section, record.get("name"))]


def describe(section: str, record: Mapping[str, Any], rule: str) -> str:
    if section == "links":
        what = (
            f"cable {record.get('a')}:{record.get('a_port')} -> "
            f"{record.get('b')}:{record.get('b_port')}"
        )
    else:
        what = f"{KINDS[section]} {record.get('name')}"
    return f"{what} (from rule '{rule}')"


class _RuleError(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem


def _ranges(
    doc: Document, keys: tuple[Key, ...], loops: Mapping[str, str], outer: Sequence[str]
) -> list[ast.comprehension]:
    """One ``for v in range(first, last + 1)`` per loop variable, checked."""
    names = list(outer)
    generators: list[ast.comprehension] = []
    for variable, text in loops.items():
        where = doc.where(*keys, "for", variable)
        if variable in RESERVED or variable in names:
            why = "a function" if variable in RESERVED else "already a constant or loop variable"
            raise _RuleError(
                Problem(
                    doc.key_where(*keys, "for", variable), f"loop variable {variable!r} is {why}"
                )
            )
        first, _, last = text.partition("..")
        try:
            low, high = parse_expression(first, names), parse_expression(last, names)
        except PatternError as exc:
            raise _RuleError(Problem(where, f"for {variable}: {exc}")) from None
        stop = ast.BinOp(high, ast.Add(), ast.Constant(1))
        iterator = ast.Call(ast.Name("range", ast.Load()), [low, stop], [])
        generators.append(ast.comprehension(ast.Name(variable, ast.Store()), iterator, [], 0))
        names.append(variable)
    return generators


def _fields_node(
    doc: Document, keys: tuple[Key, ...], template: Mapping[str, Any], names: Sequence[str]
) -> ast.Dict:
    out_keys: list[ast.expr | None] = []
    values: list[ast.expr] = []
    for name, value in template.items():
        try:
            if isinstance(value, dict):
                node: ast.expr = _fields_node(doc, (*keys, name), value, names)
            else:
                node = pattern_node(value, names)
        except PatternError as exc:
            raise _RuleError(Problem(doc.where(*keys, name), f"{name}: {exc}")) from None
        out_keys.append(ast.Constant(name))
        values.append(node)
    return ast.Dict(out_keys, values)


def _nics_node(
    doc: Document,
    keys: tuple[Key, ...],
    nics: Sequence[NicRule],
    names: Sequence[str],
    constants: Mapping[str, int],
) -> tuple[ast.List, tuple[int, ...]]:
    """The NIC list of a device, and which template each generated NIC comes from."""
    elements: list[ast.expr] = []
    templates: list[int] = []
    for t, nic in enumerate(nics):
        nic_keys = (*keys, "nics", t)
        loops = nic.loops
        generators = _ranges(doc, nic_keys, loops, list(constants))
        inner = [*names, *loops]
        body = _fields_node(
            doc, nic_keys, nic.model_dump(exclude_unset=True, exclude={"loops"}), inner
        )
        if not generators:
            elements.append(body)
            templates.append(t)
            continue
        elements.append(ast.Starred(ast.ListComp(body, generators), ast.Load()))
        count = 1
        for text in loops.values():
            first, _, last = text.partition("..")
            bounds = [evaluate("{" + part + "}", {}, constants) for part in (first, last)]
            count *= max(0, bounds[1] - bounds[0] + 1)
        templates.extend([t] * count)
    return ast.List(elements, ast.Load()), tuple(templates)


def expand_rule(
    doc: Document,
    section: str,
    keys: tuple[Key, ...],
    rule: Rule,
    constants: Mapping[str, int],
    generated: Generated,
) -> list[Problem]:
    """Add ``rule``'s records to ``generated``; the problems found (none: all added)."""
    try:
        return _expand(doc, section, keys, rule, constants, generated)
    except _RuleError as exc:
        return [exc.problem]


def _expand(
    doc: Document,
    section: str,
    keys: tuple[Key, ...],
    rule: Rule,
    constants: Mapping[str, int],
    generated: Generated,
) -> list[Problem]:
    loops = rule.loops
    generators = _ranges(doc, keys, loops, list(constants))
    names = [*constants, *loops]
    variables = tuple(loops)
    template = rule.model_dump(
        by_alias=True, exclude_unset=True, exclude={"rule", "loops", "nics", "lengths_m"}
    )
    body = _fields_node(doc, keys, template, names)
    nic_templates: tuple[int, ...] = ()
    if isinstance(rule, DeviceRule) and rule.nics:
        nics, nic_templates = _nics_node(doc, keys, rule.nics, names, constants)
        body.keys.append(ast.Constant("nics"))
        body.values.append(nics)
    build = compile_function(body, variables, constants, rule.rule, with_range=True).function
    combos = _combinations(doc, keys, generators, variables, constants, generated.count)
    try:
        records: list[dict[str, Any]] = [build(*combo) for combo in combos]
    except _FAILURES:
        return [_diagnose(doc, keys, template, combos, build, variables, constants)]
    table = isinstance(rule, LinkRule) and rule.lengths_m is not None
    if isinstance(rule, LinkRule) and rule.lengths_m is not None:
        problem = _apply_lengths(doc, keys, rule.lengths_m, combos, records)
        if problem is not None:
            return [problem]
    ref = RuleRef(section, rule.rule, keys, nic_templates, table)
    return _add(doc, section, ref, records, generated)


def _combinations(
    doc: Document,
    keys: tuple[Key, ...],
    generators: list[ast.comprehension],
    variables: tuple[str, ...],
    constants: Mapping[str, int],
    already: int,
) -> list[tuple[int, ...]]:
    """Every binding of the loop variables, outermost first, within the record budget."""
    if not generators:
        return [()]
    element = ast.Tuple([ast.Name(v, ast.Load()) for v in variables], ast.Load())
    body = ast.GeneratorExp(element, generators)
    make = compile_function(body, (), constants, "loops", with_range=True).function
    budget = MAX_RECORDS - already
    try:
        combos = list(itertools.islice(make(), budget + 1))
    except _FAILURES as exc:
        raise _RuleError(Problem(doc.where(*keys, "for"), f"for: {exc}")) from None
    if len(combos) > budget:
        raise _RuleError(
            Problem(
                doc.where(*keys, "for"), f"the rules generate more than {MAX_RECORDS:,} records"
            )
        )
    return combos


def _diagnose(
    doc: Document,
    keys: tuple[Key, ...],
    template: Mapping[str, Any],
    combos: list[tuple[int, ...]],
    build: Any,
    variables: tuple[str, ...],
    constants: Mapping[str, int],
) -> Problem:
    """The first binding and field that fail, at that field's place in the rule."""
    for combo in combos:
        try:
            build(*combo)
        except _FAILURES as exc:
            bindings = dict(zip(variables, combo, strict=True))
            shown = ", ".join(f"{k}={v}" for k, v in bindings.items())
            for name, value in template.items():
                if isinstance(value, dict):
                    continue
                try:
                    evaluate(value, bindings, constants)
                except _FAILURES as field_exc:
                    return Problem(doc.where(*keys, name), f"{name} at {shown}: {field_exc}")
            return Problem(doc.where(*keys), f"at {shown}: {exc}")
    return Problem(doc.where(*keys), "the rule cannot be expanded")


def _apply_lengths(
    doc: Document,
    keys: tuple[Key, ...],
    table: tuple[Any, ...],
    combos: list[tuple[int, ...]],
    records: list[dict[str, Any]],
) -> Problem | None:
    """Give each cable its value from ``lengths_m``, if the table has the rule's shape."""
    where = doc.where(*keys, "lengths_m")
    flat_shape = not combos or len(combos[0]) <= 1
    if flat_shape:
        if any(isinstance(v, tuple) for v in table):
            return Problem(where, "lengths_m: one loop variable, so one number per cable")
        if len(table) != len(records):
            return Problem(where, f"lengths_m has {len(table)} values for {len(records)} cables")
        for record, value in zip(records, table, strict=True):
            record["length_m"] = value
        return None
    counts = [len(list(group)) for _, group in itertools.groupby(combos, key=lambda c: c[:-1])]
    if not all(isinstance(row, tuple) for row in table):
        return Problem(where, "lengths_m: one row (a list) per value of the outer loops")
    if len(table) != len(counts):
        return Problem(
            where, f"lengths_m has {len(table)} rows; the outer loops give {len(counts)}"
        )
    position = 0
    for k, (row, count) in enumerate(zip(table, counts, strict=True)):
        if len(row) != count:
            combo = combos[position]
            return Problem(
                doc.where(*keys, "lengths_m", k),
                f"lengths_m row {k + 1} has {len(row)} values; {count} cables at "
                f"{', '.join(str(v) for v in combo[:-1])}",
            )
        for value in row:
            records[position]["length_m"] = value
            position += 1
    return None


def _add(
    doc: Document,
    section: str,
    ref: RuleRef,
    records: list[dict[str, Any]],
    generated: Generated,
) -> list[Problem]:
    """Append the rule's records, refusing any another rule (or this one) made already."""
    out, refs, seen = generated.records[section], generated.rules[section], generated.keys
    if _add_all(section, ref, records, generated):
        return []
    problems: list[Problem] = []
    for record in records:
        clash: tuple[str, Any] | None = None
        try:
            identity = record_keys(section, record)
            clash = next((k for k in identity if k in seen), None)
        except TypeError:  # an unhashable value: the schema check will name it
            identity = []
        if clash is not None:
            first = refs[seen[clash]]
            here = doc.where(*ref.keys)
            at = GeneratedLocation(
                here.file, here.line, here.col, describe(section, record, ref.name)
            )
            again = "again" if first.name == ref.name else f"also by rule '{first.name}'"
            problems.append(
                Problem(
                    at, f"generated {again} (line {_line(doc, first.keys)}); rules must not overlap"
                )
            )
            continue
        for key in identity:
            seen[key] = len(out)
        out.append(record)
        refs.append(ref)
    return problems


def _add_all(
    section: str, ref: RuleRef, records: list[dict[str, Any]], generated: Generated
) -> bool:
    """Append every record at once when none repeats a known one (the usual case)."""
    out, seen = generated.records[section], generated.keys
    keys: list[tuple[str, Any]]
    try:
        if section == "links":
            start = len(out)
            keys = [("links", (r.get("a"), r.get("a_port"))) for r in records]
            keys += [("links", (r.get("b"), r.get("b_port"))) for r in records]
            positions = [*range(start, start + len(records))] * 2
        else:
            keys = [(section, r.get("name")) for r in records]
            positions = list(range(len(out), len(out) + len(records)))
        fresh = dict(zip(keys, positions, strict=True))
    except TypeError:  # an unhashable value: the slow path reports it record by record
        return False
    if len(fresh) != len(keys) or not seen.keys().isdisjoint(fresh):
        return False
    seen.update(fresh)
    out.extend(records)
    generated.rules[section].extend([ref] * len(records))
    return True


def _line(doc: Document, keys: tuple[Key, ...]) -> int:
    where: Location = doc.where(*keys)
    return where.line
