"""Option values parsed by the command line itself, so a short run does not import pydantic.

typer (0.20 and later) parses every option value through a pydantic `TypeAdapter` that it builds
the first time the option is processed: importing pydantic and building eighteen adapters is most
of the time of `check` on a small trace (CI jobs and pre-commit hooks run many of those). Our
options are simple: text, paths, integers and numbers within bounds, one word of an enum, flags. So
`Command` (the class of every command) gives each such parameter one of the small parsers below
before typer would build its adapter. Messages keep typer's form, "Invalid value for '--jobs' /
'-j': must be 1 or more, got 0", raised as the `BadParameter` typer prints.

A typer that parses values some other way has no `_runtime_param` slot on its parameters; then
nothing is replaced and typer parses as it always did.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from agent_invariants._paths import folder_named

__all__ = ("Command", "Group")

_INTEGER = r"[+-]?[0-9](?:_?[0-9])*(?:\.0+)?"   # what typer accepted: 12, +12, 1_000, 12.0 (compiled on first use)
_SPACE = " \t\n\r\f\v"   # what typer stripped around a number (str.strip() would take \x1c-\x1f too)
_DIGITS = 4300   # Python's limit on converting text to an int (sys.int_info.default_max_str_digits)


class _OwnParsers:
    """Before typer parses, each parameter it would parse with pydantic gets a `_Parser`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for param in self.get_params(ctx):  # type: ignore[attr-defined]
            if getattr(param, "_runtime_param", False) is None:   # typer's slot, still empty
                parser = _parser_for(param)
                if parser is not None:
                    param._runtime_param = parser
        return super().parse_args(ctx, args)  # type: ignore[misc,no-any-return]


class Command(_OwnParsers, TyperCommand):
    """A typer command whose option values are parsed by `_Parser`s (see the module's docstring),
    and whose help names each argument by its metavar alone (`TRACE`, not `TRACE <list[str]>`:
    typer writes the Python type of an argument beside it)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument) and param.metavar is not None:
                param.display_type_rich = _no_type   # type: ignore[method-assign]
        super().format_help(ctx, formatter)


def _no_type(ctx: Any) -> None:
    return None


class Group(_OwnParsers, TyperGroup):
    """The command group (`--version` and the completion options), likewise."""


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
        return _Parser(_output_path if param.name == "output" else _path, False)
    if annotation is int:
        return _Parser(_integer_in(info.min, info.max), False)
    if annotation is float:
        return _Parser(_number_in(info.min, info.max), False)
    if isinstance(annotation, type) and issubclass(annotation, Enum) and info.case_sensitive:
        return _Parser(_choice(annotation), False)
    return None


_PATH_DEFAULTS = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False, "readable": True,
                  "resolve_path": False, "allow_dash": False, "path_type": None}
"""typer's path options left as they are: a parameter that sets one asks typer to check its path."""


def _checks_paths(info: Any) -> bool:
    return any(getattr(info, name, default) != default for name, default in _PATH_DEFAULTS.items())


def _bad(what: str, value: Any, param: Any, ctx: Any) -> typer.BadParameter:
    """`must be <what>, got <value>`, the value shown as everywhere (`jsontext.show`, imported
    here: `--help` and the parsing of good values need none of it)."""
    from agent_invariants.jsontext import show

    return typer.BadParameter(f"must be {what}, got {show(value)}", ctx=ctx, param=param)


def _flag(value: Any, param: Any, ctx: Any) -> bool:
    """A flag is a boolean already (no option of ours reads an environment variable)."""
    if not isinstance(value, bool):
        raise _bad("true or false", value, param, ctx)
    return value


def _text(value: Any, param: Any, ctx: Any) -> str:
    if not isinstance(value, str):
        raise _bad("text", value, param, ctx)
    return value


def _path(value: Any, param: Any, ctx: Any) -> Path:
    return value if isinstance(value, Path) else Path(_text(value, param, ctx))


def _output_path(value: Any, param: Any, ctx: Any) -> Path:
    """`--output`'s path; one written as a folder's (`reports/`) is refused as a folder is, when
    the report is to be written (`output.NamedFolder`)."""
    if isinstance(value, str) and folder_named(value) is not None:
        from agent_invariants.output import NamedFolder

        named = NamedFolder(value)
        named.written = value
        return named
    return _path(value, param, ctx)


def _integer_in(least: int | float | None, most: int | float | None) -> Callable[[Any, Any, Any], int]:
    def convert(value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = _text(value, param, ctx).strip(_SPACE)
            if not text.isascii() or re.fullmatch(_INTEGER, text) is None:
                raise _bad("an integer", value, param, ctx)
            try:
                number = int(text.partition(".")[0])
            except ValueError:   # longer than Python converts (4,300 digits)
                raise typer.BadParameter(f"must be an integer of at most {_DIGITS} digits", ctx=ctx,
                                         param=param) from None
        return _within(number, least, most, number, param, ctx)
    return convert


def _number_in(least: int | float | None, most: int | float | None) -> Callable[[Any, Any, Any], float]:
    def convert(value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            try:
                number = float(_text(value, param, ctx).strip(_SPACE))
            except ValueError:
                raise _bad("a number", value, param, ctx) from None
        if not math.isfinite(number):   # (float() reads nan and inf, which no bound can judge)
            raise _bad("a number", value, param, ctx)
        return _within(number, least, most, value, param, ctx)
    return convert


Number = TypeVar("Number", int, float)


def _within(number: Number, least: int | float | None, most: int | float | None, given: object, param: Any,
            ctx: Any) -> Number:
    """`number`, or the BadParameter of one outside the option's bounds (`given`: as it was written)."""
    if least is not None and number < least:
        raise typer.BadParameter(f"must be {least} or more, got {given}", ctx=ctx, param=param)
    if most is not None and number > most:
        raise typer.BadParameter(f"must be {most} or less, got {given}", ctx=ctx, param=param)
    return number


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
