"""descgen's command-line interface (installed as ``descgen.cli``; console script ``descgen``).

``descgen idesc | smem | zcm`` encode a descriptor word, ``descgen decode`` decodes and checks
one, ``descgen validate | check`` check words against every PTX rule with the instruction's
context, ``descgen explain | rules`` document the finding codes; ``descgen --help`` documents the
output modes and the exit status. Only click and descgen are imported here: rich and bitstring
load when a table is drawn.
"""

from __future__ import annotations

from .app import cli, main  # the other commands' modules load when a command is named (app.LAZY_COMMANDS)

__all__ = ["cli", "main"]
