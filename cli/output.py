"""Output modes, the JSON envelope, the plain (piped) text form, exit codes and error reports.

Three modes, one per invocation (:class:`Output`):

- ``table``: rich rendering (:mod:`descgen.cli.render`, imported only then); the default when
  stdout is a terminal, forced by ``--table``;
- ``plain``: the default when stdout is not a terminal, forced by ``--plain``: the bare hex word for
  the encoders, ``key=value`` lines for ``decode`` (:func:`plain_decoded`);
- ``json``: ``--json`` (or ``--format json``), one versioned envelope (:data:`ENVELOPE_VERSION`);
- ``code``: ``--format c|cpp|ptx|python`` on the commands that produce a word: the word as source
  code with its decoded fields as a comment (:func:`descgen.emit`).

Data goes to stdout, diagnostics to stderr.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any, Callable, Iterable, Iterator, Sequence

import click
from click import echo  # re-exported: every line the commands print

import descgen
from descgen.model.engine import hex_bits, hex_word, unit_word  # re-exported: how every word, mask and unit is written
from descgen.model.engine import show_value as plain_value  # re-exported: how every field value is written
from descgen.words.zcm import binary_runs, mask_info  # re-exported: the mask's JSON form
from descgen.model.report import ROLES, role_of  # re-exported: the words of one instruction (descgen check)

__all__ = [
    "ENVELOPE_VERSION",
    "EXIT_OK",
    "EXIT_RULE",
    "EXIT_USAGE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "Output",
    "ROLES",
    "binary_runs",
    "echo",
    "error_dict",
    "exit_code_for",
    "hex_bits",
    "hex_word",
    "word_as",
    "internal_error",
    "interrupted",
    "mask_info",
    "plain_decoded",
    "plain_finding",
    "plain_mask",
    "plain_not_checked",
    "paged",
    "pager_option",
    "role_of",
    "plain_value",
    "unit_word",
    "usage_error",
    "write_json",
]

#: Version of the ``--json`` envelope (``{"descgen": 1, ...}``); bumped on incompatible change.
ENVELOPE_VERSION = 1

EXIT_OK = 0  #: success
EXIT_RULE = 1  #: a value breaks a PTX rule (EncodeError; a decode with an error finding)
EXIT_USAGE = 2  #: usage error (click, UsageError, WordError, malformed integer)
EXIT_INTERNAL = 3  #: a bug (or broken tables/): rerun with --traceback
EXIT_INTERRUPTED = 130  #: Ctrl-C (128 + SIGINT, as a shell reports it)


def usage_error(message: str, *, param_hint: str | None = None) -> click.UsageError:
    """A usage error (exit 2) to raise: ``click.UsageError``, or ``click.BadParameter`` naming
    ``param_hint`` (such as ``'WORD...'``, as click names a value it cannot read)."""
    if param_hint is not None:
        return click.BadParameter(message, param_hint=param_hint)
    return click.UsageError(message)


def exit_code_for(error: BaseException) -> int:
    """The exit status for an exception the library raised."""
    if isinstance(error, descgen.EncodeError):
        return EXIT_RULE
    if isinstance(error, (descgen.UsageError, descgen.WordError)):
        return EXIT_USAGE
    return EXIT_INTERNAL


# --------------------------------------------------------------------------------------------
# Plain text.


def plain_decoded(d: descgen.Decoded, prefix: str = "") -> list[str]:
    """The greppable form of one decode: ``key=value`` lines.

    ``descriptor=``, ``layout=``, ``kind=`` (idesc), ``word=``, ``ok=``, then one ``FIELD=VALUE``
    per field in bit order (logical values: bytes, rows, columns, type names; reserved/constant
    fields show their raw bits; ``?`` = unknown code), ``derived.NAME=VALUE`` per derived value and
    ``finding=SEVERITY CODE: ...`` per finding. ``prefix`` (e.g. ``f16.``) starts every line.
    """
    p = prefix
    lines = [f"{p}descriptor={d.descriptor}", f"{p}layout={d.layout}"]
    if d.kind:
        lines.append(f"{p}kind={d.kind}")
    lines += [f"{p}word={d.hex}", f"{p}ok={plain_value(d.ok)}"]
    lines += [f"{p}{f.name}={plain_value(f.value)}" for f in d.fields]
    lines += [f"{p}derived.{name}={plain_value(value)}" for name, value, _ in d.derived]
    lines += [f"{p}finding={finding}" for finding in d.findings]
    return lines


def word_as(word: int, descriptor: str) -> str:
    """A word as given, read as ``descriptor``: 8 hex digits for a 32-bit word read as an idesc or
    a tensor memory address, else 16 (the 64-bit descriptors, CUTLASS's runtime idesc)."""
    return hex_word(word, 32 if word < 1 << 32 and descriptor in ("idesc", "taddr") else 64)


def plain_finding(f: descgen.Finding) -> str:
    """One finding on one line: ``SEVERITY CODE FIELD=VALUE: rule [source]`` (validate, check)."""
    return f"{f.severity} {f.code} {f.field}={plain_value(f.value)}: {f.rule} [{f.source}]"


def plain_not_checked(n: descgen.NotChecked) -> str:
    """A rule that did not run: ``not-checked CODE needs=NAME,NAME: rule [source]``."""
    return f"not-checked {n.code} needs={','.join(n.missing)}: {n.rule} [{n.source}]"


def plain_mask(info: dict[str, Any]) -> list[str]:
    lines = [f"mask={info['mask']}", f"mask.m={info['m']}", f"mask.n={info['n']}"]
    lines += [f"mask.submask_{s['index']}={s['hex']}" for s in info["submasks"]]
    return lines


# --------------------------------------------------------------------------------------------
# The per-invocation output object.


class Output:
    """How this invocation prints: ``mode`` is ``json``, ``table`` or ``plain``.

    Commands fill ``input`` (what was asked, for the JSON envelope) as soon as they know it.
    """

    def __init__(self, command: str, mode: str, fmt: descgen.Format | None = None, name: str | None = None) -> None:
        self.command = command
        self.mode = mode
        self.format = fmt
        self.name = name
        self.input: dict[str, Any] = {}
        self.quiet = False  # --quiet: no warnings or notes on stderr in the plain form

    @classmethod
    def resolve(cls, command: str, as_json: bool, table: bool, plain: bool, fmt: descgen.Format | None = None,
                name: str | None = None) -> "Output":
        if as_json + table + plain + (fmt is not None) > 1:
            raise usage_error("--json, --table, --plain and --format are mutually exclusive")
        code = fmt not in (None, "hex", "json")  # --format hex is the plain mode, json the JSON mode
        if name is not None and not code:
            raise usage_error("--name names the constant of --format c, cpp, ptx or python")
        if code:
            return cls(command, "code", fmt, name)
        as_json, plain = as_json or fmt == "json", plain or fmt == "hex"
        if as_json:
            mode = "json"
        elif table:
            mode = "table"
        elif plain:
            mode = "plain"
        else:
            mode = "table" if _isatty(sys.stdout) else "plain"
        return cls(command, mode)

    @property
    def json(self) -> bool:
        return self.mode == "json"

    @property
    def table(self) -> bool:
        return self.mode == "table"

    @property
    def code(self) -> bool:
        return self.mode == "code"

    def write_code(self, what: Any, notes: Sequence[str] = (), functions: bool = False, **options: Any) -> None:
        """Print ``what`` (a Report, Decoded or TileDescriptor) as ``--format``'s source code, the
        command line that made it in the comment; ``functions``: its fixed part and run-time
        functions (descgen.emit_functions, with ``options`` such as ``stage_bytes``)."""
        import shlex

        argv = click.get_current_context().find_root().meta.get("descgen.argv", [])
        source = shlex.join(["descgen", *argv])
        assert self.format is not None  # (write_code runs under --format)
        if functions:
            echo(descgen.emit_functions(what, self.format, name=self.name, source=source, notes=notes, **options))
        else:
            echo(descgen.emit(what, self.format, name=self.name, source=source, notes=notes))

    def envelope(self, **parts: Any) -> dict[str, Any]:
        return {"descgen": ENVELOPE_VERSION, "command": self.command, "input": self.input, **parts}

    def emit_json(self, **parts: Any) -> None:
        write_json(self.envelope(**parts))

    def word(self, word: int, width: int, findings: Callable[[], Sequence[Any]] | None = None) -> None:
        """The plain form of an encode: the word on stdout, and its warnings and notes on stderr
        (``severity: CODE: ...``, the form the table and the emitted comment show), unless
        ``--quiet``. ``findings`` computes them when the word does not carry them (a tile's)."""
        echo(hex_word(word, width))
        if self.quiet:
            return
        for f in getattr(word, "findings", None) or (findings() if findings else ()):
            echo(f"{f.severity}: {str(f).partition(' ')[2]}", err=True)

    def lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            echo(line)

    def fail(self, error: BaseException, options: Iterable[str] = ()) -> int:
        """Report a library error on stderr: on a terminal (table mode) as the finding blocks
        ``validate`` prints, else one paragraph (and the JSON envelope on stdout with ``--json``);
        then, for a finding about a value that was not given and that one of the command's
        ``options`` gives, a note naming the option (``note: give --kind: one of ...``).
        Returns the exit status."""
        findings = getattr(error, "findings", ())
        if self.json:
            self.emit_json(error=error_dict(error, findings))
        if self.table and findings and isinstance(error, descgen.DescgenError):
            from .render import error_block

            error_block(error)
        else:
            echo(f"Error: {error}", err=True)
        for f in findings:
            if f.value is None and f.field in options:
                echo(f"note: give --{f.field.replace('_', '-')}: one of {f.allowed}", err=True)
        return exit_code_for(error)


def interrupted() -> int:
    """Ctrl-C: a blank line on stderr and the exit status 130; no traceback, no "Aborted!" with
    exit 1 (1 means a PTX rule)."""
    echo("", err=True)
    return EXIT_INTERRUPTED


def internal_error(error: BaseException) -> int:
    """Report an exception no command expects (a bug, a broken tables/ install); exit status 3."""
    echo(f"Error: internal error: {type(error).__name__}: {error}\n"
         "This is a bug in descgen; rerun with --traceback and report the output.", err=True)
    return EXIT_INTERNAL


def error_dict(error: BaseException, findings: Sequence[Any] = ()) -> dict[str, Any]:
    message = error.format_message() if isinstance(error, click.ClickException) else str(error)  # click's own message
    return {
        "type": type(error).__name__,
        "message": message,
        "findings": [f.as_dict() for f in findings],
    }


def write_json(obj: Any) -> None:
    import json

    echo(json.dumps(obj, indent=2))


class _TerminalBuffer(io.StringIO):
    """Collects what a paged command prints; says it is a terminal, so rich and click keep colour."""

    def isatty(self) -> bool:
        return True


@contextlib.contextmanager
def paged(enabled: bool = True) -> Iterator[None]:
    """Send what the block prints to stdout through a pager, as git does: only when stdout is a
    terminal, with ``$DESCGEN_PAGER``, else ``$PAGER``, else ``less`` (``LESS=FRX`` unless set:
    a screenful or less is printed as is); an empty pager or ``cat`` turns it off, and so does
    ``enabled=False`` (``--no-pager``). click runs the pager (:func:`click.echo_via_pager`)."""
    command = os.environ.get("DESCGEN_PAGER", os.environ.get("PAGER"))
    if not enabled or not _isatty(sys.stdout) or (command is not None and command.strip() in ("", "cat")):
        yield
        return
    buffer = _TerminalBuffer()
    with contextlib.redirect_stdout(buffer):
        yield
    saved = {name: os.environ.get(name) for name in ("PAGER", "LESS")}
    os.environ["PAGER"] = command or "less"
    os.environ.setdefault("LESS", "FRX")
    try:
        click.echo_via_pager(buffer.getvalue().removesuffix("\n"), color=True)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def pager_option(f: Any) -> Any:
    """``--no-pager``, for the commands whose output is long (descgen rules, explain)."""
    return click.option("--no-pager", is_flag=True, help="Print straight to the terminal; by default a long listing "
                        "goes through $DESCGEN_PAGER, $PAGER or less when stdout is a terminal.")(f)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
