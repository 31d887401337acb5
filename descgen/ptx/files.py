"""Scanning many PTX files (a directory, a compiler's cache), one by one or over forked workers.

:func:`scan_files` reads each path as :func:`descgen.ptx.scan.scan_file` would and gives one
:class:`FileScan` per path, in the order given. With ``jobs > 1`` whole files go to forked worker
processes (``multiprocessing``, standard library) and come back pickled: the answers are those of
one process, in the same order (``tests/test_scan_files.py`` compares them on the corpus).
"""

from __future__ import annotations

import collections
import os
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from ..model.context import normalize_arch
from .syntax_rules import known_without_tcgen05
from ..core.types import SmemArch
from ..core.workers import MAX_AUTO_JOBS, PARALLEL_BYTES, can_fork, cores, ignore_interrupt
from .results import ScanChunk
from .scan import scan_stream
from .skipping import not_ptx

__all__ = ["FileScan", "scan_files", "auto_jobs"]

#: Files handed out and not yet given back, per worker.
_AHEAD = 8


@dataclass
class FileScan:
    """One path's scan.

    Attributes:
        name: the path as given (``<stdin>`` for ``-``).
        error: why the file could not be read (its OS error), else None.
        not_ptx: why it is not PTX to scan (:func:`~descgen.ptx.skipping.not_ptx`: empty, binary, or
            neither ``.version`` nor an instruction to check), else None. Such a file is not
            scanned: no chunks. Text without ``.version`` that holds a tcgen05 or wgmma
            instruction is scanned (a fragment).
        chunks: its :class:`~descgen.ptx.results.ScanChunk` s, in file order: made as they are read
            (one process) or all at once (a worker).
        arch, arch_from, version: as :class:`~descgen.ptx.scan.ScanStream`'s, once ``chunks``
            has been read.
    """

    name: str
    error: str | None = None
    not_ptx: str | None = None
    chunks: Iterable[ScanChunk] = ()
    _stream: Any = None

    @property
    def status(self) -> str:
        """``"scanned"``, ``"not-ptx"`` (:attr:`not_ptx` says why) or ``"unreadable"``
        (:attr:`error` says why): the one word ``descgen scan`` reports a path with."""
        return "unreadable" if self.error is not None else "not-ptx" if self.not_ptx is not None else "scanned"

    @property
    def reason(self) -> str | None:
        """Why the path was not scanned (None when it was)."""
        return self.error if self.error is not None else self.not_ptx

    @property
    def arch(self) -> str | None:
        return None if self._stream is None else self._stream.arch

    @property
    def arch_from(self) -> str | None:
        return None if self._stream is None else self._stream.arch_from

    @property
    def version(self) -> tuple[int, str] | None:
        return None if self._stream is None else self._stream.version


@dataclass(frozen=True)
class _Ended:
    """A worker's stream once read (what :class:`FileScan` reports of it)."""

    arch: str | None
    arch_from: str | None
    version: tuple[int, str] | None


def auto_jobs(paths: list[str]) -> int:
    """Workers for ``paths`` when the caller leaves it to descgen: one per core (at most
    :data:`~descgen.core.workers.MAX_AUTO_JOBS`, at most one per file) for several files, none of them
    standard input, of at least :data:`PARALLEL_BYTES` in all; else 1."""
    if len(paths) < 2 or "-" in paths or not can_fork():
        return 1
    size = 0
    for p in paths:
        try:
            size += os.stat(p).st_size
        except OSError:
            pass
    return min(cores(), MAX_AUTO_JOBS, len(paths)) if size >= PARALLEL_BYTES else 1


def _scan_path(path: str, arch: SmemArch | None, whole: bool) -> FileScan:
    """Read and scan one path (``-``: standard input); with ``whole`` the chunks are made now."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            text = _read_stdin()
        else:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
    except OSError as e:
        return FileScan(name, error=str(e.strerror or e))
    why = not_ptx(text)
    if why:
        return FileScan(name, not_ptx=why)
    stream = scan_stream(text, filename=name, arch=arch)
    if not whole:
        return FileScan(name, None, None, stream, stream)
    chunks = list(stream)
    return FileScan(name, None, None, chunks, _Ended(stream.arch, stream.arch_from, stream.version))


def _read_stdin() -> str:
    """Standard input as a file is read (UTF-8, undecodable bytes replaced, universal newlines),
    whatever the locale made of ``sys.stdin``: random bytes are "binary" on both."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin.read()
    data: bytes = buffer.read()
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _work(task: tuple[str, SmemArch | None]) -> FileScan:
    """In a worker: one file, scanned whole."""
    return _scan_path(task[0], task[1], True)


def scan_files(paths: Iterable[str], *, arch: SmemArch | None = None, jobs: int = 1) -> Iterator[FileScan]:
    """Each path's scan (:func:`~descgen.ptx.scan.scan_ptx`'s, as chunks), in the order given.

    Args:
        paths: files (``-``: standard input, read in this process); expand directories first
            with :func:`~descgen.ptx.skipping.ptx_files`.
        arch: the target, for every file (None: each file's ``.target``).
        jobs: worker processes (forked; where there is no ``fork``, or with 1, this process
            scans). Each takes whole files, a few ahead of the one being given back, so output
            written as the results come is in input order; memory holds those files' results.

    Yields:
        :class:`FileScan` per path; one process yields each before scanning it (its chunks are
        made as they are read: memory bounded by the largest function).

    Raises:
        UsageError: ``arch`` is not a target descgen knows, nor a bare one (``CONTEXT-ARCH``), before any file is
            read. An error in a worker is raised here as it was raised there.
    """
    paths = list(paths)
    if not known_without_tcgen05(str(arch)):  # (sm_110, sm_90a: a .target without tcgen05, E49, per file)
        normalize_arch(arch)  # a target descgen does not know: UsageError here, before any file is read
    if jobs <= 1 or "-" in paths or not can_fork():
        for path in paths:
            yield _scan_path(path, arch, False)
        return
    import multiprocessing

    pending: collections.deque[Any] = collections.deque()
    with multiprocessing.get_context("fork").Pool(jobs, ignore_interrupt) as pool:
        for path in paths:
            pending.append(pool.apply_async(_work, ((path, arch),)))
            while pending and (len(pending) >= _AHEAD * jobs or pending[0].ready()):
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()
