"""``descgen instrument FILE.ptx -o OUT.ptx``: the PTX with run-time checks of every descriptor
operand the static scan could not prove (docs/sanitizer.md), and its site table beside it.

Only click and descgen are imported here; :mod:`descgen.sanitizer.instrument` loads when the
command runs.
"""

from __future__ import annotations

import sys

import click

from .options import output_options
from .output import EXIT_RULE, Output
from .params import ArchType

__all__ = ["instrument"]


@click.command(short_help="Put run-time checks of the descriptor operands into PTX (the sanitizer).")
@click.argument("file", metavar="FILE.ptx|-")
@click.option("-o", "--output", "output", metavar="OUT.ptx", required=True,
              help="Where to write the instrumented PTX (- for stdout); its site table goes to OUT.ptx.sites.json.")
@click.option("--arch", type=ArchType(wgmma=True, bare=True), help="The target, if the file's .target does not say.")
@click.option("--on-error", type=click.Choice(["trap", "report"]), default="trap", show_default=True,
              help="trap: a finding stops the kernel after its record is written; report: record it and run on.")
@output_options
def instrument(out: Output, file: str, output: str, arch: str | None, on_error: str) -> None:
    """Instrument FILE.ptx (- reads standard input): before every tcgen05.mma (all forms),
    tcgen05.cp and wgmma.mma_async whose descriptor operands have bits known only at run time, a
    block that checks those operands' fields and the catalog's open rules (severity error and
    warning) from the very registers the instruction reads, generated from the rules'
    declarations; a site the scan proved gets none. A finding writes one record to the report
    buffer (the module global descgen_report, attached by the host: docs/sanitizer.md) and, with
    --on-error trap, stops the kernel: a tcgen05 finding where it happens, a wgmma one where its
    thread leaves the kernel (its wgmma read a legal stand-in word until then).

    \b
    Output: the scan's errors and warnings (what is wrong at compile time is reported now, not
    checked again), then one summary line on stderr: sites, how many are checked at run time (and
    how many of them once per entry into their K loop, for each value of its stage counter: a
    table the loop reads a bit of), proven by the scan, or have nothing the checks cover.
    Exits 1 when the scan found an error (the PTX is still written), 2 on a usage error.

    \b
      descgen instrument gemm.ptx -o gemm.checked.ptx
      nvcc -ptx -arch=sm_90a gemm.cu -o - | descgen instrument - -o gemm.checked.ptx && ptxas -arch=sm_90a ...
    """
    import json

    from descgen.sanitizer.instrument import instrument_ptx

    name = "<stdin>" if file == "-" else file
    text = sys.stdin.read() if file == "-" else click.open_file(file, encoding="utf-8").read()
    done = instrument_ptx(text, arch=arch, on_error=on_error, file=name)  # type: ignore[arg-type]
    if output == "-":
        click.echo(done.ptx, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(done.ptx)
        with open(output + ".sites.json", "w", encoding="utf-8") as fh:
            fh.write(done.sites_json())
    shown = [f for f in done.findings if f.severity in ("error", "warning")]
    if out.json:
        out.emit_json(input={"file": name, "output": output, "arch": arch, "on_error": on_error},
                      result={"sites": json.loads(done.sites_json())["sites"],
                              "findings": [f.as_dict() for f in shown]})
    else:
        for f in shown:
            click.echo(f"{name}:{f.line}: {f.severity}: {f.message()}", err=output == "-")
        click.echo(done.summary(), err=True)
    if any(f.severity == "error" for f in shown):
        click.get_current_context().exit(EXIT_RULE)
