"""The options several commands share: ``--json``/``--table``/``--plain`` with the library-error
policy (:func:`output_options`), and the element type and major-ness choices of the tile options
(``smem --tile``, ``layout``). Below :mod:`descgen.cli.app` and the commands it loads, so that no
command module imports the application (the layer test checks cli/ has no import cycle).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar, overload

import click

import descgen

from .output import Output
from .params import LazyChoice, TypeChoice

__all__ = ["output_options", "DTYPE", "MAJOR"]

#: A tile's element type (``--dtype``): PTX's names, or another framework's with a note.
DTYPE = TypeChoice("element_types")
#: K-major or MN-major (``--major``).
MAJOR = LazyChoice("majors")


F = TypeVar("F", bound=Callable[..., Any])


@overload
def output_options(f: F, *, code: bool = ..., json_help: str | None = ...) -> F: ...
@overload
def output_options(f: None = ..., *, code: bool = ..., json_help: str | None = ...) -> Callable[[F], F]: ...
def output_options(f: Callable[..., Any] | None = None, *, code: bool = False, json_help: str | None = None) -> Any:
    """``--json``, ``--table`` and ``--plain``, and the library-error policy, for one command;
    with ``code=True`` (commands that produce a word) also ``--format`` and ``--name``;
    ``json_help`` for a command whose ``--json`` is not the one envelope (``scan``: JSON lines).

    The command receives an :class:`Output` as its first argument. A :class:`descgen.DescgenError`
    escaping it is reported (stderr paragraph; JSON envelope with ``--json``) and turned into the
    exit status: 1 for EncodeError, 2 for UsageError/WordError.
    """
    if f is None:
        return functools.partial(output_options, code=code, json_help=json_help)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        out = Output.resolve(ctx.info_name or f.__name__, kwargs.pop("as_json"), kwargs.pop("table"),
                             kwargs.pop("plain"), kwargs.pop("fmt", None), kwargs.pop("name", None))
        out.quiet = kwargs.pop("quiet", False)
        try:
            status = f(out, *args, **kwargs)
        except descgen.DescgenError as e:
            if ctx.find_root().params.get("traceback"):
                raise
            ctx.exit(out.fail(e, [name for name, value in kwargs.items() if value is None]))
        if status:  # a body that printed its answer returns its exit status (decoder.decode)
            ctx.exit(status)
        return status

    options = [
        click.option("--json", "as_json", is_flag=True, help=json_help or "Print a versioned JSON envelope."),
        click.option("--table", is_flag=True, help="Print the rich table even when stdout is not a terminal."),
        click.option("--plain", is_flag=True, help="Print the plain form (the piped default) even on a terminal."),
    ]
    if code:
        options += [
            click.option("--format", "fmt", type=LazyChoice("formats"), metavar="FORMAT",
                         help="hex (the piped default), json (= --json), or source code with the decoded fields as a "
                              "comment: c (#define NAME UINT32_C(...) / UINT64_C), cpp (constexpr std::uint32_t / "
                              "std::uint64_t), ptx (mov.b32 / mov.b64 %name, ...;), python (NAME = 0x...); the type "
                              "is the word's width."),
            click.option("--name", metavar="IDENT", help="With --format c|cpp|ptx|python: the constant's or register's "
                                                         "name. Default: the descriptor's (IDESC, smem_desc, "
                                                         "%zcm_desc...)."),
            click.option("-q", "--quiet", is_flag=True, help="Plain output: the word only, without its warnings and "
                                                             "notes on stderr."),
        ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper
