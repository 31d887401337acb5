"""The command line's fast path: ``descgen idesc``, ``smem``, ``zcm`` and ``decode`` answered without
importing click (``import click`` alone costs about four times a bare interpreter's start-up).

There is one definition of the command-line interface, the click commands of
:mod:`descgen.cli.app`. :func:`spec` reads from them, as data, what the fast path needs: each
option's spellings, whether it takes a value, whether it is required, the value click passes when
it is not given, and how its value is read (:meth:`descgen.cli.values.Reader.describe`: the same
click-free readers the click types use); a positional argument (``decode``'s WORDs: any number
of strings); the layers of the command's callback (``context_of``, ``output.call``) and its
click-free body (:mod:`descgen.cli.encoders`, :mod:`descgen.cli.decoder`). The table is stored in
:mod:`descgen.cli.fast_spec` (regenerate: ``python -m descgen.cli.fast > cli/fast_spec.py``);
``tests/test_cli_fast.py`` checks that it equals :func:`spec` of the click commands and that both
paths print the same bytes and exit with the same status for a broad set of command lines.

:func:`run` answers a command line only when it is sure that click would read it the same way:
the command is in the table; every token is an option spelled exactly as declared (``--opt
value`` or ``--opt=value``; a flag alone) or, for a command that takes them, a positional
argument (a token not starting with ``-``, or ``-`` alone); no option given twice, no value
starting with ``-``, no ``--``, no ``-h``/``--help``; every value reads without error or note;
every required option or argument is given; stdout and stderr are UTF-8 and no token holds an
escape character; shell completion is not asked for; not on Windows (where click expands
wildcards in the arguments and drives the console itself). Otherwise, and when the body raises a
usage error or meets a step only click takes (before printing anything,
:class:`~descgen.cli.output.HandOver`), it returns None and click answers the command line from
the start.
"""

from __future__ import annotations

import codecs
import importlib
import os
import sys
from typing import Any, Sequence

from .output import EXIT_OK, HandOver, Reported, call, context_of, fast_path, internal_error, interrupted

__all__ = ["run", "spec", "source"]


def _utf8(stream: Any) -> bool:
    try:
        return codecs.lookup(stream.encoding).name == "utf-8"
    except (AttributeError, LookupError, TypeError):
        return False


def _parse(params: Sequence[tuple[Any, ...]], tokens: Sequence[str]) -> dict[str, tuple[str, Any]] | None:
    """``{dest: ("flag", value) | ("value", text) | ("args", texts)}`` in the order given, or None
    if unsure. A token that is no option and does not start with ``-`` (or is ``-`` alone) is
    one of the command's positional arguments, if it takes them."""
    options: dict[str, tuple[str, bool | None, tuple[Any, ...]]] = {}
    positional: list[str] | None = None
    given: dict[str, tuple[str, Any]] = {}
    for param in params:
        if param[0] == "argument":
            positional = []
            given[param[1]] = ("args", positional)
        elif param[0] == "flag":
            _, dest, opts, secondary, _default = param
            options.update({opt: (dest, True, param) for opt in opts})
            options.update({opt: (dest, False, param) for opt in secondary})
        else:
            _, dest, opts, _required, _default, _reader = param
            options.update({opt: (dest, None, param) for opt in opts})
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if positional is not None and (token == "-" or not token.startswith("-")):
            positional.append(token)
            continue
        name, eq, text = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in options:
            return None
        dest, flag, _ = options[name]
        if dest in given:
            return None
        if flag is not None:
            if eq:
                return None
            given[dest] = ("flag", flag)
            continue
        if not eq:
            if i == len(tokens):
                return None
            text = tokens[i]
            i += 1
        if text.startswith("-"):
            return None
        given[dest] = ("value", text)
    return given


def run(argv: Sequence[str] | None = None) -> int | None:
    """Answer ``argv`` (default ``sys.argv[1:]``) without click and return the exit status, or
    return None, having printed nothing, for click to answer it."""
    from .fast_spec import COMMANDS

    tokens = list(sys.argv[1:] if argv is None else argv)
    if not tokens or tokens[0] not in COMMANDS or "_DESCGEN_COMPLETE" in os.environ or os.name == "nt":
        return None
    if any("\x1b" in t for t in tokens) or not (_utf8(sys.stdout) and _utf8(sys.stderr)):
        return None
    command = COMMANDS[tokens[0]]
    params = command["params"]
    given = _parse(params, tokens[1:])
    if given is None:
        return None
    from .values import reader

    kwargs: dict[str, Any] = {}
    notes: list[str] = []
    by_dest = {param[1]: param for param in params}
    for dest, (what, value) in given.items():  # click reads the given options first, in the order given
        if what in ("flag", "args"):
            kwargs[dest] = tuple(value) if what == "args" else value
            continue
        try:
            kwargs[dest] = reader(by_dest[dest][5]).convert(value, dest, notes.append)
        except ValueError:
            return None
    if notes:  # click prints them as it reads; a usage error after them would print them twice
        return None
    for param in params:
        if param[0] == "argument":
            if param[2] and not kwargs[param[1]]:  # required, none given
                return None
        elif param[1] not in kwargs:
            if param[0] == "option" and param[3]:  # required, not given
                return None
            kwargs[param[1]] = param[4]
    module, name = command["body"]
    body = getattr(importlib.import_module(module), name)
    with fast_path():
        try:
            return _call(tokens[0], body, command["layers"], kwargs)
        except HandOver:
            return None
        except KeyboardInterrupt:
            return interrupted()
        except OSError as e:
            import errno

            if e.errno == errno.EPIPE:  # the reader is gone: click reports it the same way when it runs again
                return None
            return internal_error(e)
        except Exception as e:  # as the click group reports it
            return internal_error(e)


def _call(name: str, body: Any, layers: Sequence[tuple[Any, ...]], kwargs: dict[str, Any]) -> int:
    """The command's callback as click calls it: its layers (outermost first), then its body."""
    for layer in layers:
        if layer[0] == "context":
            kwargs["context"] = context_of(layer[1], kwargs)
        else:
            try:
                status = call(name, body, (), kwargs)
            except Reported as e:
                return e.code
            return status or EXIT_OK
    return body(**kwargs) or EXIT_OK


# --------------------------------------------------------------------------------------------
# The table, from the click commands.

#: The commands the fast path answers.
FAST = ("idesc", "smem", "zcm", "decode")


def spec() -> dict[str, dict[str, Any]]:
    """The fast path's table, read from the click commands (imports click)."""
    import click

    from .app import cli

    out: dict[str, dict[str, Any]] = {}
    for name in FAST:
        cmd = cli.commands[name]
        defaults = cmd.make_context(name, [], resilient_parsing=True).params  # what click passes when not given
        params: list[tuple[Any, ...]] = []
        for p in cmd.params:
            if isinstance(p, click.Argument):
                if p.nargs != -1 or not isinstance(p.type, click.types.StringParamType) or p.envvar or p.callback:
                    raise ValueError(f"{name}: argument {p.name} is of a form the fast path does not read")
                params.append(("argument", p.name, p.required))
                continue
            if not isinstance(p, click.Option) or p.nargs != 1 or p.multiple or p.count or not p.expose_value \
                    or p.is_eager or p.envvar or p.prompt or p.callback:
                raise ValueError(f"{name}: option {p.name} is of a form the fast path does not read")
            if p.is_flag:
                if not isinstance(p.type, click.types.BoolParamType):
                    raise ValueError(f"{name}: flag {p.name} is not boolean")
                params.append(("flag", p.name, tuple(p.opts), tuple(p.secondary_opts), defaults[p.name]))
                continue
            if isinstance(p.type, click.types.StringParamType):
                description: tuple[Any, ...] = ("str",)
            else:
                description = p.type.reader.describe()  # type: ignore[attr-defined]
            params.append(("option", p.name, tuple(p.opts), p.required, defaults[p.name], description))
        layers: list[tuple[Any, ...]] = []
        f = cmd.callback
        while hasattr(f, "__wrapped__"):
            layers.append(f.descgen_layer)  # type: ignore[union-attr]
            f = f.__wrapped__  # type: ignore[union-attr]
        assert f is not None
        out[name] = {"body": (f.__module__, f.__name__), "layers": tuple(layers), "params": tuple(params)}
    return out


def source() -> str:
    """:mod:`descgen.cli.fast_spec`'s text for :func:`spec`."""
    lines = ['"""The fast path\'s option table (descgen.cli.fast), generated from the click commands:',
             "python -m descgen.cli.fast > cli/fast_spec.py (tests/test_cli_fast.py checks it is current).",
             "",
             "Per command: its click-free body (module, function), the layers of its callback, and per option",
             '("flag", dest, opts, secondary opts, value when not given) or',
             '("option", dest, opts, required, value when not given, reader description: descgen.cli.values);',
             'per positional argument (any number of strings) ("argument", dest, required).',
             '"""', "", "from typing import Any", "", "COMMANDS: dict[str, dict[str, Any]] = {"]
    for name, command in spec().items():
        lines += [f"    {name!r}: {{", f"        'body': {command['body']!r},", f"        'layers': {command['layers']!r},",
                  "        'params': ("]
        lines += [f"            {param!r}," for param in command["params"]]
        lines += ["        ),", "    },"]
    return "\n".join(lines + ["}", ""])


if __name__ == "__main__":
    sys.stdout.write(source())
