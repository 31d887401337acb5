"""Batch mode's answer cache (:mod:`descgen.batch`): answers are pure functions of the request,
so a request seen before is answered from an LRU cache keyed on the request without ``id``."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["ResponseCache", "request_key"]

#: A JSON value's class as a one-letter code: keys hold no type object, so the garbage collector
#: can stop tracking them (a tuple of strings and numbers is untracked at its first collection).
_CODES = {int: "i", str: "s", bool: "b", float: "f", type(None): "n"}


class ResponseCache(OrderedDict):  # type: ignore[type-arg]
    """Answers to requests seen before, keyed on the request without ``id``: least recently
    used first out once the answers held exceed ``size`` characters (default 16 Mi) or there are
    more than ``entries`` of them (default 64 Ki: a working set of distinct requests that size is
    answered from the cache, and a million distinct requests stay within tens of MB).

    The cache rests while it finds nothing: when a window of ``window`` lookups (default 4 Ki)
    found fewer than 1 in 16 answers (a stream of distinct requests), it empties and is not used
    for the next 4 windows of requests, then tries again; each window in a row that finds too
    little doubles the rest (up to 64 windows), and one that finds enough ends the series (each
    lookup and store costs about as much as a tenth of an answer)."""

    def __init__(self, size: int = 16 << 20, entries: int = 1 << 16, window: int = 1 << 12) -> None:
        super().__init__()
        self.size = size
        self.entries = entries
        self.held = 0
        self.window = window
        self.looked = 0  # lookups in this window, and how many found an answer
        self.found = 0
        self.resting = 0  # requests left before the cache is used again
        self.rest = 4  # windows of the next rest

    def active(self) -> bool:
        """Whether to look the next request up (False while resting)."""
        if self.resting:
            self.resting -= 1
            return False
        return True

    def counted(self, hit: bool) -> None:
        """Count a lookup; at the end of a window, rest when it found too few."""
        self.looked += 1
        self.found += hit
        if self.looked >= self.window:
            if self.found * 16 < self.looked:
                self.clear()
                self.held = 0
                self.resting = self.rest * self.window
                self.rest = min(2 * self.rest, 64)
            else:
                self.rest = 4
            self.looked = self.found = 0

    def put(self, key: Any, value: tuple[bool, bool, str]) -> None:
        if self.resting:  # (the lookup that ended a window put it to rest)
            return
        self[key] = value
        self.held += len(value[2])
        while (self.held > self.size or len(self) > self.entries) and self:
            self.held -= len(self.popitem(last=False)[1][2])


def request_key(req: dict[str, Any]) -> Any:
    """The request without ``id`` as a hashable key, or None. Each value is keyed with its class's
    code: 1, 1.0 and true are equal in Python but not as requests. The key is a flat tuple of
    strings and numbers: the garbage collector stops tracking it (no type object, no nesting but a
    list's own flat tuple), so a cache of a million keys costs no collection time."""
    key: list[Any] = []
    codes = _CODES
    for k, v in req.items():
        if k == "id":
            continue
        code = codes.get(v.__class__)
        if code is None:
            if v.__class__ is not list:
                return None
            items: list[Any] = []
            for x in v:
                c = codes.get(x.__class__)
                if c is None or c == "n":
                    return None
                items += (c, x)
            v, code = tuple(items), "l"
        key += (k, code, v)
    return tuple(key)
