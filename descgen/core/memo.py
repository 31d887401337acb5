"""Bounded memos: the one way descgen remembers answers between calls.

What a call works out from its arguments (a context normalized, a rule group's findings for the
facts it read, an operand's instruction findings) is remembered in a :class:`Memo`: a dict that
empties itself when it reaches its limit, so that no input, however long the run, grows memory
without bound, while a hit stays one dict lookup (``memo.get(key)``). Facts computed from the
tables alone, over their finite key spaces (a kind's plan, Table 39's rows), are remembered with
``functools.cache``: their keys are bounded by the tables.

Every memo is listed in :data:`MEMOS` (its name and limit), so that a test can empty them all.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["Memo", "MEMOS", "clear_all"]

V = TypeVar("V")

#: Every memo made, in creation order.
MEMOS: list["Memo[Any]"] = []


class Memo(dict[Any, V]):
    """A dict of remembered answers that holds at most ``limit`` entries: :meth:`remember` empties it
    first when it is full (the entries found again soonest are made again soonest)."""

    __slots__ = ("name", "limit")

    def __init__(self, name: str, limit: int = 1 << 16) -> None:
        super().__init__()
        self.name = name
        self.limit = limit
        MEMOS.append(self)

    def remember(self, key: Any, value: V) -> V:
        """Store ``value`` under ``key`` (emptying the memo first when full) and return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


def clear_all() -> None:
    """Empty every memo."""
    for memo in MEMOS:
        memo.clear()
