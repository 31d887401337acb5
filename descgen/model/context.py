"""The instruction context: what descgen knows of the instruction a word is used in.

The names, what each means, where PTX defines it and which words' rules use it are the
``[[context]]`` entries of ``tables/contexts.toml`` (:func:`descgen.model.catalog.contexts`). This module
checks and normalizes given values; None always means "not given", and a rule that needs a name
that was not given is reported as not checked, never guessed.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from .catalog import SCALE_VECS, constraints, contexts, usage_error
from ..core.errors import Finding, UsageError
from .loader import layout, shapes
from ..core.memo import Memo
from ..core.types import Arch, ScaleVec

__all__ = ["bare_target", "context", "context_source", "normalize_arch", "normalize_scale_vec",
           "normalize_warp", "no_context", "words_context"]


def context_source(name: str) -> str:
    """The PTX section a context value ``name`` comes from (the source of ``CONTEXT-<NAME>``)."""
    return contexts()[name].source


@functools.cache
def words_context(word: str) -> tuple[str, ...]:
    """The context names the rules of ``word`` (``idesc``, ``smem``, ``zcm``, ``mma``, ``taddr``)
    use, in table order: the keyword arguments of its validator."""
    return tuple(c.name for c in contexts().values() if word in c.words)


def _usage(name: str, value: Any, allowed: str, rule: str) -> UsageError:
    return UsageError((Finding(f"CONTEXT-{name.upper().replace('_', '-')}", "error", name, value, allowed, rule,
                               context_source(name)),))


def _flag(name: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _usage(name, value, "true, false or None", f"{name} is {contexts()[name].meaning}")


def _uint(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _usage(name, value, "a non-negative integer or None", f"{name} is {contexts()[name].meaning}")
    return value


def _cta_group(name: str, value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not hasattr(type(value), "__index__") or value not in (1, 2)):
        raise _usage(name, value, "1, 2 or None", "the instruction's .cta_group is ::1 or ::2")
    return value


def normalize_scale_vec(value: Any) -> ScaleVec | None:
    """``"2X"``, ``"2x"``, ``"scale_vec::2X"``, ``".block16"`` -> the canonical name (None stays None).

    Raises:
        UsageError: not a scale vector size.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().removeprefix(".").removeprefix("scale_vec::")
        for name in SCALE_VECS:
            if text.lower() == name.lower():
                return name
    raise _usage("scale_vec", value, ", ".join(SCALE_VECS),
                 "the scale vector size is .scale_vec::1X/2X/4X or .block16/.block32")


def normalize_arch(value: Any) -> Arch | None:
    """``"sm_100a"`` (also ``"sm_101a"``, renamed ``sm_110a``) -> the canonical target name.

    Raises:
        UsageError: a target descgen does not know, or one without tcgen05: a bare target
            (``sm_110``: its message names ``sm_110a`` and ``sm_110f``, E49) or Hopper's ``sm_90a``.
    """
    if value is None:
        return None
    c = constraints()
    if isinstance(value, str):
        name = value.strip().lower()
        name = c.aliases.get(name, name)
        if name in c.targets:
            return name
    own = bare_target(value)
    why = (f": {str(value).strip().lower()} has no tcgen05 (ptxas refuses tcgen05 on that .target); its architecture-"
           f"specific and family targets are {' and '.join(own)} (E49)" if own else "")
    raise _usage("arch", value, ", ".join(c.targets) + " (sm_101a/f = sm_110a/f)",
                 "tcgen05 needs an arch- or family-specific Blackwell target" + why)


def bare_target(value: Any) -> tuple[str, ...]:
    """A target without its ``a``/``f`` suffix whose suffixed targets have tcgen05 (``"sm_110"`` ->
    ``("sm_110a", "sm_110f")``, ``"sm_101"`` -> the same, by the renaming): what ptxas calls a
    target and refuses every tcgen05 instruction on (E49). Empty for anything else."""
    if not isinstance(value, str):
        return ()
    name = value.strip().lower()
    if not name.startswith("sm_") or not name[3:].isdigit():
        return ()
    c = constraints()
    return tuple(t for t in (c.aliases.get(name + s, name + s) for s in "af") if t in c.targets)


def normalize_warp(value: Any) -> int | None:
    """The warp's ID within its warpgroup, 0-3 (None stays None).

    Raises:
        UsageError: not 0-3 (``CONTEXT-WARP``).
    """
    if value is None:
        return None
    warps = layout("taddr").extra["access"]["warps"]  # §9.7.16.8.1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < warps:
        raise UsageError((Finding("CONTEXT-WARP", "error", "warp", value, f"0..{warps - 1} or None",
                                  "warp is the warp's ID within its warpgroup (warp ID % 4); §9.7.16.8.1 gives each "
                                  "of the 4 warps a quarter of the lanes", context_source("warp")),))
    return value


def _alloc_base(value: Any) -> int | None:
    """The address tcgen05.alloc wrote: a tensor memory address with lane 0 (all 128 lanes of a
    column are allocated together) and a column that exists."""
    if value is None:
        return None
    columns = layout("taddr").field("column").domain(None)
    if (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32 or value >> 16
            or value not in columns):
        raise UsageError((Finding("CONTEXT-ALLOC-BASE", "error", "alloc_base", value,
                                  f"a tensor memory address with lane 0 and column {columns.describe()}",
                                  "tcgen05.alloc allocates whole columns (all 128 lanes) and writes the address of "
                                  "the first: lane 0, that column", context_source("alloc_base")),))
    return value


_NORMALIZE: dict[str, Callable[[str, Any], Any]] = {"flag": _flag, "uint": _uint, "cta_group": _cta_group,
              "scale_vec": lambda name, v: normalize_scale_vec(v), "arch": lambda name, v: normalize_arch(v),
              "warp": lambda name, v: normalize_warp(v), "alloc_base": lambda name, v: _alloc_base(v)}


def context(**given: Any) -> dict[str, Any]:
    """Check and normalize instruction context: every name of :func:`descgen.model.catalog.contexts`, None
    meaning "not given" for each (``context(cta_group=2, arch="sm_101a")`` -> ``{"cta_group": 2,
    "ws": None, ..., "arch": "sm_110a", ...}``).

    Raises:
        UsageError: a value that is not a context value (``CONTEXT-<NAME>``), or a name that is
            not a context name (``CONTEXT``).
    """
    try:  # (a value with its class: True and 1, 2 and an int subclass's 2, normalize apart)
        key: tuple[Any, ...] | None = tuple([(name, value, value.__class__) for name, value in given.items()])
        hit = _NORMALIZED.get(key)
    except TypeError:  # an unhashable value: the check below names it
        key = hit = None
    if hit is not None:
        return dict(hit)
    out = _context(given)
    if key is not None:
        _NORMALIZED.remember(key, dict(out))
    return out


#: Contexts normalized before, by the given names, values and their classes.
_NORMALIZED: Memo[dict[str, Any]] = Memo("contexts normalized", 1 << 12)


def _context(given: dict[str, Any]) -> dict[str, Any]:
    """:func:`context`'s work."""
    names = contexts()
    unknown = [n for n in given if n not in names]
    if unknown:
        raise usage_error("CONTEXT", unknown[0], given[unknown[0]], ", ".join(names), f"no context name {unknown[0]!r}")
    out = dict(no_context())  # every name None (not given), in table order
    try:
        for name, value in given.items():
            if value is not None:  # (every normalizer keeps None)
                out[name] = _NORMALIZE[names[name].value](name, value)
    except UsageError:  # report the first bad value in table order, whatever order they came in
        for name, c in names.items():
            _NORMALIZE[c.value](name, given.get(name))
        raise
    if out.get("ws") is None and out.get("cta_group") is not None and out["cta_group"] not in ws_cta_groups():
        out["ws"] = False  # implied: no tcgen05.mma.ws with this cta_group, so its rules check "not .ws"
    return out


@functools.cache
def ws_cta_groups() -> frozenset[int]:
    """The CTA groups ``tcgen05.mma.ws`` exists with: those of Table 39's ``.ws`` rows (``{1}``).
    Under another, ``ws`` not given is ``False``: the ``.ws`` rules are checked, not listed as
    needing ``--ws`` (a rule is checked or not checked, never both, and never one that cannot apply)."""
    return frozenset(r.cta_group for r in shapes().rows if r.ws)


@functools.cache
def no_context() -> Mapping[str, Any]:
    """The context with nothing given (what the decode_* functions check with)."""
    return dict.fromkeys(contexts())
