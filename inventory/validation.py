"""Schema validation of a parsed document, with every error at its file:line:col.

pydantic reports errors by key path; the :class:`~inventory.source.Document` knows
where each key path sits in the file. This module joins the two and words the
messages for someone editing YAML (unknown keys list the allowed ones; a number
where a string is expected says to quote it).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Sequence
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from inventory.problems import InputError, Location, Problem
from inventory.source import Document

M = TypeVar("M", bound=BaseModel)


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class reached by following ``loc`` through fields, lists and dicts."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(str(part))
            if info is None:
                info = next((f for f in current.model_fields.values() if f.alias == part), None)
            if info is None:
                return None
            current = info.annotation
        elif get_origin(current) in (tuple, list):
            args = get_args(current)
            current = args[0] if args else None
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    """Strip ``Annotated`` and ``X | None`` down to the interesting type."""
    while True:
        origin = get_origin(annotation)
        if origin is typing.Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation


def _describe(model: type[BaseModel], error: Any, loc: tuple[Any, ...]) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        parent = _model_at(model, loc[:-1])
        allowed = ""
        if parent is not None:
            names = sorted(f.alias or n for n, f in parent.model_fields.items())
            allowed = f" (allowed: {', '.join(names)})"
        return f"unknown key {loc[-1]!r}{allowed}"
    if kind == "missing":
        return f"missing required key {loc[-1]!r}"
    if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"expected a string, YAML read {value!r} as a number: quote it"
    if kind in ("int_type", "float_type") and isinstance(value, bool):
        return f"expected a number, got {str(value).lower()}"
    message: str = error["msg"]
    if value is not None and not isinstance(value, (dict, list, tuple)):
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        message = f"{message} (got {shown})"
    return message


def problems_from(doc: Document, model: type[BaseModel], exc: ValidationError) -> list[Problem]:
    """Turn a pydantic ValidationError into located problems."""
    problems: list[Problem] = []
    for error in exc.errors():
        raw_loc = tuple(error["loc"])
        is_key = bool(raw_loc) and raw_loc[-1] == "[key]"
        loc = tuple(p for p in raw_loc if p != "[key]")
        if error["type"] in ("extra_forbidden",) or is_key:
            where: Location = doc.key_where(*loc)
        elif error["type"] == "missing":
            where = doc.where(*loc[:-1])
        else:
            where = doc.where(*loc)
        path = ".".join(str(p) for p in loc)
        text = _describe(model, error, loc)
        problems.append(Problem(where, f"{path}: {text}" if path else text))
    return problems


def validate_document(doc: Document, model: type[M]) -> M:
    """Validate a document's data against ``model``; raise InputError with locations."""
    if doc.data is None:
        raise InputError([Problem(Location(doc.path, 1, 1), "file is empty")])
    if not isinstance(doc.data, dict):
        raise InputError([Problem(doc.where(), "expected a mapping at the top of the file")])
    try:
        validated = model.model_validate(doc.data)
    except ValidationError as exc:
        raise InputError(problems_from(doc, model, exc)) from None
    share_field_sets(validated)
    return validated


def share_field_sets(root: BaseModel) -> None:
    """Let the frozen models under ``root`` (itself and the lists and tuples of models in
    its fields, all the way down) share one set of the names of the fields they were
    given, one per model class and set of names.

    pydantic gives each instance a set of its own (``model_fields_set``): 728 bytes for
    a cable's seven names, 200 MB of a 16,384-node fleet's 278,528 cables. A frozen
    model never adds to it (``model_copy`` gives the copy a set of its own), so equal
    sets can be one."""
    kept: dict[type[BaseModel], list[set[str]]] = {}  # the sets shared so far, by class
    pending: list[Sequence[BaseModel]] = [(root,)]
    share = object.__setattr__
    while pending:
        kind: type[BaseModel] | None = None
        for model in pending.pop():  # a list of records is nearly always of one class
            if type(model) is not kind:
                kind = type(model)
                frozen, nested = _shape_of(kind)
                sets = kept.setdefault(kind, [])
            if frozen:
                names = model.__pydantic_fields_set__
                for shared in sets:
                    if shared == names:
                        if shared is not names:
                            share(model, "__pydantic_fields_set__", shared)
                        break
                else:
                    if len(sets) < _SETS_KEPT:
                        sets.append(names)
            for name in nested:
                pending.append(getattr(model, name))


_SETS_KEPT = 8  # per class: the few ways its records are written (a NIC with a rail or not)


@functools.cache
def _shape_of(kind: type[BaseModel]) -> tuple[bool, tuple[str, ...]]:
    """Whether ``kind`` is frozen, and its fields that hold a list or tuple of models."""
    nested = []
    for name, info in kind.model_fields.items():
        annotation = _unwrap(info.annotation)
        if get_origin(annotation) not in (list, tuple):
            continue
        item = _unwrap(next(iter(get_args(annotation)), None))
        if isinstance(item, type) and issubclass(item, BaseModel):
            nested.append(name)
    return bool(kind.model_config.get("frozen")), tuple(nested)
