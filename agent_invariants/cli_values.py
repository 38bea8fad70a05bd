"""Option values parsed by the command line itself, so a short run does not import pydantic.

typer (0.20 and later) parses every option value through a pydantic `TypeAdapter` that it builds
the first time the option is processed: importing pydantic and building eighteen adapters is most
of the time of `check` on a small trace (CI jobs and pre-commit hooks run many of those). Our
options are simple: text, paths, integers with a lower bound, one word of an enum, flags. So
`Command` (the class of every command) gives each such parameter one of the small parsers below
before typer would build its adapter. Messages keep typer's form, "Invalid value for '--jobs' /
'-j': must be 1 or more, got 0", raised as the `BadParameter` typer prints.

A typer that parses values some other way has no `_runtime_param` slot on its parameters; then
nothing is replaced and typer parses as it always did.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ("Command", "Group")

_INTEGER = re.compile(r"[+-]?[0-9](?:_?[0-9])*(?:\.0+)?")   # what typer accepted: 12, +12, 1_000, 12.0
_SPACE = " \t\n\r\f\v"   # what typer stripped around a number (str.strip() would take \x1c-\x1f too)
_DIGITS = 4300   # Python's limit on converting text to an int (sys.int_info.default_max_str_digits)


class Command(TyperCommand):
    """A typer command whose option values are parsed by `_Parser`s (see the module's docstring)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _give_parsers(self.get_params(ctx))
        return super().parse_args(ctx, args)


class Group(TyperGroup):
    """The command group (`--version` and the completion options), likewise."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _give_parsers(self.get_params(ctx))
        return super().parse_args(ctx, args)


def _give_parsers(params: list[Any]) -> None:
    for param in params:
        if getattr(param, "_runtime_param", False) is None:   # typer's slot, still empty
            parser = _parser_for(param)
            if parser is not None:
                param._runtime_param = parser


class _Parser:
    """What typer asks of a parameter's runtime parser: `coerce(value, param=, ctx=)`."""

    def __init__(self, convert: Callable[[Any, Any, Any], Any], multiple: bool) -> None:
        self._convert = convert
        self._multiple = multiple

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if self._multiple else None
        if self._multiple:
            if isinstance(value, str):
                raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
            return [self._convert(item, param, ctx) for item in value]
        return self._convert(value, param, ctx)


def _parser_for(param: Any) -> _Parser | None:
    """A parser for the parameter's type, or None to leave it to typer."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or descriptor.file_annotation is not None:
        return None
    annotation = descriptor.annotation
    multiple = bool(param.multiple) or param.nargs == -1
    if multiple:
        if getattr(annotation, "__origin__", None) is not list or annotation.__args__ != (str,):
            return None
        return _Parser(_text, True)
    info = descriptor.parameter_info
    if info.parser is not None or info.clamp or _checks_paths(info):
        return None   # options that ask typer for more than these parsers do
    if annotation is bool:
        return _Parser(_flag, False)
    if annotation is str:
        return _Parser(_text, False)
    if annotation is Path:
        return _Parser(_path, False)
    if annotation is int and info.max is None:
        return _Parser(_integer_at_least(info.min), False)
    if isinstance(annotation, type) and issubclass(annotation, Enum) and info.case_sensitive:
        return _Parser(_choice(annotation), False)
    return None


def _checks_paths(info: Any) -> bool:
    """Whether a parameter asks typer to check or resolve its path (none of ours does)."""
    return bool(getattr(info, "exists", False) or not getattr(info, "file_okay", True)
                or not getattr(info, "dir_okay", True) or getattr(info, "writable", False)
                or getattr(info, "readable", True) is not True or getattr(info, "resolve_path", False)
                or getattr(info, "allow_dash", False) or getattr(info, "path_type", None) is not None)


def _shown(value: Any) -> str:
    """A value as an error message shows it: its repr, cut when long."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _flag(value: Any, param: Any, ctx: Any) -> bool:
    """A flag is a boolean already; text (from an environment variable) as click reads it."""
    if isinstance(value, bool):
        return value
    word = _text(value, param, ctx).strip().lower()
    if word in ("1", "true", "t", "yes", "y", "on"):
        return True
    if word in ("0", "false", "f", "no", "n", "off"):
        return False
    raise typer.BadParameter(f"must be true or false, got {value!r}", ctx=ctx, param=param)


def _text(value: Any, param: Any, ctx: Any) -> str:
    if not isinstance(value, str):
        raise typer.BadParameter(f"must be text, got {value!r}", ctx=ctx, param=param)
    return value


def _path(value: Any, param: Any, ctx: Any) -> Path:
    return value if isinstance(value, Path) else Path(_text(value, param, ctx))


def _integer_at_least(least: int | float | None) -> Callable[[Any, Any, Any], int]:
    def convert(value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = _text(value, param, ctx).strip(_SPACE)
            if not text.isascii() or _INTEGER.fullmatch(text) is None:
                raise typer.BadParameter(f"must be an integer, got {_shown(value)}", ctx=ctx, param=param)
            try:
                number = int(text.partition(".")[0])
            except ValueError:   # longer than Python converts (4,300 digits)
                raise typer.BadParameter(f"must be an integer of at most {_DIGITS} digits", ctx=ctx,
                                         param=param) from None
        if least is not None and number < least:
            raise typer.BadParameter(f"must be {least} or more, got {number}", ctx=ctx, param=param)
        return number
    return convert


def _choice(enum: type[Enum]) -> Callable[[Any, Any, Any], Enum]:
    members = {member.value: member for member in enum}

    def convert(value: Any, param: Any, ctx: Any) -> Enum:
        if isinstance(value, enum):
            return value
        member = members.get(value)
        if member is None:
            listed = ", ".join(repr(name) for name in members)
            raise typer.BadParameter(f"{value!r} is not one of {listed}.", ctx=ctx, param=param)
        return member
    return convert
