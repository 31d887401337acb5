"""``descgen batch``: JSON-lines requests in, one JSON line per request out (:mod:`descgen.batch`).

Registered on the group at the bottom of :mod:`descgen.cli.app`. Imports click only; descgen.batch
loads when the command runs.
"""

from __future__ import annotations

import collections
import io
import os
import sys
from typing import Any, Iterable, Iterator, TextIO

import click

from .output import EXIT_INTERNAL, EXIT_RULE

__all__ = ["batch"]

#: Lines per chunk handed to a worker process (and per write when working in-process).
CHUNK = 2000
#: With --jobs auto, a regular input file of at least this many bytes is split over the cores.
PARALLEL_BYTES = 1 << 20

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
  {"op": "decode", "word": "0x08400010", "kind": "f16"}
      "descriptor" idesc|smem|zcm and "kind" as descgen decode --as/--kind: a kind means
      idesc; an idesc without a kind, or a word below 2**32 without a descriptor, is
      decoded under every kind; a wider word without one as both smem and zcm; + context
      (idesc: cta_group ws sp scale_vec a_tmem arch; smem: arch pattern_start; zcm: m n ws)
  {"op": "validate", "word": ..., "kind": "f16", "cta_group": 1, ...}
      as descgen validate: an idesc needs "kind", a smem/zcm word needs "descriptor"
  {"op": "check", "idesc": ..., "kind": ..., "a_desc": ..., "b_desc": ..., "zcm": ...}
      keys of descgen.check_mma: + a_tmem cta_group ws sp scale_vec arch
      a_pattern_start b_pattern_start
Any request about one word or instruction (encode; decode with a descriptor or kind;
validate; check) may add "format": "c"|"cpp"|"ptx"|"python"|"hex"|"json" and "name": the
answer then carries "code", the word(s) as that source code with the decoded fields as a
comment (descgen.emit; --format of the encoders).
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


def _lines(stream: TextIO) -> Iterator[str]:
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
              help="Print a summary on stderr (requests, ok, not ok, refused). Default: only when stderr is a terminal.")
@click.option("-j", "--jobs", default="auto", metavar="N|auto", show_default=True,
              help="Worker processes answering chunks of a file (answers still in input order). 1: in-process, answers "
                   "streamed line by line. auto: every core for a regular input file of 1 MiB or more. On 2 cores the "
                   "parent's reading and writing competes with the workers; measure (bench/bench_batch.py).")
@click.option("--no-cache", is_flag=True, help="Do not reuse answers to repeated requests (for benchmarking).")
@click.option("--full", is_flag=True, help="Answer with the --json envelope's parts (every field's bits, unit, "
                                           "description, source) instead of the brief form.")
def batch(file: str, output: str, fail_on_error: bool, verbose: bool, jobs: str, no_cache: bool, full: bool) -> None:
    from descgen.batch import BatchStats

    n_jobs = _jobs(jobs, file)
    stats = BatchStats()
    source = _open_input(file)
    out = _open_output(output)
    interactive = _isatty(source) or _isatty(out)
    try:
        if n_jobs > 1:
            _parallel(source, out, n_jobs, not no_cache, stats, full)
        else:
            _serial(source, out, not no_cache, stats, interactive, full)
        out.flush()
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        _quiet_stdout()
        sys.exit(EXIT_RULE)
    finally:
        if source is not sys.stdin:
            source.close()
    if output != "-":
        out.close()
    if verbose or _isatty(sys.stderr):
        click.echo(f"descgen batch: {stats.requests} requests, {stats.ok} ok, {stats.failed} not ok "
                   f"({stats.errors} refused{f', {stats.internal} internal errors' if stats.internal else ''})", err=True)
    if stats.internal:
        sys.exit(EXIT_INTERNAL)
    if fail_on_error and stats.failed:
        sys.exit(EXIT_RULE)


def _jobs(jobs: str, file: str) -> int:
    if jobs == "auto":
        if file == "-" or not hasattr(os, "fork"):
            return 1
        try:
            big = os.stat(file).st_size >= PARALLEL_BYTES
        except OSError:
            return 1
        return min(os.cpu_count() or 1, 8) if big else 1
    try:
        n = int(jobs)
    except ValueError:
        n = 0
    if n < 1:
        raise click.BadParameter(f"{jobs!r} is not a positive integer or 'auto'", param_hint="'-j' / '--jobs'")
    return n if hasattr(os, "fork") else 1


def _open_input(file: str) -> TextIO:
    if file == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace") if hasattr(sys.stdin, "buffer") else sys.stdin
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
            out.write(line + "\n")
            out.flush()
        return
    buf: list[str] = []
    for line in answers:
        buf.append(line)
        if len(buf) >= CHUNK:
            buf.append("")
            out.write("\n".join(buf))
            buf.clear()
    if buf:
        buf.append("")
        out.write("\n".join(buf))


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


_CACHE: Any = True  # in a worker: its response cache (one per process), or False
_FULL = False  # in a worker: answer with --full


def _work(task: tuple[int, list[str]]) -> tuple[str, tuple[int, ...]]:
    """In a worker: answer one chunk; (the answers, one per line ending in a newline, the counts)."""
    from descgen.batch import BatchStats, ResponseCache, run

    global _CACHE
    if _CACHE is True:
        _CACHE = ResponseCache()
    start, lines = task
    stats = BatchStats()
    text = "".join(line + "\n" for line in run(lines, cache=_CACHE, stats=stats, start=start, full=_FULL))
    return text, (stats.requests, stats.ok, stats.failed, stats.errors, stats.internal)


def _parallel(source: TextIO, out: TextIO, jobs: int, cache: bool, stats: Any, full: bool) -> None:
    """Chunks of lines answered by ``jobs`` forked workers; answers written in input order."""
    import multiprocessing

    global _CACHE, _FULL
    _CACHE, _FULL = cache, full
    import descgen.batch

    descgen.batch._shapes()  # warm what every worker needs before forking
    ctx = multiprocessing.get_context("fork")

    def write(answer: tuple[str, tuple[int, ...]]) -> None:
        text, counts = answer
        out.write(text)
        stats.requests += counts[0]
        stats.ok += counts[1]
        stats.failed += counts[2]
        stats.errors += counts[3]
        stats.internal += counts[4]

    # At most a few chunks per worker in flight (Pool.imap would read the whole input ahead:
    # a million lines held in memory), answers written in input order.
    pending: collections.deque[Any] = collections.deque()
    with ctx.Pool(jobs) as pool:
        for task in _chunks(source):
            pending.append(pool.apply_async(_work, (task,)))
            if len(pending) >= 3 * jobs:
                write(pending.popleft().get())
        while pending:
            write(pending.popleft().get())
