"""descgen's command-line interface (installed as ``descgen.cli``; console script ``descgen``).

``descgen idesc | smem | zcm`` encode a descriptor word, ``descgen decode`` decodes and checks
one, ``descgen validate | check`` check words against every PTX rule with the instruction's
context, ``descgen explain | rules`` document the finding codes; ``descgen --help`` documents the
output modes and the exit status.

:func:`main` runs the click application (:mod:`.app`, imported then; :data:`cli` is loaded on
first use). rich loads only when a table is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .app import cli

__all__ = ["cli", "main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``descgen``); exits with the status documented in --help.

    A command runs with the cyclic garbage collector off and freezes what it built before it
    exits, so that the interpreter's final collection skips it: together about 10 ms piped and
    20 ms on a terminal (1x and 2x a bare interpreter's start-up, ``python bench/bench.py
    --startup``). The long commands (``scan``, ``batch``) turn the collector back on
    (:func:`descgen.cli.workers.collect_less`)."""
    import gc

    gc.disable()
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
