"""Strict schemas for what users write (task files, voices, engine and loader options) and their error messages.

A :class:`StrictSection` refuses unknown keys and takes values only of their exact type: ``1`` is not ``true``,
``"yes"`` is not ``true``, ``"8"`` is not ``8`` (an integer is still a number). :func:`validate` turns the first
problem into one line naming the file, the key and the value, with the closest known key for a misspelt one::

    tasks/my.yaml: key 'gate.max_atempts': unknown key; did you mean 'max_attempts'? (known: asr, max_attempts, ...)
"""

from __future__ import annotations

import types
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from s2sbench.pipeline.core.errors import ConfigError, did_you_mean

Model = TypeVar("Model", bound=BaseModel)


class StrictSection(BaseModel):
    """A part of a config file: unknown keys and inexact types are errors."""

    model_config = ConfigDict(extra="forbid", strict=True)


def _inner_types(annotation: Any) -> list[Any]:
    """The types a key of ``annotation`` can hold: ``dict[str, X]`` -> [X], ``list[X] | None`` -> [X], ..."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [inner for arg in typing.get_args(annotation) for inner in _inner_types(arg)]
    if origin in (dict, list, tuple, set, frozenset):
        return [typing.get_args(annotation)[-1]] if typing.get_args(annotation) else []
    return [annotation]


def _model_at(model: type[BaseModel], location: tuple) -> type[BaseModel] | None:
    """The model whose keys are allowed at ``location`` (the parent of the last part), if the path leads to one."""
    current: Any = model
    for part in location[:-1]:
        candidates = [current] if isinstance(current, type) and issubclass(current, BaseModel) else _inner_types(current)
        next_type = None
        for candidate in candidates:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel) and isinstance(part, str):
                field = candidate.model_fields.get(part)
                if field is not None:
                    next_type = field.annotation
                    break
            elif not (isinstance(candidate, type) and issubclass(candidate, BaseModel)):
                next_type = candidate  # a key of a dict or an index of a list: its values' type
        if next_type is None:
            return None
        current = next_type
    for candidate in [current] if isinstance(current, type) else _inner_types(current):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _value(found: Any) -> str:
    text = repr(found)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(error: ValidationError, model: type[BaseModel], prefix: str = "") -> str:
    """The first problem of ``error`` as ``key 'a.b': what is wrong``, with a suggestion for an unknown key."""
    first = error.errors()[0]
    location = tuple(part for part in first["loc"] if part != "[key]")  # pydantic's mark of a dict key's own check
    key = ".".join(str(part) for part in (prefix.split(".") if prefix else []) + list(location)) or "<top level>"
    if first["type"] == "extra_forbidden":
        parent = _model_at(model, location)
        known = sorted(name for name in (parent.model_fields if parent else {}) if not parent.model_fields[name].exclude)
        listed = f" (known: {', '.join(known)})" if known else ""
        return f"key '{key}': unknown key{did_you_mean(str(location[-1]), known)}{listed}"
    if first["type"] == "missing":
        return f"key '{key}': missing (it is required)"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"].endswith("_type") or first["type"] in ("literal_error", "enum"):
        return f"key '{key}': {message}, got {_value(first.get('input'))}"
    return f"key '{key}': {message}"


def validate(model: type[Model], data: Any, where: str, error: type[ConfigError] = ConfigError,
             prefix: str = "") -> Model:
    """``data`` as ``model``, or ``error`` with ``where`` (a file, an entry) and :func:`describe`'s line."""
    try:
        return model.model_validate(data)
    except ValidationError as problem:
        raise error(f"{where}: {describe(problem, model, prefix)}") from None
