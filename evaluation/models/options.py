"""The options each model adapter takes (names, types, defaults), read from its signature, and the check of a
user's ``--model-arg`` values against them before any weights load.

An adapter declares its options by its signature: every keyword parameter of its class's ``__init__`` (or of its
factory function) with its annotation and default. Keyword options that an adapter hands on (``**options``) are
declared with :func:`forwards_options`: to another adapter or factory (whose options then count as this one's), to
a fixed set of names (what a transformers ``from_pretrained`` call takes), or to whatever a value chooses (the
cascade's ``lm=``). A class whose ``**options`` go to its parent's ``__init__`` needs no declaration. Only a
factory with ``**options`` and no declaration (a third-party one) takes any name.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from s2sbench.pipeline.core.errors import ConfigError, did_you_mean

FORWARDS = "__s2sbench_forwards__"
REQUIRED = inspect.Parameter.empty


class ModelOptionError(ConfigError):
    """A model option that is unknown, of the wrong type, or missing; the message names it and the known ones."""


@dataclass(frozen=True)
class Forwarding:
    """Where ``**options`` go: to an adapter class or factory (``to``), to a fixed set of names (``names``: name ->
    (type, default)), or to what the given values choose (``choose(values)``: a class, a factory or None, and the
    target's options the adapter sets itself)."""

    to: Any = None
    names: Mapping[str, tuple[Any, Any]] | None = None
    choose: Callable[[Mapping[str, Any]], tuple[Any, tuple[str, ...]]] | None = None  # -> (target, its fixed options)
    fixed: tuple[str, ...] = ()  # options of the target that the adapter sets itself


def forwards_options(to: Any = None, *, names: Mapping[str, tuple[Any, Any]] | None = None,
                     choose: Callable[[Mapping[str, Any]], Any] | None = None, fixed: tuple[str, ...] = ()) -> Callable:
    """Declare where a factory's or class's ``**options`` go (see :class:`Forwarding`)."""

    def mark(factory):
        setattr(factory, FORWARDS, Forwarding(to, names, choose, tuple(fixed)))
        return factory

    return mark


@dataclass(frozen=True)
class AdapterOption:
    name: str
    annotation: Any  # the resolved type (Any when it cannot be resolved)
    text: str  # the annotation as written
    default: Any = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def describe(self) -> str:
        return f"{self.name}: {self.text}" + (" (required)" if self.required else f" = {self.default!r}")


@dataclass(frozen=True)
class OptionSchema:
    options: dict[str, AdapterOption]
    forwarding: Forwarding | None = None  # where other names go (resolved against the values given)
    takes_any: bool = False  # a factory with **options and no declaration

    def resolved(self, values: Mapping[str, Any]) -> "OptionSchema":
        """The schema once the forwarded options are known (they may depend on ``values``, as the cascade's do)."""
        forwarding = self.forwarding
        if forwarding is None:
            return self
        fixed = forwarding.fixed
        if forwarding.names is not None:
            inner = OptionSchema({name: AdapterOption(name, kind, _text(kind), default)
                                  for name, (kind, default) in forwarding.names.items()})  # fmt: skip
        else:
            target, fixed = forwarding.choose(values) if forwarding.choose else (forwarding.to, ())
            inner = option_schema(target).resolved(values) if target is not None else OptionSchema({})
            fixed = (*forwarding.fixed, *fixed)
        forwarded = {name: option for name, option in inner.options.items()
                     if name not in self.options and name not in fixed}  # fmt: skip
        return OptionSchema({**self.options, **forwarded}, None, inner.takes_any)


def _text(kind: Any) -> str:
    return kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")


def _hints(function) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:  # an annotation that names what its module does not import at run time: checked as Any
        return {}


def option_schema(factory: Any) -> OptionSchema:
    """The options of an adapter class or factory function (see the module docstring)."""
    function = factory.__init__ if inspect.isclass(factory) else factory
    signature, hints = inspect.signature(function), _hints(function)
    options, var_keyword = {}, False
    for parameter in signature.parameters.values():
        if parameter.name == "self" or parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = True
            continue
        text = parameter.annotation if isinstance(parameter.annotation, str) else _text(parameter.annotation)
        options[parameter.name] = AdapterOption(parameter.name, hints.get(parameter.name, Any),
                                                "Any" if text is REQUIRED else text, parameter.default)  # fmt: skip
    if not var_keyword:
        return OptionSchema(options)
    declared = factory.__dict__.get(FORWARDS) if inspect.isclass(factory) else getattr(factory, FORWARDS, None)
    if declared is None and inspect.isclass(factory):
        parent = next((base for base in factory.__mro__[1:] if "__init__" in base.__dict__), None)
        declared = Forwarding(to=parent) if parent is not None and parent is not object else None
    return OptionSchema(options, declared, takes_any=declared is None)


def _validator(option: AdapterOption):
    from pydantic import ConfigDict, TypeAdapter

    return TypeAdapter(option.annotation, config=ConfigDict(arbitrary_types_allowed=True, coerce_numbers_to_str=True))


def check_options(model: str, factory: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` checked against the options of ``model`` (built by ``factory``): an unknown name (with the
    closest known one), a wrong type or a missing required option is a :class:`ModelOptionError`. Returns the
    values as the adapter takes them (``revision=2024`` read as text, for example)."""
    from pydantic import ValidationError

    schema = option_schema(factory).resolved(values)
    known = sorted(schema.options)
    listing = "; ".join(schema.options[name].describe() for name in known) or "none"
    checked = {}
    for name, value in values.items():
        option = schema.options.get(name)
        if option is None:
            if schema.takes_any:
                checked[name] = value
                continue
            raise ModelOptionError(f"model '{model}': unknown option '{name}'{did_you_mean(name, known)} (options: {listing})")
        try:
            checked[name] = _validator(option).validate_python(value)
        except ValidationError as error:
            raise ModelOptionError(f"model '{model}': option '{name}': expected {option.text}, got {value!r} "
                                   f"({error.errors()[0]['msg']})") from None  # fmt: skip
    missing = [name for name in known if schema.options[name].required and name not in values]
    if missing:
        raise ModelOptionError(f"model '{model}' needs option '{missing[0]}' (--model-arg {missing[0]}=...; options: {listing})")
    return checked
