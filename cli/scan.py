"""``descgen scan FILE|DIR|- ...``: every tcgen05.mma / tcgen05.cp in PTX files, each descriptor
operand's compile-time bits decoded and checked, reported compiler-style.

Only click and descgen are imported here; :mod:`descgen.ptx.scan` loads when the command runs. Output
is written as each function is scanned (memory and time linear in the input, every form).
"""

from __future__ import annotations

import json
from typing import Any

import click

from .options import output_options
from .output import EXIT_RULE, EXIT_USAGE, Output
from .params import ArchType
from .workers import collect_less, parse_jobs

__all__ = ["scan"]


@click.command(short_help="Find every tcgen05.mma/tcgen05.cp in PTX files and check their descriptors' known bits.")
@click.argument("files", metavar="FILE|DIR|-...", nargs=-1, required=True)
@click.option("--arch", type=ArchType(wgmma=True, bare=True),
              help="The target; overrides each file's .target (default: its .target). A target without tcgen05 "
                   "(sm_90a, whose wgmma is checked; sm_110: its a/f forms have it, E49) is reported as such a "
                   ".target is.")
@click.option("-v", "--verbose", is_flag=True,
              help="Also print each instruction with its descriptor operands: value or known bits (? = unknown), "
                   "where they come from, the fields checked, the rules not checked, and the notes.")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when an error finding is present (usage errors still exit 2).")
@click.option("-j", "--jobs", default="auto", metavar="N|auto", show_default=True,
              help="Worker processes, each scanning whole files; the output is the same, in the same order. "
                   "auto: one per core (at most 8, at most one per file) for several files of 1 MB or more in all.")
@output_options(json_help="Print JSON lines as the scan goes (one object per line, described above), not one "
                           "envelope.")
def scan(out: Output, files: tuple[str, ...], arch: str | None, verbose: bool, exit_zero: bool, jobs: str) -> None:
    """Scan PTX files (a directory: every *.ptx under it; - reads standard input) for every
    tcgen05.mma (all forms: .sp, .ws, .ws.sp, .block_scale, .collector::*, .ashift, [a-tmem]) and
    tcgen05.cp, and check each descriptor operand with the bits known at compile time: registers
    are followed over the whole function (every definition; the bits all definitions agree on),
    through mov (vector packing too), cvt, and/or/xor/not, add/sub, shl/shr, bfe/bfi, mul/mad,
    selp and prmt. Shared memory addresses, loads, kernel parameters and special registers are
    run-time values. Every field whose bits are known is checked with the instruction's
    qualifiers (kind, cta_group, .ws, .sp, scale vector size, A in tensor memory) and the file's
    .target; a rule that reads an unknown field is not checked.

    An immediate wider than its operand is read as ptxas reads it, its low bits, with a
    PTX-IMMEDIATE-TRUNCATED warning (E48).

    \b
    Output: one line per error or warning, by line:
      FILE:LINE: error|warning: CODE subject: message [source]
    then one summary line per file on stderr: instructions, operands fully known, partly known
    (fields checked), unknown, and what is known only at run time, grouped, with why.
    A file that is not PTX (empty, binary, or neither .version nor a tcgen05/wgmma instruction)
    is not scanned: one line on stderr, FILE: error: not PTX (why); not scanned.
    -v also prints each instruction, its operands (known bits, ? = unknown), the fields checked,
    the rules not checked and the notes (PTX-OPERAND-UNRESOLVED: one per operand).
    --json: not one envelope but JSON lines (one object per line), written as the scan goes:
    {"type": "run"}, then per instruction {"type": "instruction", "file", "line", operands with
    known_mask/known_value, fields_checked, not_checked, findings}, findings elsewhere
    {"type": "finding"}, per path {"type": "file", "file", "status"}: "scanned" with counts and
    run_time, "not-ptx" or "unreadable" with a "reason"; and last {"type": "summary"}.

    \b
    Exits 1 when a finding is an error (after printing), unless --exit-zero; 2 when a file
    cannot be read or is not PTX, or a directory holds no .ptx file (the others are still
    scanned).

    \b
      descgen scan kernel.ptx
      descgen scan ~/.triton/cache
      nvcc -ptx -arch=sm_100a k.cu -o - | descgen scan - -v
    """
    from descgen.ptx.files import scan_files
    from descgen.ptx.results import ScanTally
    from descgen.ptx.skipping import ptx_files

    collect_less("descgen.ptx.files")

    status = 0
    total = ScanTally()
    nfiles = 0
    skipped = {"not-ptx": 0, "unreadable": 0}
    if out.json:
        _json({"descgen": 1, "command": "scan", "type": "run", "input": {"files": list(files), "arch": arch}})
    paths = []
    for given in files:
        found = list(ptx_files([given]))
        if not found:  # a directory without a .ptx file under it: a typo in a CI path must not look clean
            click.echo(f"Error: no .ptx file under {given} (descgen scan reads *.ptx files in a directory)", err=True)
            status = EXIT_USAGE
        paths += found
    for done in scan_files(paths, arch=arch, jobs=_jobs(jobs, paths)):  # type: ignore[arg-type]
        name = done.name
        if done.status != "scanned":  # one report per path not scanned, the same in every case
            skipped[done.status] += 1
            status = max(status, EXIT_USAGE)
            if done.error is not None:
                click.echo(f"Error: cannot read {name}: {done.error}", err=True)
            else:
                click.echo(f"{name}: {_severity('error', out.table)}: not PTX ({done.not_ptx}); not scanned", err=True)
            if out.json:
                _json({"type": "file", "file": name, "status": done.status, "reason": done.reason})
            continue
        nfiles += 1
        tally = ScanTally()
        for chunk in done.chunks:
            tally.add(chunk.instructions, chunk.findings)
            if out.json:
                _emit_json(name, chunk)
            else:
                _emit_text(name, chunk, verbose, out.table)
        total.merge(tally)
        if out.json:
            _json({"type": "file", "file": name, "status": "scanned", "arch": done.arch, "arch_from": done.arch_from,
                   "version": done.version[1] if done.version else None, "ok": tally.counts["errors"] == 0,
                   "counts": tally.counts, "run_time": tally.run_time()})
        click.echo(tally.summary(name), err=True)
        if tally.counts["errors"] and not exit_zero:
            status = max(status, EXIT_RULE)
    if nfiles + skipped["not-ptx"] > 1 and nfiles:
        not_ptx = f", {skipped['not-ptx']} not PTX" if skipped["not-ptx"] else ""
        click.echo(total.summary(f"{nfiles} file{'s' * (nfiles > 1)}{not_ptx}"), err=True)
    if out.json:
        _json({"type": "summary", "files": nfiles, "not_ptx": skipped["not-ptx"], "unreadable": skipped["unreadable"],
               "ok": total.counts["errors"] == 0 and not any(skipped.values()), "counts": total.counts,
               "run_time": total.run_time()})
    if status:
        click.get_current_context().exit(status)


def _jobs(jobs: str, paths: list[str]) -> int:
    from descgen.ptx.files import auto_jobs

    n = parse_jobs(jobs)
    return auto_jobs(paths) if n is None else n


def _json(doc: dict[str, Any]) -> None:
    click.echo(json.dumps(doc, default=str, ensure_ascii=False))


def _emit_json(name: str, chunk: Any) -> None:
    at: dict[int, list[Any]] = {}
    for f in chunk.findings:
        at.setdefault(f.line, []).append(f)
    for ins in chunk.instructions:
        own = at.pop(ins.line, [])
        _json({"type": "instruction", "file": name, **ins.as_dict(), "findings": [f.as_dict() for f in own]})
    for line in sorted(at):
        for f in at[line]:
            _json({"type": "finding", "file": name, **f.as_dict()})


def _emit_text(name: str, chunk: Any, verbose: bool, styled: bool) -> None:
    """The chunk's findings by line (notes only with -v); with -v each instruction before them."""
    findings = [f for f in chunk.findings if verbose or f.severity != "info"]
    if not verbose:
        for f in findings:
            click.echo(_line(name, f, styled))
        return
    items: list[tuple[int, int, Any]] = [(i.line, 0, i) for i in chunk.instructions]
    items += [(f.line, 1, f) for f in findings]
    items.sort(key=lambda t: (t[0], t[1]))
    for _, kind, item in items:
        if kind == 0:
            click.echo(f"{name}:{item.line}: {_note('instruction', styled)}: {item.text}")
            for op in item.summary():
                click.echo(f"    {op}")
        else:
            click.echo(_line(name, item, styled))


def _severity(word: str, styled: bool) -> str:
    """``error``/``warning`` as the finding lines write it (colored on a terminal)."""
    return click.style(word, fg={"error": "red", "warning": "yellow"}.get(word, "blue"), bold=True) if styled else word


def _note(word: str, styled: bool) -> str:
    return click.style(word, bold=True) if styled else word


def _line(name: str, f: Any, styled: bool) -> str:
    from descgen.ptx.results import severity_word

    return f"{name}:{f.line}: {_severity(severity_word(f.severity), styled)}: {f.message()}"
