"""The instruction's context as command-line options: ``--cta-group``, ``--ws/--no-ws``,
``--sp/--no-sp``, ``--scale-vec``, ``--a-tmem/--no-a-tmem``, ``--arch``, ``--pattern-start``,
``--m``/``--n``.

Every option defaults to None, "not given": a rule that needs context that was not given is
reported as not checked, never guessed. The spellings are the ones
:meth:`descgen.rules.Example.command` prints (``--ws``/``--no-ws``, ``--cta-group 2``,
``--scale-vec 4X``, ``--arch sm_103a``, ``--pattern-start 0x580``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

import click

from descgen.rules import CONTEXT_NAMES

from .params import UINT, ArchType, LazyChoice, ScaleVecType

__all__ = ["APPLIES", "CONTEXT_ORDER", "context_options", "option_name", "given", "check_applies"]

#: Every context name, in the order the options are listed.
CONTEXT_ORDER = ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch", "pattern_start", "m", "n", "warp", "alloc_columns",
                 "alloc_base")

#: The context each kind of word is validated with (the keyword arguments of validate_idesc,
#: validate_smem, validate_zcm and check_mma).
APPLIES: dict[str, tuple[str, ...]] = {
    "idesc": ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch"),
    "smem": ("arch", "pattern_start"),
    "zcm": ("m", "n", "ws"),
    "mma": ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch"),
    "taddr": ("warp", "alloc_columns", "alloc_base"),
}

_WHAT = {"idesc": "an instruction descriptor", "smem": "a shared memory descriptor",
         "zcm": "a zero-column mask descriptor", "mma": "an instruction", "taddr": "a tensor memory address"}


def option_name(name: str) -> str:
    """``cta_group`` -> ``--cta-group``."""
    return "--" + name.replace("_", "-")


def _help(name: str, text: str) -> str:
    return f"{text} Default: not given."


def _option(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    dest = f"ctx_{name}"
    if name == "cta_group":
        return click.option("--cta-group", dest, type=LazyChoice(("1", "2"), cast=int),
                            help=_help(name, "The instruction's .cta_group::1 or ::2 (Table 39 rows, Table 50)."))
    if name in ("ws", "sp", "a_tmem"):
        flag = option_name(name)
        text = {"ws": "The instruction is (not) tcgen05.mma.ws.", "sp": "The instruction is (not) tcgen05.mma.sp.",
                "a_tmem": "A is (not) read from tensor memory ([a-tmem]) rather than a shared memory descriptor."}[name]
        return click.option(f"{flag}/--no-{flag[2:]}", dest, default=None, help=_help(name, text))
    if name == "scale_vec":
        return click.option("--scale-vec", dest, type=ScaleVecType(),
                            help=_help(name, "The scale vector size, .scale_vec::1X/2X/4X or .block16/.block32 (block-scaled kinds)."))
    if name == "arch":
        targets = CONTEXT_NAMES["arch"].split("(", 1)[-1].rstrip(")")
        return click.option("--arch", dest, type=ArchType(),
                            help=_help(name, f"The .target: {targets} (sm_101a/f = sm_110a/f)."))
    if name == "pattern_start":
        return click.option("--pattern-start", dest, type=UINT, metavar="BYTES",
                            help=_help(name, "Byte address where the operand's swizzle pattern starts; the base offset "
                                             "is then checked exactly against Table 41."))
    if name == "m":
        return click.option("--m", dest, type=UINT, metavar="M",
                            help=_help(name, "The MMA's M (32, 64, 128): the zero-column mask's sub-masks and column shift limit."))
    if name == "n":
        return click.option("--n", dest, type=UINT, metavar="N", help=_help(name, "The MMA's N (the zero-column mask's width)."))
    if name == "warp":
        return click.option("--warp", dest, type=LazyChoice(("0", "1", "2", "3"), cast=int),
                            help=_help(name, "The warp's ID within its warpgroup (warp ID % 4) that accesses the address "
                                             "with tcgen05.ld/st: its lanes are 32*W..32*W+31 (§9.7.16.8.1)."))
    if name == "alloc_columns":
        return click.option("--alloc-columns", dest, type=UINT, metavar="N",
                            help=_help(name, "nCols of the tcgen05.alloc the address lies in: a power of 2, 32-512."))
    if name == "alloc_base":
        return click.option("--alloc-base", dest, type=UINT, metavar="ADDR",
                            help=_help(name, "The address tcgen05.alloc wrote (lane 0, the first column allocated); "
                                             "with --alloc-columns the column must lie inside the allocation."))
    raise ValueError(f"unknown context name {name!r}")


def context_options(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the context options ``names`` (default: all of :data:`CONTEXT_ORDER`) to a command.

    The command receives them as one keyword argument, ``context``: ``{name: value}`` for every
    name, None when the option was not given. Values are normalized (``--scale-vec
    scale_vec::2X`` -> ``"2X"``, ``--arch sm_101a`` -> ``"sm_110a"``); a bad value is a usage
    error (exit 2). Place it above ``@output_options``.
    """
    names = names or CONTEXT_ORDER
    unknown = [n for n in names if n not in CONTEXT_ORDER]
    if unknown:
        raise ValueError(f"unknown context names {unknown}")

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            context = {name: kwargs.pop(f"ctx_{name}") for name in names}
            return f(*args, context=context, **kwargs)

        for name in reversed(names):
            wrapper = _option(name)(wrapper)
        return wrapper

    return decorate


def given(context: dict[str, Any]) -> dict[str, Any]:
    """The names that were given, with their values."""
    return {k: v for k, v in context.items() if v is not None}


def check_applies(context: dict[str, Any], applies: str | Iterable[str], *, hint: str = "") -> None:
    """A usage error when context was given that no rule of ``applies`` (``idesc``, ``smem``,
    ``zcm``, ``mma``, or several) uses: it would be silently ignored."""
    kinds = (applies,) if isinstance(applies, str) else tuple(applies)
    allowed = {n for k in kinds for n in APPLIES[k]}
    extra = [n for n in given(context) if n not in allowed]
    if not extra:
        return
    what = " or ".join(_WHAT[k] for k in kinds)
    takes = ", ".join(option_name(n) for n in CONTEXT_ORDER if n in allowed)
    verb = "does" if len(extra) == 1 else "do"
    whose = "its" if len(kinds) == 1 else "their"
    raise click.UsageError(f"{', '.join(option_name(n) for n in extra)} {verb} not apply to {what} "
                           f"({whose} rules take {takes}){hint}")
