"""``descgen batch``: JSON-lines requests in, one JSON line per request out (:mod:`descgen.batch`).

Registered on the group at the bottom of :mod:`descgen.cli.app`. Imports click only; descgen.batch
loads when the command runs.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import signal
import stat
import sys
from typing import Any, Iterable, Iterator, TextIO

import click

from descgen.core.workers import PARALLEL_BYTES

from .output import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_RULE
from .workers import collect_less, parse_jobs

__all__ = ["batch"]

#: Lines per chunk: answered together (alike requests grouped: descgen.batch.run's chunk), handed
#: to a worker process (stdin with --jobs) and written at once.
CHUNK = 4096

HELP = """Answer JSON-lines requests: one JSON object per line in FILE (default: stdin), one
JSON line per request out (to stdout or -o FILE), in input order. A bad line is an answer
with "ok": false and an "error", never a stop.

\b
Requests (keys are the API's keyword arguments; their help is the API's docstrings):
  {"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, ...}
      keys of descgen.encode_idesc: kind m n atype btype dtype a_major b_major negate_a
      negate_b saturate sparse sparsity_selector max_shift scale_type a_sf_id b_sf_id k,
      and the context cta_group ws sp scale_vec a_tmem arch
  {"op": "encode", "descriptor": "smem", "start_address": 1024, "lbo": 16, "sbo": 1024,
   "swizzle": "128B"}     encode_smem: + base_offset lbo_mode arch pattern_start
  {"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B",
   "mn": 128, "k": 64, "start_address": 1024}
      the tile form (smem_for_tile; any of mn k dtype major atom_order kind selects it):
      + pattern_start atom_order kind arch; LBO, SBO and base offset are derived
  {"op": "encode", "descriptor": "zcm", "skip_span": 1, "use_span": 13}
      encode_zcm: + start_count first_span (lists of 4) nonzero_mask column_shift m n ws
  {"op": "encode", "descriptor": "taddr", "lane": 32, "column": 0}
      encode_taddr: + warp alloc_columns alloc_base ("wgmma_smem": encode_wgmma_smem)
  {"op": "decode", "word": "0x08400010", "kind": "f16"}
      "descriptor" idesc|smem|zcm|taddr|wgmma_smem and "kind" as descgen decode --as/--kind:
      a kind means idesc; an idesc without a kind, or a word below 2**32 without a
      descriptor, is decoded under every kind (and as a tensor memory address where it is
      a valid one; with warp, alloc_columns or alloc_base as one only); a wider word without
      one as smem, wgmma_smem and zcm; + context
      (idesc: cta_group ws sp scale_vec a_tmem arch; smem: arch pattern_start; zcm: m n ws;
      taddr: warp alloc_columns alloc_base)
  {"op": "validate", "word": ..., "kind": "f16", "cta_group": 1, ...}
      as descgen validate: an idesc needs "kind", any other word "descriptor"
  {"op": "check", "idesc": ..., "kind": ..., "a_desc": ..., "b_desc": ..., "zcm": ...}
      keys of descgen.check_mma: + a_tmem cta_group ws sp scale_vec arch
      a_pattern_start b_pattern_start
Any request about one word or instruction (encode; decode with a descriptor or kind;
validate; check) may add "format": "c"|"cpp"|"ptx"|"python"|"hex"|"json" and "name": the
answer then carries "code", the word(s) as that source code with the decoded fields as a
comment (descgen.emit; --format of the encoders); with "functions": true (c, cpp, ptx,
python) the word's fixed part and run-time functions instead (descgen.emit_functions;
smem without --addr, idesc/zcm --functions), a tile's stage step "stage_bytes".
Words (word, idesc, a_desc, b_desc, zcm): a JSON integer or a string in decimal, 0x hex or
0b binary ('_' allowed). Other values are JSON values of the API's types (integers, strings,
true/false, null = not given). "id" (any JSON value) is echoed back. Blank lines and lines
starting with # are skipped (no answer; "line" still counts them).

\b
Responses (brief, the default: what a generator or a script needs):
  encode    {"line": N, "id": ..., "ok": true, "word": "0x08400010", "findings": [...]}
            (zcm with m and n: + "mask": "0x..."); findings are warnings, if any
  decode    {"line": N, "ok": ..., "descriptor", "kind", "word", "fields": {name: value},
             "derived": {name: value}, "findings": [...]}; several layouts tried:
             {"consistent": [...], "results": {kind or descriptor: {...}}}
  validate, check   {"line": N, "ok": ..., "findings": [...], "not_checked": [codes]}
  --full: instead, result (and defaults, tile, mask, consistent/results) exactly as the
      --json envelope of descgen idesc|smem|zcm|decode|validate|check (every field's bits,
      raw value, unit, description and source)
  a finding: {"code", "severity", "field", "value", "allowed", "rule", "source"}; words
  are hex strings
  {"line": N, "ok": false, "error": {"type", "message", "findings"}}
      a refused request: type UsageError (a bad request: BATCH-JSON, BATCH-OP,
      BATCH-DESCRIPTOR, BATCH-KEY (an unknown key, naming the allowed keys),
      BATCH-KEY-MISSING, BATCH-WORD, CONTEXT-*, ...), WordError, EncodeError (a value
      breaks a PTX rule), or InternalError (a bug in descgen)
"ok" is what the single command's exit status would say: false for a refused request and
for a decoded, validated or checked word with an error finding (its result is included).

\b
Exit status: 0 when every line was answered (errors are data); 1 with --fail-on-error when
some answer has "ok": false; 2 for usage errors (a missing FILE); 3 if an answer is an
InternalError.

\b
  descgen batch requests.jsonl > answers.jsonl
  echo '{"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256}' | descgen batch
"""


def _lines(stream: Iterable[str]) -> Iterator[str]:
    first = True
    for line in stream:
        if first:
            first = False
            line = line.removeprefix("\ufeff")
        yield line


@click.command(help=HELP, short_help="Answer JSON-lines requests (encode, decode, validate, check), errors as data.")
@click.argument("file", default="-", type=click.Path(exists=True, dir_okay=False, allow_dash=True), metavar="[FILE|-]")
@click.option("-o", "--output", default="-", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              help="Write the answers here. Default: stdout.")
@click.option("--fail-on-error", is_flag=True, help='Exit 1 when some answer has "ok": false.')
@click.option("-v", "--verbose", is_flag=True,
              help="Print a summary on stderr (requests, ok, not ok, refused). Default: only when stderr is a "
                   "terminal.")
@click.option("-j", "--jobs", default="auto", metavar="N|auto", show_default=True,
              help="Worker processes answering parts of a file (answers still in input order; each worker has its own "
                   "answer cache). 1: in-process, answers streamed line by line. auto: every core for a regular input "
                   "file of 1 MiB or more. A worker reads its part of a file itself (stdin is read and handed out in "
                   "chunks of lines).")
@click.option("--no-cache", is_flag=True, help="Do not reuse answers to repeated requests (for benchmarking).")
@click.option("--full", is_flag=True, help="Answer with the --json envelope's parts (every field's bits, unit, "
                                           "description, source) instead of the brief form.")
def batch(file: str, output: str, fail_on_error: bool, verbose: bool, jobs: str, no_cache: bool, full: bool) -> None:
    from descgen.batch import BatchStats

    n_jobs = _jobs(jobs, file)
    collect_less("descgen.batch")  # about 7% less time per request (bench/bench_batch.py)
    stats = BatchStats()
    source = _open_input(file)
    out = _open_output(output)
    interactive = _isatty(source) or _isatty(out)
    try:
        if n_jobs > 1:
            _parallel(source, out, n_jobs, not no_cache, stats, full, file)
        else:
            _serial(source, out, not no_cache, stats, interactive, full)
        out.flush()
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        _quiet_stdout()
        sys.exit(EXIT_RULE)
    except KeyboardInterrupt:  # Ctrl-C: what was answered so far is written (in input order), exit 130
        try:
            out.flush()
            if output != "-":
                out.close()
        except (OSError, ValueError):  # pragma: no cover - the output is gone too
            pass
        click.echo(f"descgen batch: interrupted after {stats.requests} answers", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        if source is not sys.stdin:
            source.close()
    if output != "-":
        out.close()
    if verbose or _isatty(sys.stderr):
        click.echo(f"descgen batch: {stats.requests} requests, {stats.ok} ok, {stats.failed} not ok "
                   f"({stats.errors} refused{f', {stats.internal} internal errors' if stats.internal else ''})",
                   err=True)
    if stats.internal:
        sys.exit(EXIT_INTERNAL)
    if fail_on_error and stats.failed:
        sys.exit(EXIT_RULE)


def _jobs(jobs: str, file: str) -> int:
    n = parse_jobs(jobs)
    if n is not None:
        return n
    if file == "-":
        return 1
    try:
        big = os.stat(file).st_size >= PARALLEL_BYTES
    except OSError:
        return 1
    from descgen.core.workers import MAX_AUTO_JOBS, cores

    return min(cores(), MAX_AUTO_JOBS) if big else 1


def _open_input(file: str) -> TextIO:
    if file == "-":
        return (io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace") if hasattr(sys.stdin, "buffer")
                else sys.stdin)
    try:
        return open(file, encoding="utf-8", errors="replace")
    except OSError as e:
        raise click.FileError(file, e.strerror) from None


def _open_output(output: str) -> TextIO:
    if output == "-":
        return sys.stdout
    try:
        return open(output, "w", encoding="utf-8", newline="\n")
    except OSError as e:
        raise click.FileError(output, e.strerror) from None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover
        pass


def _serial(source: TextIO, out: TextIO, cache: bool, stats: Any, interactive: bool, full: bool) -> None:
    from descgen.batch import run

    answers = run(_lines(source), cache=cache, stats=stats, full=full, chunk=1 if interactive else CHUNK)
    if interactive:
        for line in answers:
            with _whole():
                out.write(line + "\n")
                out.flush()
        return
    buf: list[str] = []
    try:
        for line in answers:
            buf.append(line)
            if len(buf) >= CHUNK:
                buf.append("")
                with _whole():
                    out.write("\n".join(buf))
                    buf.clear()
    finally:  # (also on Ctrl-C: the answers made so far)
        if buf:
            buf.append("")
            with _whole():
                out.write("\n".join(buf))


@contextlib.contextmanager
def _whole() -> Iterator[None]:
    """Ctrl-C waits until the block is done (SIGINT blocked for it): what the block writes is
    written whole, so the output ends at a line's end, and its bookkeeping is never half done."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _chunks(source: Iterable[str]) -> Iterator[tuple[int, list[str]]]:
    chunk: list[str] = []
    start = 1
    for n, line in enumerate(_lines(source), 1):
        if not chunk:
            start = n
        chunk.append(line)
        if len(chunk) >= CHUNK:
            yield start, chunk
            chunk = []
    if chunk:
        yield start, chunk


# --------------------------------------------------------------------------------------------
# Worker processes (forked: they inherit what the parent set below and the loaded library).

#: A regular input file is answered in byte ranges that end at a line's end: each about the rest
#: of the file / (SPLIT * jobs), at least SEGMENT_MIN and (unless one line is longer) at most
#: SEGMENT_MAX bytes. The ranges shrink towards the end of the file, so the workers finish together.
SPLIT = 4
SEGMENT_MIN = 64 << 10
SEGMENT_MAX = 2 << 20
#: Ranges (or chunks of lines) handed out and not yet written, per worker.
AHEAD = 3

_CACHE: Any = True  # in a worker: its response cache (one per process), or False
_FULL = False  # in a worker: answer with --full
_FD = -1  # the input file (_parallel_file; read with os.pread: the workers share no file position)
_TMP = ""  # the directory of the answer files (_parallel_file)


def _worker_cache() -> Any:
    """The worker's response cache, made at its first use, or False."""
    from descgen.batch import ResponseCache

    global _CACHE
    if _CACHE is True:
        _CACHE = ResponseCache()
    return _CACHE


def _parallel(source: TextIO, out: TextIO, jobs: int, cache: bool, stats: Any, full: bool, file: str) -> None:
    """Answers by ``jobs`` forked workers, written in input order. A named regular file is cut
    into byte ranges the workers read themselves (:func:`_parallel_file`); other input (stdin, a
    pipe) is read here and sent to them in chunks of lines (:func:`_parallel_lines`)."""
    global _CACHE, _FULL
    _CACHE, _FULL = cache, full
    try:
        regular = file != "-" and stat.S_ISREG(os.fstat(source.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        regular = False
    if regular:
        _parallel_file(source.fileno(), out, jobs, stats)
    else:
        _parallel_lines(source, out, jobs, stats)


def _work(task: tuple[int, list[str]]) -> tuple[str, Any]:
    """In a worker: answer one chunk; (the answers, one per line ending in a newline, its BatchStats)."""
    from descgen.batch import BatchStats, run

    start, lines = task
    stats = BatchStats()
    text = "".join(line + "\n" for line in run(lines, cache=_worker_cache(), stats=stats, start=start, full=_FULL,
                                                chunk=CHUNK))
    return text, stats


def _parallel_lines(source: TextIO, out: TextIO, jobs: int, stats: Any) -> None:
    """Chunks of lines read here (pickled to the workers, their answers pickled back)."""
    import multiprocessing

    from descgen.core.workers import ignore_interrupt

    def write(answer: tuple[str, Any]) -> None:
        with _whole():
            out.write(answer[0])
            stats.add(answer[1])

    # At most a few chunks per worker in flight (Pool.imap would read the whole input ahead:
    # a million lines held in memory), answers written in input order.
    pending: collections.deque[Any] = collections.deque()
    with multiprocessing.get_context("fork").Pool(jobs, ignore_interrupt) as pool:
        for task in _chunks(source):
            pending.append(pool.apply_async(_work, (task,)))
            while pending and (len(pending) >= AHEAD * jobs or pending[0].ready()):  # stream: in order, when ready
                write(pending.popleft().get())
                out.flush()
        while pending:
            write(pending.popleft().get())


def _line_ends(data: bytes, end: int) -> int:
    """How many lines text-mode reading ends in ``data[:end]``: ``\n``, ``\r\n`` and a lone ``\r``."""
    n = data.count(b"\n", 0, end)
    if data.find(b"\r", 0, end) >= 0:
        n += data.count(b"\r", 0, end) - data.count(b"\r\n", 0, end)
    return n


def _segments(fd: int, jobs: int) -> Iterator[tuple[int, int, int, int]]:
    """The byte ranges of the file ``fd`` for ``jobs`` workers: (index, first byte, end, number of
    its first line). Each ends after a newline byte (or at the end of the file), so none splits a
    line, a ``\r\n`` or a UTF-8 character. Lines are counted as text-mode reading ends them
    (:func:`_line_ends`). Reads the file once, a range at a time, as the ranges are handed out."""
    size = os.fstat(fd).st_size
    pos, line, index = 0, 1, 0
    while True:
        want = min(max((size - pos) // (SPLIT * jobs), SEGMENT_MIN), SEGMENT_MAX)
        block = os.pread(fd, want, pos)
        if not block:
            return
        end = block.rfind(b"\n") + 1
        if end:
            ends = _line_ends(block, end)
        else:  # no newline in the block (a long line): the range runs on to the next one
            end, ends, last = len(block), _line_ends(block, len(block)), block[-1:]
            while last != b"\n":
                block = os.pread(fd, max(SEGMENT_MAX, 1), pos + end)
                if not block:
                    break
                n = block.find(b"\n") + 1 or len(block)
                ends += _line_ends(block, n) - (last == b"\r" and block[:1] == b"\n")  # a \r\n cut by the reads
                end, last = end + n, block[n - 1:n]
        yield index, pos, pos + end, line
        line += ends
        pos += end
        index += 1


def _answer_segment(task: tuple[int, int, int, int]) -> tuple[int, Any]:
    """In a worker: answer one byte range of the input (:func:`_segments`) into the answer file
    ``_TMP/index``; (its size in bytes, its BatchStats). The range is read as text-mode reading of the
    file reads it: UTF-8 with errors replaced, universal newlines, a BOM at the file's start dropped."""
    from descgen.batch import BatchStats, run

    index, first, end, start = task
    parts = []
    at = first
    while at < end:
        part = os.pread(_FD, end - at, at)
        if not part:
            break
        parts.append(part)
        at += len(part)
    text = b"".join(parts).decode("utf-8", "replace")
    del parts
    if first == 0:
        text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    del text
    if not lines[-1]:  # the range ends with a newline (or is empty)
        lines.pop()
    stats = BatchStats()
    size = 0
    buf: list[str] = []
    with open(os.path.join(_TMP, str(index)), "wb") as f:
        for answer in run(lines, cache=_worker_cache(), stats=stats, start=start, full=_FULL, chunk=CHUNK):
            buf.append(answer)
            if len(buf) >= CHUNK:
                buf.append("")
                size += f.write("\n".join(buf).encode("utf-8"))
                buf.clear()
        if buf:
            buf.append("")
            size += f.write("\n".join(buf).encode("utf-8"))
    return size, stats


def _parallel_file(fd: int, out: TextIO, jobs: int, stats: Any) -> None:
    """The regular file ``fd`` answered by ``jobs`` forked workers, a byte range at a time
    (:func:`_segments`): a worker reads its range itself and writes its answers to a file of its
    own, which is copied to ``out`` in input order and deleted. Nothing is pickled but a range's
    numbers and counts, and memory stays bounded however large the input or its answers."""
    import multiprocessing
    import shutil
    import tempfile

    from descgen.core.workers import ignore_interrupt

    global _FD, _TMP
    _FD, _TMP = fd, tempfile.mkdtemp(prefix="descgen-batch-")
    out.flush()
    target = getattr(out, "buffer", None)  # answers are ASCII (JSON, non-ASCII escaped): bytes as written
    try:
        target_fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        target_fd = -1
    sendfile = target_fd >= 0 and hasattr(os, "sendfile")

    def write(task: tuple[int, Any]) -> None:
        index, result = task
        size, counts = result.get()
        with _whole():
            copy(index, size)
            stats.add(counts)

    def copy(index: int, size: int) -> None:
        nonlocal sendfile
        path = os.path.join(_TMP, str(index))
        with open(path, "rb") as f:
            sent = 0
            try:
                while sendfile and sent < size:
                    sent += os.sendfile(target_fd, f.fileno(), sent, size - sent)
            except BrokenPipeError:
                raise
            except OSError:  # not to this output (opened with O_APPEND...): copy
                sendfile = False
            if sent < size:
                f.seek(sent)
                if target is not None:
                    shutil.copyfileobj(f, target)
                else:
                    shutil.copyfileobj(io.TextIOWrapper(f, encoding="utf-8"), out)
            if target is not None:
                target.flush()
        os.unlink(path)

    pending: collections.deque[Any] = collections.deque()
    try:
        with multiprocessing.get_context("fork").Pool(jobs, ignore_interrupt) as pool:
            for index, *task in _segments(fd, jobs):
                pending.append((index, pool.apply_async(_answer_segment, ((index, *task),))))
                while pending and (len(pending) >= AHEAD * jobs or pending[0][1].ready()):  # stream, in order
                    write(pending.popleft())
            while pending:
                write(pending.popleft())
        if target is not None:
            target.flush()
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)

