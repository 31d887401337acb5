"""``descgen scan FILE|-``: every tcgen05.mma / tcgen05.cp in a PTX file, its constant descriptor
operands decoded and checked, reported compiler-style.

Only click and descgen are imported here; :mod:`descgen.scan` loads when the command runs.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .app import output_options
from .output import EXIT_RULE, Output
from .params import ArchType

__all__ = ["scan"]


@click.command(short_help="Find every tcgen05.mma/tcgen05.cp in a PTX file and check its constant descriptors.")
@click.argument("file", metavar="FILE|-")
@click.option("--arch", type=ArchType(), help="The target; overrides the file's .target (default: its .target).")
@click.option("-v", "--verbose", is_flag=True,
              help="Also print each instruction with its descriptor operands: value, where it came from, decoded fields.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when an error finding is present (usage errors still exit 2).")
@output_options
def scan(out: Output, file: str, arch: str | None, verbose: bool, exit_zero: bool) -> None:
    """Scan FILE (a .ptx file; - reads standard input) for every tcgen05.mma (all forms: .sp,
    .ws, .ws.sp, .block_scale, .collector::*, .ashift, [a-tmem]) and tcgen05.cp, and check each
    descriptor operand that is a constant: an immediate, or a register set by an unpredicated
    mov from an immediate earlier in the same straight-line block (a label, branch, ret, exit,
    call or brace ends the block). The instruction's qualifiers are the context (kind,
    cta_group, .ws, .sp, scale vector size, A in tensor memory) and the file's .target the
    target. Operands that cannot be resolved are reported as notes, saying why.

    \b
    Output: one line per finding, by line:
      FILE:LINE: error|warning|note: CODE subject: message [source]
    then a summary on stderr (instructions, operands resolved, unresolved, errors).
    -v also prints each instruction, then its operands decoded, then its findings.
    --json: the envelope; "result" holds file, arch, counts, instructions (qualifiers,
    operands, decoded words, rules not checked) and findings.

    \b
    Exits 1 when a finding is an error (after printing), unless --exit-zero; 2 when FILE
    cannot be read.

    \b
      descgen scan kernel.ptx
      nvcc -ptx -arch=sm_100a k.cu -o - | descgen scan - -v
    """
    from descgen.scan import scan_ptx, severity_word

    name = "<stdin>" if file == "-" else file
    out.input = {"file": name, "arch": arch}
    if file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(file, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as e:
            raise click.UsageError(f"cannot read {file}: {e.strerror or e}") from None
    why = _not_ptx(text)
    if why:
        click.echo(f"warning: {name}: not a PTX file: {why}", err=True)
    result = scan_ptx(text, filename=name, arch=arch)
    if out.json:
        out.emit_json(result=result.as_dict())
    else:
        styled = out.table  # a terminal: colour the severity word
        by_line: dict[int, list[Any]] = {}
        for f in result.findings:
            by_line.setdefault(f.line, []).append(f)
        shown: set[int] = set()
        if verbose:
            for ins in result.instructions:
                for f in _before(by_line, shown, ins.line - 1):
                    click.echo(_line(name, f, severity_word, styled))
                click.echo(f"{name}:{ins.line}: {_note('instruction', styled)}: {ins.text}")
                for op in ins.summary():
                    click.echo(f"    {op}")
                for f in _before(by_line, shown, ins.line):
                    click.echo(_line(name, f, severity_word, styled))
        for f in _before(by_line, shown, None):
            click.echo(_line(name, f, severity_word, styled))
    click.echo(result.summary(), err=True)
    if not result.ok and not exit_zero:
        click.get_current_context().exit(EXIT_RULE)


def _not_ptx(text: str) -> str | None:
    """Why ``text`` is not a PTX file (every PTX module opens with a .version directive), or None."""
    import re

    if not text.strip():
        return "the file is empty"
    if "\x00" in text or "\ufffd" in text:
        return "the file is binary"
    if re.search(r"^\s*\.version\b", text, flags=re.M) is None:
        return "no .version directive"
    return None


def _before(by_line: dict[int, list[Any]], shown: set[int], line: int | None) -> list[Any]:
    """The findings not yet printed on lines up to ``line`` (None: all), in line order."""
    out = []
    for n in sorted(by_line):
        if n in shown or (line is not None and n > line):
            continue
        shown.add(n)
        out += by_line[n]
    return out


def _note(word: str, styled: bool) -> str:
    return click.style(word, bold=True) if styled else word


def _line(name: str, f: Any, severity_word: Any, styled: bool) -> str:
    word = severity_word(f.severity)
    if styled:
        word = click.style(word, fg={"error": "red", "warning": "yellow"}.get(word, "blue"), bold=True)
    return f"{name}:{f.line}: {word}: {f.message()}"
