"""The instruction's context as command-line options: ``--cta-group``, ``--ws/--no-ws``,
``--sp/--no-sp``, ``--scale-vec``, ``--a-tmem/--no-a-tmem``, ``--arch``, ``--pattern-start``,
``--m``/``--n``.

Every option defaults to None, "not given": a rule that needs context that was not given is
reported as not checked, never guessed. The spellings are the ones
:meth:`descgen.examples.Example.command` prints (``--ws``/``--no-ws``, ``--cta-group 2``,
``--scale-vec 4X``, ``--arch sm_103a``, ``--pattern-start 0x580``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from descgen.model.catalog import constraints, contexts
from descgen.model.context import words_context

from .output import usage_error

__all__ = ["APPLIES", "CONTEXT_ORDER", "context_options", "option_name", "given", "check_applies"]

#: Every context name, in the order the options are listed (``[[context]]`` of tables/contexts.toml).
CONTEXT_ORDER = tuple(contexts())

#: The context each kind of word is validated with (the keyword arguments of validate_idesc,
#: validate_smem, validate_zcm, validate_taddr and check_mma), from each entry's ``words``.
APPLIES: dict[str, tuple[str, ...]] = {word: words_context(word) for word in ("idesc", "smem", "zcm", "mma", "taddr",
                                                                              "wgmma_smem")}

_WHAT = {"idesc": "an instruction descriptor", "smem": "a shared memory descriptor",
         "wgmma_smem": "a wgmma (sm_90a) shared memory descriptor",
         "zcm": "a zero-column mask descriptor", "mma": "an instruction", "taddr": "a tensor memory address"}


def option_name(name: str) -> str:
    """``cta_group`` -> ``--cta-group``."""
    return "--" + name.replace("_", "-")


def _option(name: str, wgmma: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The option of context name ``name``: its spelling, type and help from its ``[[context]]``
    entry (``wgmma``: ``--arch`` also takes sm_90a, for a command that reads Hopper's word)."""
    import click

    from .params import UINT, ArchType, LazyChoice, ScaleVecType

    entry = contexts()[name]
    dest, flag = f"ctx_{name}", option_name(name)
    text = entry.help
    if entry.value == "arch":
        text = (f"{text[:-1]}: {', '.join(constraints().targets)} (sm_101a/f = sm_110a/f)"
                + ("; sm_90a reads a shared memory descriptor as Hopper's wgmma one." if wgmma else "."))
    text += " Default: not given."
    if entry.value == "flag":
        return click.option(f"{flag}/--no-{flag[2:]}", dest, default=None, help=text)
    types: dict[str, Any] = {
        "cta_group": LazyChoice(("1", "2"), cast=int),
        "warp": LazyChoice("warps", cast=int),
        "scale_vec": ScaleVecType(),
        "arch": ArchType(wgmma=wgmma),
    }
    if entry.value in types:
        return click.option(flag, dest, type=types[entry.value], help=text)
    return click.option(flag, dest, type=UINT, metavar=entry.metavar or "INT", help=text)


def context_options(*names: str, wgmma: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the context options ``names`` (default: all of :data:`CONTEXT_ORDER`) to a command;
    ``wgmma``: its ``--arch`` also takes sm_90a (a command that reads Hopper's shared memory
    descriptor: smem, decode, validate), else only the tcgen05 targets.

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
            return f(*args, context={name: kwargs.pop(f"ctx_{name}") for name in names}, **kwargs)
        decorated: Callable[..., Any] = wrapper
        for name in reversed(names):
            decorated = _option(name, wgmma)(decorated)
        return decorated

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
    raise usage_error(f"{', '.join(option_name(n) for n in extra)} {verb} not apply to {what} "
                           f"({whose} rules take {takes}){hint}")
