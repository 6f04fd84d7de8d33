"""Help pages in words, not Python types: typer shows each value's Python type (`<list[Path]>`,
`<bool>`); these pages name what to pass (`<path>...`, `<text>`, nothing for a flag), or the
option's metavar (`NAME=VALUE`). Every command gets the page through the command class
typer takes (``cls``), set once for every command registered (``use_plain_help``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

# click's UsageError as typer raises it (typer 0.28 bundles its own copy of click): an unknown
# option or command, a missing or bad value.
USAGE_ERROR: type[Exception] = next(base for base in typer.BadParameter.__mro__ if base.__name__ == "UsageError")

# A type typer shows -> the word for what to pass.
WORDS = {"str": "text", "int": "integer", "float": "number", "path": "path", "Path": "path", "int range": "integer"}


class PlainHelpCommand(TyperCommand):
    """A command whose --help lists its arguments and options with what to pass, in words."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        with rich_loaded_on_usage_error():
            return super().make_context(*args, **kwargs)

    def get_help_option(self, ctx: Any) -> Any:
        return shown_as_output(super().get_help_option(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        arguments = [usage_word(param) for param in self.get_params(ctx) if is_argument(param)]
        return [self.options_metavar, *arguments] if self.options_metavar else arguments

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        write_params(self, ctx, formatter)
        self.format_epilog(ctx, formatter)


class PlainHelpGroup(TyperGroup):
    """A group (irr-audit, irr-audit rules, ...) whose --help lists its options in words and its commands."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        with rich_loaded_on_usage_error():
            return super().make_context(*args, **kwargs)

    def resolve_command(self, *args: Any, **kwargs: Any) -> Any:
        with rich_loaded_on_usage_error():
            return super().resolve_command(*args, **kwargs)

    def get_help_option(self, ctx: Any) -> Any:
        return shown_as_output(super().get_help_option(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        write_params(self, ctx, formatter)
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [
            (name, command.get_short_help_str(limit=150))
            for name, command in commands
            if command and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
        self.format_epilog(ctx, formatter)


@contextmanager
def rich_loaded_on_usage_error() -> Iterator[None]:
    """typer shows a usage error (an unknown option, a missing argument) in a panel of rich's,
    and rich draws from the global ``random`` when first imported: rich is imported first the way
    irr-audit's renderers import it, keeping the caller's random numbers (irr_audit.report.richimport),
    so that a command run in-process (typer's CliRunner, in a notebook) draws none of them."""
    try:
        yield
    except USAGE_ERROR:
        import irr_audit.report.richimport  # noqa: F401, PLC0415 (only when there is an error to show)

        raise


def shown_as_output(option: Any) -> Any:
    """``--help`` writing its page as the commands write their output (cli.shared.show): in UTF-8
    or the terminal's encoding, and a standard output that cannot take it (a full disk) is exit 2
    with output-unwritable, not a traceback."""
    if option is not None:
        option.callback = _show_help
    return option


def _show_help(ctx: Any, param: Any, value: bool) -> None:
    from irr_audit.cli.shared import show  # the light shared module; imported here, as it imports the app

    if value and not ctx.resilient_parsing:
        show(ctx.get_help() + "\n")
        ctx.exit()


def write_params(command: Any, ctx: Any, formatter: Any) -> None:
    arguments: list[tuple[str, str]] = []
    options: list[tuple[str, str]] = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        kind = arguments if param.param_type_name == "argument" else options
        kind.append((param_label(param, ctx), param_help(param)))
    for title, rows in (("Arguments", arguments), ("Options", options)):
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def use_plain_help(app: typer.Typer) -> None:
    """Give ``app``, its commands and its groups the plain help pages (a class of their own is kept)."""
    if app.info.cls in (None, TyperGroup) or not isinstance(app.info.cls, type):
        app.info.cls = PlainHelpGroup
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = PlainHelpCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            use_plain_help(group.typer_instance)


def value_word(param: Any, ctx: Any) -> str:
    """What to pass for ``param``: its metavar, nothing for a flag, else its type in words."""
    if param.metavar is not None:
        return str(param.metavar)
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    shown = param.display_type(ctx) if hasattr(param, "display_type") else param.make_metavar(ctx)
    word = plain_type(str(shown))
    repeated = getattr(param, "multiple", False) and not word.endswith("...")  # typer before 0.29 leaves it out
    return word + "..." if repeated else word


def plain_type(shown: str) -> str:
    """`<list[Path]>` -> `<path>...`, `<int>` -> `<integer>`, `<bool>` -> ``, `<csv|xlsx>` as it is."""
    text = shown.strip("<>")
    repeated = re.fullmatch(r"list\[(.*)\]", text)
    if repeated:
        text = repeated.group(1)
    if text == "bool":
        return ""
    return f"<{WORDS.get(text, text)}>" + ("..." if repeated else "")


def is_argument(param: Any) -> bool:
    return bool(param.param_type_name == "argument")


def usage_word(param: Any) -> str:
    """An argument in the usage line as the Arguments section names it: SHEETS..., [RULES_DIR]
    (typer writes {sheets}... and [inputs]..., braces that read as a choice, in lower case)."""
    name = param.metavar or param.name.upper()
    word = name if param.nargs == 1 or name.endswith("...") else f"{name}..."
    return word if param.required else f"[{word}]"


def param_label(param: Any, ctx: Any) -> str:
    if param.param_type_name == "argument":
        name = param.metavar or param.name.upper()
        word = "" if param.metavar else argument_word(param, ctx)
        return f"{name} {word}".strip()
    names = ", ".join([*param.opts, *param.secondary_opts])
    word = value_word(param, ctx)
    return f"{names} {word}".strip()


def argument_word(param: Any, ctx: Any) -> str:
    """What to pass for an argument: its type in words, `...` when it takes several (typer
    before 0.29 names an argument's metavar after the argument, so the word comes from its type)."""
    if not hasattr(param, "type"):  # typer 0.29 and later: the type typer shows
        return value_word(param, ctx)
    name = str(param.type.name)
    return f"<{WORDS.get(name, name)}>" + ("..." if param.nargs == -1 else "")


def param_help(param: Any) -> str:
    """The help of an option or argument, and its default where it has one worth showing (an
    optional argument's too: `rules check` without RULES_DIR reads rules/). The help itself
    states a default only where typer has none to show (None: the library decides)."""
    text = param.help or ""
    default = param.default
    if isinstance(default, Enum):
        default = default.value
    nothing = default is None or default is False or (isinstance(default, (list, tuple)) and not default)
    if param.show_default is not False and not nothing and not callable(default):
        text = f"{text}  [default: {default}]".strip()
    return text
