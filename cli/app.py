"""The click application: ``descgen idesc | smem | zcm | decode | layout`` (the validation
commands ``validate | check | explain | rules`` are in :mod:`descgen.cli.validation`).

Startup imports click and descgen only; rich is imported by :mod:`descgen.cli.render`, which is
imported only when a table is drawn. ``idesc``, ``smem``, ``zcm`` and ``decode`` declare their
options here; their bodies are in :mod:`descgen.cli.encoders` and :mod:`descgen.cli.decoder`.
"""

from __future__ import annotations

import errno
import functools
import sys
from typing import Any, Callable, Sequence

import click

import descgen

from .output import (
    internal_error,
    interrupted,
    ENVELOPE_VERSION,
    error_dict,
    exit_code_for,
    write_json,
)
from . import decoder, encoders
from .context import APPLIES, context_options
from .options import DTYPE, MAJOR, output_options
from .params import TILE, UINT, KindType, LazyChoice, TypeChoice, UIntList, descriptor_names

# Encoder fields: the CLI checks the name (exit 2, completion); the library reads it case-insensitively.
FieldChoice = functools.partial(LazyChoice, as_typed=True)
#: An encoder's type field: PTX's names, or Triton's, PyTorch's, CUTLASS's, JAX's (a note names PTX's).
TypeFieldChoice = functools.partial(TypeChoice, as_typed=True)

__all__ = ["cli", "main"]

EPILOG = """\b
Instruction context (validate, check, decode and the encoders; each command takes the
options its words' rules use; not given = not checked, never guessed):
  --cta-group 1|2  --ws/--no-ws  --sp/--no-sp  --scale-vec 1X|2X|4X|block16|block32
  --a-tmem/--no-a-tmem  --arch sm_100a|...  --pattern-start BYTES (smem)  --m/--n (zcm)
  --warp 0-3  --alloc-columns N  --alloc-base ADDR (taddr: a tensor memory address)
-v lists the rules not checked for want of context. descgen rules lists every finding
code; descgen explain CODE shows one with a legal and an illegal example.

\b
Output:
  stdout is a terminal   a table of fields, findings and a bit diagram (--table forces it)
  stdout is piped        the bare hex word (0x08400010; 16 digits for 64-bit words), so
                         IDESC=$(descgen idesc ...) works; decode prints key=value lines,
                         validate/check one line per finding (--plain forces this form)
  --json                 {"descgen": 1, "command": ..., "input": {...}, "result": {...}};
                         on error {"descgen": 1, ..., "error": {"type", "message", "findings"}}
  --format c|cpp|ptx|python   (idesc, smem, zcm, taddr) the word as source code, its decoded
                         fields as a comment; --name sets the constant's name
                         (--format hex = the piped form, --format json = --json)
Data goes to stdout, diagnostics to stderr.

\b
Integers (words, addresses, sizes, counts): decimal, 0x hex or 0b binary, '_' separators
and C suffixes u, l, ul, ull (any case) allowed (0x0840_0010, 0x08400010u). A word pasted as
hex without 0x is read as hex: digits that are no decimal (08400a10, c000401000010800) and a
token of exactly 8 or 16 digits (08400010, 10400010, 4000404000010040, as printf("%08x") and
debuggers print it); other decimals that could be hex (0400) are decimal; each reading with a
note on stderr. Negative numbers and numbers over 64 bits are usage errors.

\b
Exit status:
  0  success
  1  a value breaks a PTX rule: the encoder refused it, or a decoded, validated or
     checked word has an error-severity finding (the output is still printed;
     validate and check take --exit-zero for scripts)
  2  usage error: unknown command, option, choice, kind, target or code, malformed
     integer, word too wide for its descriptor, context that does not apply
  3  internal error (a bug or a broken tables/ install; rerun with --traceback)
  130  interrupted (Ctrl-C); batch has written the answers made so far
"""


# --------------------------------------------------------------------------------------------
# The group: error policy in one place.


#: Commands defined in other modules of this package, imported when first named (or listed by
#: --help), so that ``descgen idesc`` loads none of them: name -> (module, function).
LAZY_COMMANDS = {
    "validate": ("validation", "validate"),
    "check": ("validation", "check"),
    "check-wgmma": ("validation", "check_wgmma"),
    "explain": ("validation", "explain"),
    "rules": ("validation", "rules"),
    "layout": ("layout", "layout"),
    "taddr": ("tmem", "taddr"),
    "diff": ("diffcmd", "diff"),
    "port": ("portcmd", "port"),
    "scan": ("scan", "scan"),
    "instrument": ("instrument", "instrument"),
    "sanitize": ("sanitize", "sanitize"),
    "batch": ("batch", "batch"),
    "header": ("header", "header"),
    "site": ("site", "site"),
}


class DescgenGroup(click.Group):
    """A click group that loads the commands of :data:`LAZY_COMMANDS` on first use, never shows a
    traceback (unless ``--traceback``) and, when the
    subcommand was given ``--json``, reports click usage errors as a JSON error envelope too."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in LAZY_COMMANDS:
            import importlib

            module, attr = LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), attr), name)
        return self.commands.get(name)

    def invoke(self, ctx: click.Context) -> Any:
        _tolerate_narrow_encodings()
        # Click keeps the subcommand name in _protected_args (8.2+) or protected_args (8.1).
        head = ctx.__dict__.get("_protected_args") or ctx.__dict__.get("protected_args") or []
        tokens = [*head, *ctx.args]
        tokens = tokens[: tokens.index("--")] if "--" in tokens else tokens
        ctx.meta["descgen.argv"] = tokens  # the command line, for the comment of emitted code
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            ctx.exit(interrupted())
        except click.ClickException as e:
            reported = _negative_word(e, tokens)
            if "--json" in tokens[1:]:
                write_json({"descgen": ENVELOPE_VERSION, "command": tokens[0] if tokens else None,
                            "error": error_dict(reported)})
            raise reported from None
        except Exception as e:
            if ctx.params.get("traceback") or (isinstance(e, OSError) and e.errno == errno.EPIPE):
                raise
            if isinstance(e, descgen.DescgenError):  # outside a command body (should not happen)
                click.echo(f"Error: {e}", err=True)
                ctx.exit(exit_code_for(e))
            ctx.exit(internal_error(e))


def _negative_word(e: click.ClickException, tokens: list[str]) -> click.ClickException:
    """``descgen decode -1``: click takes ``-1`` (or the ``-1`` of ``-12``) for an unknown option;
    for a command with positional values it is a negative number, reported as ``decode -- -1``
    reports it (the reading of :func:`descgen.core.numbers.parse_uint`), naming the argument."""
    from descgen.core.numbers import parse_uint

    if not isinstance(e, click.NoSuchOption) or e.ctx is None or not e.option_name[1:2].isdigit():
        return e
    argument = next((p for p in e.ctx.command.params if isinstance(p, click.Argument)), None)
    token = next((t for t in tokens if t.startswith(e.option_name)), e.option_name)
    if argument is None:
        return e
    try:
        parse_uint(token, words=True)
    except ValueError as negative:
        return click.BadParameter(str(negative), ctx=e.ctx, param=argument)
    return e


def _tolerate_narrow_encodings() -> None:
    """Citations contain '§' and the diagram box-drawing characters: on a stream whose encoding
    cannot hold them (PYTHONIOENCODING=ascii), print '?' rather than fail."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not encoding.startswith("utf"):
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):  # pragma: no cover - stream already in use
                pass


@click.group(
    cls=DescgenGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(descgen.__version__, "--version", "-V", prog_name="descgen", message="%(prog)s %(version)s")
@click.option("--traceback", is_flag=True, hidden=True,
              help="Re-raise errors with a Python traceback (for developers).")
def cli(traceback: bool) -> None:
    """Encode, decode and check NVIDIA Blackwell tcgen05 descriptors (PTX ISA 9.1 §9.7.16.4).

    \b
      descgen idesc --kind f16 --m 128 --n 256          instruction descriptor (32-bit)
      descgen smem --start-address 0x400 --lbo 2048 --sbo 128 --swizzle none
      descgen zcm --skip-span 1 --use-span 13 --start-count 1,3,5,7 --m 32 --n 64
      descgen decode 0x08400010                         which kinds is this word valid for?
      descgen validate 0x08020010 --kind f16 --cta-group 2 -v
      descgen check --idesc 0x08200010 --adesc 0x4000404000010040 --bdesc 0x4000404000010440 --kind f16
      descgen explain IDESC-N-SHAPE                     a finding code: rule, source, examples
      descgen smem --tile 128x64 --dtype bf16 --major k --swizzle 128B --addr 0x400
      descgen layout 0x4000404000010040 --dtype bf16 --major k --tile 128x16
      descgen idesc --kind f16 --m 128 --n 256 --format cpp     the word as C, C++, PTX, Python
      descgen taddr --lane 32 --column 0 --warp 1              tensor memory address (32-bit)
      descgen diff 0x08400010 0x08200010                      what differs, field by field
      descgen scan kernel.ptx                                  check the descriptors in PTX
      descgen check-wgmma --shape m64n128k16 --dtype f32 --atype f16 --adesc 0x4000004000010040 --bdesc 0x4000004000010440
      descgen batch requests.jsonl                             JSON-lines requests, in bulk
    """  # noqa: E501


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``descgen``); exits with the status documented in --help."""
    cli.main(args=argv, prog_name="descgen")


# --------------------------------------------------------------------------------------------
# Shared options.


def _mn_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--n", "mask_n", type=UINT, metavar="N", help="With --m: the MMA's N, to show the N-bit mask.")(f)
    f = click.option("--m", "mask_m", type=UINT, metavar="M",
                     help="With --n: the MMA's M (32, 64, 128), to show the mask and check the rules for that M.")(f)
    return f


def _body(body: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Under the option decorators of a command whose body is in another module (:mod:`.encoders`,
    :mod:`.decoder`): the def it decorates stands for ``body``, whose docstring is the help."""
    return lambda _: body


def _functions_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--functions", is_flag=True, help="With --format c|cpp|ptx|python: the word's fixed part as "
                        "a constant and its run-time fields as functions (idesc: the scale factor IDs or the sparsity "
                        "selector; zcm: the column shift); a word with none is the constant, and says so.")(f)


# --------------------------------------------------------------------------------------------
# Encoders.

_TYPE_HELP = "Default: the kind's ({})."


@cli.command(short_help="Encode a 32-bit instruction descriptor (Tables 42-44).")
@click.option("--kind", required=True, type=KindType(), help="MMA kind (kind::f16 and .kind::f16 accepted).")
@click.option("--m", "m", required=True, type=UINT, metavar="M",
              help="M: rows of A and D (the pair's M for cta_group::2).")
@click.option("--n", "n", required=True, type=UINT, metavar="N", help="N: columns of B and D.")
@click.option("--atype", type=TypeFieldChoice("atype"),
              help="A element type. "
                   + _TYPE_HELP.format("f16: f16, tf32: tf32, f8f6f4/mxf8f6f4: e4m3, i8: s8, mxf4*: e2m1"))
@click.option("--btype", type=TypeFieldChoice("btype"), help="B element type. Default: the kind's (as for --atype).")
@click.option("--dtype", type=TypeFieldChoice("dtype"),
              help="D type. " + _TYPE_HELP.format("f32; s32 for i8; block-scaled kinds: f32 only"))
# Defaults not given to click (shown only): click converts a default through its type, and these
# types' choices come from the tables (descgen.MAJORS, every kind's max shifts: 20 ms of start-up).
@click.option("--a-major", type=FieldChoice("majors"), help="A major-ness (mn = transpose A).  [default: k]")
@click.option("--b-major", type=FieldChoice("majors"), help="B major-ness (mn = transpose B).  [default: k]")
@click.option("--negate-a", is_flag=True, help="Negate A (not for i8).")
@click.option("--negate-b", is_flag=True, help="Negate B (not for i8).")
@click.option("--saturate", is_flag=True, help="Saturate (i8 only).")
@click.option("--sparse", is_flag=True, help="Sparse MMA (tcgen05.mma.sp).")
@click.option("--sparsity-selector", type=UINT, default=0, show_default=True, metavar="N",
              help="Sparsity selector 0-3 (Table 42 kinds).")
@click.option("--max-shift", type=LazyChoice("max_shift", cast=int),
              help=".ws B-reuse maximum shift (Table 42 kinds).  [default: 0]")
@click.option("--scale-type", type=TypeFieldChoice("scale_type"),
              help="Scale factor type (mx kinds). " + _TYPE_HELP.format("ue8m0; ue4m3 for mxf4nvf4"))
@click.option("--a-sf-id", type=UINT, default=0, show_default=True, metavar="N",
              help="Scale factor A ID 0-3 (mx kinds).")
@click.option("--b-sf-id", type=UINT, default=0, show_default=True, metavar="N",
              help="Scale factor B ID 0-3 (mx kinds).")
@click.option("--k", "k", type=UINT, metavar="K",
              help="The MMA's K; only mxf4/mxf4nvf4 dense can choose (96). Default: Table 39's.")
@click.option("--svg", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Also draw the MMA as SVG into FILE: A (M x K), B (K x N), D (M x N) with types and majors. "
                   "- : the SVG alone on stdout.")
@_functions_option
@context_options(*APPLIES["idesc"])
@output_options(code=True)
@_body(encoders.idesc)
def idesc() -> None:
    """(descgen.cli.encoders.idesc)"""


#: A/B element types (tables/smem_atoms.toml) and major-ness, for the layout options.


@cli.command(short_help="Encode a 64-bit shared memory descriptor (Tables 40-41; --arch sm_90a: wgmma), "
                        "or derive one from a tile.")
@click.option("--start-address", "--addr", "start_address", type=UINT, metavar="BYTES",
              help="Matrix start address in shared memory, bytes (16-aligned). Left out with --format "
                   "c|cpp|ptx|python: the descriptor's fixed part and functions that take the address at run time "
                   "(with --tile: NAME, NAME_k, NAME_stage; with --lbo/--sbo: NAME, NAME_advance).")
@click.option("--stage-bytes", type=UINT, metavar="BYTES", help="Without --addr: bytes from one pipeline stage's tile "
              "to the next, for the NAME_stage function (default: the tile's size).")
@click.option("--swizzle", required=True, type=LazyChoice("swizzles"), help="Swizzling mode (case-insensitive).")
@click.option("--lbo", type=UINT, metavar="BYTES", help="Leading dimension byte offset (or address, --lbo-mode "
              "absolute). Computed with --tile.")
@click.option("--sbo", type=UINT, metavar="BYTES", help="Stride dimension byte offset. Computed with --tile.")
@click.option("--base-offset", type=UINT, metavar="N", help="Matrix base offset 0-7 (Table 41). Default 0; with --tile "
              "it comes from --pattern-start.")
@click.option("--lbo-mode", type=FieldChoice("lbo_modes"), help="Leading dimension stride mode. Default relative.")
@click.option("--tile", type=TILE, help="Derive LBO, SBO and the base offset from a tile of MN x K elements "
              "(with --dtype and --major); prints the reasoning.")
@click.option("--dtype", type=DTYPE, help="With --tile: A/B element type.")
@click.option("--major", type=MAJOR, help="With --tile: k (K-major) or mn (MN-major).")
@click.option("--pattern-start", type=UINT, metavar="BYTES", help="Where the repeating swizzle pattern starts "
              "(Table 41). With --tile it sets the base offset (default: absolute address bits, base offset 0); "
              "else the base offset is checked against it.")
@click.option("--atom-order", type=LazyChoice("atom_orders"), help="With --tile: which neighbour follows an "
              "atom in memory: mn_first (default; CuTe tile_to_shape Step<_1,_2>) or k_first.")
@click.option("--kind", type=KindType(), help="With --tile: MMA kind; needed for e2m1.")
@context_options("arch", wgmma=True)
@output_options(code=True)
@_body(encoders.smem)
def smem() -> None:
    """(descgen.cli.encoders.smem)"""


@cli.command(short_help="Encode a 64-bit zero-column mask descriptor (Table 45).")
@click.option("--skip-span", required=True, type=UINT, metavar="COUNT",
              help="Run length of zeroed columns (mask bits 1), 1-256.")
@click.option("--use-span", required=True, type=UINT, metavar="COUNT",
              help="Run length of used columns (mask bits 0), 1-256.")
@click.option("--start-count", type=UIntList(4), default="0,0,0,0", show_default=True,
              help="Per sub-mask: mask bits dropped from its start, 0-255.")
@click.option("--first-span", type=UIntList(4), default="0,0,0,0", show_default=True,
              help="Per sub-mask: first value, 0 (used) or 1 (zeroed).")
@click.option("--nonzero-mask/--no-nonzero-mask", default=True, show_default=True,
              help="--no-nonzero-mask makes the mask all zeros.")
@click.option("--column-shift", type=UINT, default=0, show_default=True, metavar="N",
              help="Columns of B to shift by, 0-32 (16 for M = 32).")
@_mn_options
@_functions_option
@context_options("ws")
@output_options(code=True)
@_body(encoders.zcm)
def zcm() -> None:
    """(descgen.cli.encoders.zcm)"""


# --------------------------------------------------------------------------------------------
# Decoder.


@cli.command(short_help="Decode and check descriptor words.")
@click.argument("words", nargs=-1, required=True, metavar="WORD...")
@click.option("--as", "as_", type=LazyChoice(descriptor_names),
              help="Descriptor type (taddr: a tensor memory address). Default: idesc below 2**32 (taddr where no "
                   "kind reads the word and it is a valid one), else smem, wgmma_smem and zcm.")
@click.option("--kind", type=KindType(), help="MMA kind for an idesc (implies --as idesc). Default: every kind.")
@_mn_options
@context_options("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch", "pattern_start", "warp", "alloc_columns",
                 "alloc_base", wgmma=True)
@click.option("-v", "--verbose", is_flag=True,
              help="Also list the rules not checked because their context was not given.")
@click.option("--all", "show_all", is_flag=True, help="When several readings are consistent: show each in full "
                                                      "(the table shows one line per reading, then the best in full).")
@click.option("--short", is_flag=True, help="One line per word: its reading(s), key fields and findings "
              "(with --json: one compact JSON object per word, JSON lines).")
@output_options
@_body(decoder.decode)
def decode() -> None:
    """(descgen.cli.decoder.decode)"""
