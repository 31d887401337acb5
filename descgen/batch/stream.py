"""JSON-lines requests answered in order (:mod:`descgen.batch`): each line as it comes, or in
chunks of alike requests; the answer cache consulted; the answers counted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from .cache import ResponseCache, request_key
from .codec import NotJSON, dumps, dumps_plain, parse
from .handlers import process
from .schema import error_answer, usage

__all__ = ["BatchStats", "response_line", "run"]


@dataclass
class BatchStats:
    """Counts over a run: requests, ok, not ok (of which refused with an ``error``, and internal errors)."""

    requests: int = 0
    ok: int = 0
    failed: int = 0
    errors: int = 0
    internal: int = 0

    def add(self, other: "BatchStats") -> None:
        """Add another run's counts (a worker's) to these."""
        self.requests += other.requests
        self.ok += other.ok
        self.failed += other.failed
        self.errors += other.errors
        self.internal += other.internal

    def count(self, ok: bool, error: bool, internal: bool) -> None:
        """Count one answer: ok, or not ok (refused with an ``error``; an internal error)."""
        self.requests += 1
        if ok:
            self.ok += 1
        else:
            self.failed += 1
            self.errors += error
            self.internal += internal


def response_line(n: int, text: str, cache: ResponseCache | None = None,
                  stats: BatchStats | None = None, full: bool = False) -> str:
    """The response line (no newline) to request line number ``n`` (its text, stripped): the
    brief answer, or with ``full`` the ``--json`` envelope's parts."""
    return _answer(n, text, parse(text), cache, stats, full)


def _answer(n: int, text: str, req: Any, cache: ResponseCache | None, stats: BatchStats | None, full: bool) -> str:
    """:func:`response_line` for a line already parsed (``req``: :func:`parse`'s result)."""
    internal = False
    if req.__class__ is NotJSON:
        error = usage("BATCH-JSON", "line", text if len(text) <= 80 else text[:77] + "...",
                      "one JSON object (RFC 8259; no NaN/Infinity, no duplicate keys)",
                      f"not a JSON object: {req.error}")
        ok, body = False, '"ok":false,"error":' + dumps(error_answer(error)[0])
        is_error = True
    else:
        key = (full, request_key(req)) if cache is not None and req.__class__ is dict and cache.active() else None
        hit = None
        if key is not None:
            assert cache is not None
            hit = cache.get(key)
            if hit is not None:
                cache.move_to_end(key)
            cache.counted(hit is not None)
        if hit is not None:
            ok, is_error, body = hit
        else:
            ok, parts, internal = process(req, full)
            is_error = "error" in parts
            try:
                if full:
                    body = f'"ok":{"true" if ok else "false"}' + "".join(f',"{k}":{dumps_plain(v)}'
                                                                         for k, v in parts.items())
                else:
                    body = dumps_plain({"ok": ok, **parts})[1:-1]
            except Exception as e:  # a result that is not JSON (a bug): still one valid line
                answer, internal = error_answer(e)
                ok, is_error, body = False, True, '"ok":false,"error":' + dumps(answer)
            if key is not None and not internal:
                cache.put(key, (ok, is_error, body))  # type: ignore[union-attr]
        if req.__class__ is dict and "id" in req:
            rid = req["id"]
            # (int.__repr__: what json writes for an int)
            body = f'"id":{int.__repr__(rid) if rid.__class__ is int else dumps(rid)},{body}'
    if stats is not None:
        stats.count(ok, is_error, internal)
    return f'{{"line":{n},{body}}}'


def _group(req: Any) -> tuple[Any, ...]:
    """What :func:`_answer_chunk` groups requests by: the op, descriptor and kind (as given when
    they are names or absent; any other value stands for itself by its class's name)."""
    if req.__class__ is not dict:
        return ("",)
    key = (req.get("op"), req.get("descriptor"), req.get("kind"))
    if key[0].__class__ is str and key[1].__class__ in _NAMES and key[2].__class__ in _NAMES:
        return key
    return tuple(v if v.__class__ is str else v.__class__.__name__ for v in key)


_NAMES = (str, type(None))


def _answer_chunk(chunk: list[tuple[int, str]], cache: ResponseCache | None, stats: BatchStats | None,
                  full: bool) -> list[str]:
    """The response lines to a chunk of (line number, stripped text), in its order. The lines are
    parsed first, then answered a group of alike requests (op, descriptor, kind) at a time: the
    same code and tables run back to back, which is about a fifth faster than a mixed stream
    (bench/bench_batch.py). Answers are pure functions of the request, so the order they are
    computed in changes nothing but speed."""
    parsed = [parse(text) for _, text in chunk]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, req in enumerate(parsed):
        key = _group(req)
        members = groups.get(key)
        if members is None:
            groups[key] = [i]
        else:
            members.append(i)
    out = [""] * len(chunk)
    for members in groups.values():
        for i in members:
            n, text = chunk[i]
            out[i] = _answer(n, text, parsed[i], cache, stats, full)
            # (freed as answered: memory the memos take meanwhile is not held apart; peak RSS stays flat)
            parsed[i] = None
    return out


def run(lines: Iterable[str], *, cache: "bool | int | ResponseCache" = True, stats: BatchStats | None = None,
        start: int = 1, full: bool = False, chunk: int = 1) -> Iterator[str]:
    """Answer JSON-lines requests: one response line (without newline) per request, in order.

    Args:
        lines: the input lines (a file, ``sys.stdin``, a list of strings).
        full: answer with the ``--json`` envelope's parts (every field's bits, unit, description
            and source) instead of the brief form (values and findings).
        cache: keep an LRU cache of answers up to this many characters (True: 16 Mi, and at most 64 Ki
            answers) keyed on the request without ``id``, or use the given :class:`ResponseCache`
            (shared between calls);
            False disables it. Results are pure functions of the request.
        stats: if given, counts are added to it.
        start: the number of the first line.
        chunk: answer this many requests at a time, alike requests together (faster; the
            answers still come in input order, a chunk's once it is read whole). 1: each answer
            as soon as its line is read (interactive use).

    Blank lines and ``#`` comment lines produce no response; ``line`` counts them.
    """
    lru: Any = (cache if isinstance(cache, ResponseCache) else ResponseCache() if cache is True
                else ResponseCache(int(cache)) if cache else None)
    if chunk <= 1:
        for n, raw in enumerate(lines, start):
            text = raw.strip()
            if text and text[0] != "#":
                yield response_line(n, text, lru, stats, full)
        return
    pending: list[tuple[int, str]] = []
    for n, raw in enumerate(lines, start):
        text = raw.strip()
        if text and text[0] != "#":
            pending.append((n, text))
            if len(pending) >= chunk:
                yield from _answer_chunk(pending, lru, stats, full)
                pending = []
    if pending:
        yield from _answer_chunk(pending, lru, stats, full)
