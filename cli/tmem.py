"""``descgen taddr``: encode a tensor memory address (PTX ISA 9.1 §9.7.16.1.1) and show which
warp of a warpgroup may access its lane (§9.7.16.8.1).

Registered on the group of :mod:`descgen.cli.app`; imports click and descgen only (rich when a
table is drawn).
"""

from __future__ import annotations

from typing import Any

import click

import descgen
from descgen.words.taddr import warps_per_warpgroup

from .options import output_options
from .encoders import renderer
from .context import context_options
from .params import UINT

__all__ = ["taddr", "access_info"]


def access_info(lane: int) -> list[dict[str, Any]]:
    """Per warp of a warpgroup: its lanes and whether it may access ``lane`` with
    ``tcgen05.ld``/``st`` (§9.7.16.8.1), JSON-ready."""
    return [{"warp": w, "lanes": [r.start, r.stop - 1], "may_access": lane in r}
            for w, r in ((w, descgen.warp_lanes(w)) for w in range(warps_per_warpgroup()))]


@click.command("taddr", short_help="Encode a 32-bit tensor memory address (§9.7.16.1.1).")
@click.option("--lane", required=True, type=UINT, metavar="LANE", help="Lane index (row), 0-127 (bits 31-16).")
@click.option("--column", required=True, type=UINT, metavar="COLUMN",
              help="Column index (32-bit cells), 0-511 (bits 15-0).")
@context_options("warp", "alloc_columns", "alloc_base")
@output_options(code=True)
def taddr(out: Any, lane: int, column: int, context: dict[str, Any]) -> None:
    """Encode a tensor memory address: lane in bits 31-16, column in bits 15-0 (PTX §9.7.16.1.1).

    The tensor memory of a CTA is 128 lanes x 512 columns of 32-bit cells (§9.7.16.1).
    With tcgen05.ld/st, warp W of a warpgroup (warp ID % 4) may access lanes 32*W..32*W+31
    only (§9.7.16.8.1): --warp W checks it. --alloc-columns N checks tcgen05.alloc's nCols (a
    power of 2, 32-512); with --alloc-base ADDR (the address tcgen05.alloc wrote) the column
    must lie inside the allocation. A value that breaks a rule is refused (exit 1).

    Piped output is the word only; --table also shows which warps may access the lane;
    --json adds "access" (per warp: lanes, may_access).

    \b
      descgen taddr --lane 32 --column 0                      -> 0x00200000
      descgen taddr --lane 64 --column 16 --warp 2 --alloc-columns 128 --alloc-base 0
    """
    out.input = {"lane": lane, "column": column, **context}
    word = descgen.encode_taddr(lane, column, **context)
    if not (out.json or out.table or out.code):
        out.word(word, 32)
        return
    report = descgen.validate_taddr(word, **context)
    d = report.decoded["taddr"]
    access = access_info(lane)
    if out.code:
        warps = ", ".join(f"warp {a['warp']} (lanes {a['lanes'][0]}-{a['lanes'][1]})"
                          for a in access if a["may_access"])
        out.write_code(report, notes=[f"tcgen05.ld/st may access lane {lane} from: {warps} (sec. 9.7.16.8.1)"])
        return
    if out.json:
        out.emit_json(result=d.as_dict(), access=access)
        return
    renderer().encoded(d)
    _access_table(access, lane, context["warp"])


def _access_table(access: list[dict[str, Any]], lane: int, warp: int | None) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left",
              title=f"tcgen05.ld/st access to lane {lane} (§9.7.16.8.1)",
              caption="every warp may access every column", caption_justify="left")
    t.add_column("warp (ID % 4)", justify="right")
    t.add_column("lanes", no_wrap=True)
    t.add_column("may access lane", no_wrap=True)
    for row in access:
        mark = "yes" if row["may_access"] else "no"
        style = "bold green" if row["may_access"] else ("bold red" if row["warp"] == warp else "dim")
        given = " (--warp)" if row["warp"] == warp else ""
        t.add_row(str(row["warp"]), f"{row['lanes'][0]}-{row['lanes'][1]}", f"[{style}]{mark}{given}[/]")
    Console(highlight=False).print(t)
