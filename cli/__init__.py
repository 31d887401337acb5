"""descgen's command-line interface (installed as ``descgen.cli``; console script ``descgen``).

``descgen idesc | smem | zcm`` encode a descriptor word, ``descgen decode`` decodes and checks
one, ``descgen validate | check`` check words against every PTX rule with the instruction's
context, ``descgen explain | rules`` document the finding codes; ``descgen --help`` documents the
output modes and the exit status.

:func:`main` first offers the command line to the click-free fast path (:mod:`.fast`:
``idesc``, ``smem``, ``zcm`` and ``decode``, read from a table generated from the click
commands), and otherwise to the click application (:mod:`.app`, imported then; :data:`cli` is
loaded on first use). rich loads only when a table is drawn.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .app import cli

__all__ = ["cli", "main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``descgen``); exits with the status documented in --help.

    A fast-path command (one word encoded, drawn and done) runs with the cyclic garbage collector
    off, and every command freezes what it built before it exits, so that the interpreter's final
    collections skip it: together about 15% of a terminal command's start-up
    (``python bench/bench.py --startup``). Long commands (``scan``, ``batch``) collect as they
    always did (:func:`descgen.cli.workers.collect_less`)."""
    import gc

    from .fast import run

    gc.disable()
    try:
        status = run(argv)
    except KeyboardInterrupt:  # while the fast path reads the options: as everywhere else, 130
        from .output import interrupted

        status = interrupted()
    if status is not None:
        gc.freeze()
        sys.exit(status)
    gc.enable()
    from .app import main as click_main

    try:
        click_main(argv)
    finally:
        gc.freeze()


def __getattr__(name: str) -> object:
    if name == "cli":
        from .app import cli

        return cli
    raise AttributeError(f"module 'descgen.cli' has no attribute {name!r}")
