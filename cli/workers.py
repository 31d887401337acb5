"""``--jobs N|auto`` for the commands that spread their input over forked workers (``batch``,
``scan``); the pools themselves are :mod:`descgen.workers`'. Imports click only.
"""

from __future__ import annotations

import os

import click

__all__ = ["parse_jobs"]


def parse_jobs(jobs: str) -> int | None:
    """``--jobs``: a positive worker count, or None for ``auto`` (the command decides). Workers
    are forked: where ``os.fork`` is missing, 1. Raises click.BadParameter otherwise."""
    if jobs == "auto":
        return None if hasattr(os, "fork") else 1
    try:
        n = int(jobs)
    except ValueError:
        n = 0
    if n < 1:
        raise click.BadParameter(f"{jobs!r} is not a positive integer or 'auto'", param_hint="'-j' / '--jobs'")
    return n if hasattr(os, "fork") else 1
