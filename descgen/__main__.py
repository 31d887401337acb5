"""``python -m descgen``: the command-line interface (same as the ``descgen`` script)."""

from descgen.cli import main

main()
