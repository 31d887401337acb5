"""Batch mode's JSON lines (:mod:`descgen.batch`): a line read strictly (no NaN/Infinity, no
duplicate key) by the decoder's scanner, an answer written compactly by json's C encoder made
once."""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["dumps", "dumps_plain", "encoder", "json_default", "loads", "NotJSON", "parse"]


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {dup!r}")
    return d


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # inf (nan cannot be written as a number)
        raise ValueError(f"{text} does not fit a float")
    return value


def json_default(value: Any) -> Any:
    """What :func:`descgen.batch.handlers._plain` makes of a result object, for the JSON encoder's ``default``."""
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def encoder(default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """``json.JSONEncoder(...).encode`` for compact, strict JSON (no NaN), ASCII, with ``default``:
    the C encoder ``json.dumps`` uses, made once instead of at every call (``encode`` builds it
    anew each time, with a dict to catch circular references: answers are trees)."""
    options = json.JSONEncoder(allow_nan=False, separators=(",", ":"), default=default, check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    try:
        encode = make(None, options.default, json.encoder.encode_basestring_ascii, None, options.key_separator,
                      options.item_separator, False, False, False) if make is not None else None
    except TypeError:  # (another Python's C encoder: the plain path)
        encode = None
    if encode is None:
        return options.encode
    join = "".join
    return lambda value: join(encode(value, 0))


_decoder = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant, parse_float=_float)
loads = _decoder.decode
#: The decoder's scanner: a value from a position, and where it ends (``loads`` wraps it for
#: whitespace around the value and makes its errors).
_scan: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]  # (JSONDecoder's own)
dumps = encoder()
#: ``dumps(_plain(value))`` (:func:`descgen.batch.handlers._plain`) in one pass: the C encoder walks
#: dicts, lists and tuples itself, and results serialize through their own ``as_dict`` (the one JSON
#: form of a Decoded, a Report...).
dumps_plain = encoder(json_default)


class NotJSON:
    """A line that is not a JSON value: its parse error, in place of the request."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def parse(text: str) -> Any:
    """The request on a line (its text, stripped), or :class:`NotJSON`. A line that is one JSON
    value and nothing more is read by the scanner directly; anything else goes through
    ``loads``, whose error says what is wrong."""
    try:
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except Exception:  # (StopIteration: no value at all; a hook's ValueError; RecursionError)
        pass
    try:
        return loads(text)
    except (ValueError, RecursionError) as e:
        return NotJSON(e)
