"""Forked worker pools, shared by the library's parallel paths (:func:`descgen.ptx.files.scan_files`)
and the command line's (``descgen batch --jobs``): how many cores this process may use and how a
worker treats Ctrl-C. Standard library only.
"""

from __future__ import annotations

import os
import signal

__all__ = ["cores", "ignore_interrupt", "can_fork", "MAX_AUTO_JOBS", "PARALLEL_BYTES"]

#: ``--jobs auto`` uses at most this many workers.
MAX_AUTO_JOBS = 8
#: ``--jobs auto`` spreads its input over the cores from this many bytes on (scan: the files in
#: all; batch: a regular input file); below it the workers' start costs more than they save.
PARALLEL_BYTES = 1 << 20


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether worker processes can be forked here (POSIX); elsewhere every path runs in one."""
    return hasattr(os, "fork")


def ignore_interrupt() -> None:
    """A worker's initializer: Ctrl-C is the parent's to handle (it writes what is answered and
    ends the pool); a worker that took it too would print its own traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
