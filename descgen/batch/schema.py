"""Batch requests: the keys each op and descriptor takes (read from the API's own signatures,
``descgen batch --help``'s schema), a request's keys checked and its words read, and the
``BATCH-*`` errors (:mod:`descgen.batch`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..core.errors import DescgenError
from ..core.memo import Memo
from ..core.numbers import parse_uint
from ..model.catalog import usage_error
from ..model.engine import Word
from ..model.loader import layouts
from ..tiles.descriptor import smem_for_tile
from ..words.identify import DESCRIPTORS as IDENTIFIED
from ..words.idesc import encode_idesc, validate_idesc
from ..words.instruction import check_mma
from ..words.smem import encode_smem, validate_smem
from ..words.taddr import encode_taddr, validate_taddr
from ..words.wgmma_smem import encode_wgmma_smem, validate_wgmma_smem
from ..words.zcm import encode_zcm, validate_zcm

__all__ = ["OPS", "DESCRIPTORS", "ENCODERS", "VALIDATORS", "Shape", "shapes", "request_keys", "usage", "error_answer",
           "request_word", "request_notes", "request_args", "request_descriptor", "word_descriptor", "fitting", "named"]

#: The operations a request can ask for.
OPS = ("encode", "decode", "validate", "check")
#: The descriptor words (``descriptor`` key of encode/decode/validate): every word descgen reads
#: (:data:`descgen.words.identify.DESCRIPTORS`, ``descgen decode --as``).
DESCRIPTORS: tuple[str, ...] = IDENTIFIED

#: Per descriptor: its validator and its encoder.
VALIDATORS: dict[str, Callable[..., Any]] = {"idesc": validate_idesc, "smem": validate_smem, "zcm": validate_zcm,
                                             "taddr": validate_taddr, "wgmma_smem": validate_wgmma_smem}
ENCODERS: dict[str, Callable[..., Any]] = {"idesc": encode_idesc, "smem": encode_smem, "zcm": encode_zcm,
                                           "taddr": encode_taddr, "wgmma_smem": encode_wgmma_smem}


# --------------------------------------------------------------------------------------------
# Request keys, read from the API's own signatures.


def _params(fn: Callable[..., Any], drop: tuple[str, ...] = ("check",)) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every keyword, the required ones) of an API function, from its code object."""
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    npos = code.co_argcount - len(fn.__defaults__ or ())
    kwdefaults = fn.__kwdefaults__ or {}
    required = tuple(n for i, n in enumerate(names) if (i < npos if i < code.co_argcount else n not in kwdefaults))
    return tuple(n for n in names if n not in drop), tuple(n for n in required if n not in drop)


@dataclass(frozen=True)
class Shape:
    """What one (op, descriptor) takes: its keys, the required ones, the word keys."""

    keys: tuple[str, ...]
    required: tuple[str, ...]
    words: tuple[str, ...] = ()

    def allowed(self) -> str:
        return ", ".join(self.keys)


@functools.cache
def shapes() -> dict[tuple[str, str | None], Shape]:
    """What each (op, descriptor) takes, made once."""
    table: dict[tuple[str, str | None], Shape] = {}
    head = ("op", "id", "descriptor")
    ctx = {name: _params(fn, ("word", "kind", "more"))[0] for name, fn in VALIDATORS.items()}
    for desc, fn in ENCODERS.items():
        keys, required = _params(fn)
        table["encode", desc] = Shape(head + keys, ("descriptor",) + required)
    keys, required = _params(smem_for_tile)  # (its arch: sm_90a makes a wgmma word; a tcgen05 target checks the word)
    table["encode", "smem_tile"] = Shape(head + keys, ("descriptor",) + required)
    for op in ("decode", "validate"):
        for desc in DESCRIPTORS:
            table[op, desc] = Shape(head + ("word",) + (("kind",) if desc == "idesc" else ()) + ctx[desc],
                                    ("word",) + (("kind",) if desc == "idesc" and op == "validate" else ()), ("word",))
    # decode of an idesc without a kind: under every kind; without a descriptor: a word below 2**32
    # under every kind and as a tensor memory address, a wider one as smem, wgmma_smem and zcm
    table["decode", "idesc*"] = Shape(head + ("word",) + ctx["idesc"], ("word",), ("word",))
    table["decode", "word32"] = Shape(head + ("word",) + tuple(dict.fromkeys(ctx["idesc"] + ctx["taddr"])), ("word",),
                                      ("word",))
    table["decode", "smem+zcm"] = Shape(head + ("word",) + tuple(dict.fromkeys(ctx["smem"] + ctx["zcm"])), ("word",),
                                        ("word",))
    keys, required = _params(check_mma)
    table["check", None] = Shape(("op", "id") + keys, required, ("idesc", "a_desc", "b_desc", "zcm"))
    return table


def request_keys() -> dict[str, dict[str, list[str]]]:
    """The keys each op (and descriptor) takes and requires: ``{"encode idesc": {"keys": [...],
    "required": [...]}, ...}`` (the schema ``descgen batch --help`` documents)."""
    names = {("encode", "smem_tile"): "encode smem (tile form)", ("decode", "idesc*"): "decode idesc (no kind)",
             ("decode", "word32"): "decode (word below 2**32, no descriptor)",
             ("decode", "smem+zcm"): "decode (wider word, no descriptor)", ("check", None): "check"}
    return {names.get(k, f"{k[0]} {k[1]}"): {"keys": list(s.keys), "required": list(s.required)}
            for k, s in shapes().items()}


# --------------------------------------------------------------------------------------------
# Errors.


def usage(code: str, field: str, value: Any, allowed: str, detail: str) -> DescgenError:
    """The ``BATCH-*`` usage error ``code`` (a ``[[usage]]`` entry of ``tables/rules.toml``: its rule
    and source), with ``detail`` saying what is wrong with this request."""
    return usage_error(code, field, value, allowed, detail, "batch")


#: "did you mean" hints per unknown key and shape.
_NEAR: Memo[str] = Memo("batch key hints", 1 << 12)


def _unknown_key(key: str, value: Any, shape: Shape, what: str) -> DescgenError:
    hint = _NEAR.get((key, shape.keys))
    if hint is None:
        import difflib

        near = difflib.get_close_matches(key, shape.keys, n=1)
        hint = _NEAR.remember((key, shape.keys), f" (did you mean {near[0]!r}?)" if near else "")
    return usage("BATCH-KEY", key, value, shape.allowed(), f"{what} takes no key {key!r}{hint}")


def error_answer(e: BaseException) -> tuple[dict[str, Any], bool]:
    """The CLI's ``error_dict`` for an exception, and whether it is an internal error (a bug)."""
    if isinstance(e, DescgenError):
        return {"type": type(e).__name__, "message": str(e), "findings": [f.as_dict() for f in e.findings]}, False
    return {"type": "InternalError",
            "message": f"internal error: {type(e).__name__}: {e} (a bug in descgen; please report it)",
            "findings": []}, True


# --------------------------------------------------------------------------------------------
# A request's keys and words.


def request_word(req: Mapping[str, Any], key: str) -> int | None:
    v = req.get(key)
    if v is None:
        return None
    if v.__class__ is int or v.__class__ is Word:  # a request built in Python may hold an encoder's Word
        if v >= 0:
            return int(v)
    elif v.__class__ is str:
        try:
            # the command line's rule (hex pasted without 0x: the note is request_notes')
            return parse_uint(v, words=True)[0]
        except ValueError:
            pass
    raise usage("BATCH-WORD", key, v, "an unsigned integer: a JSON number, or a string in decimal, 0x hex or 0b binary "
                "(hex without 0x read as descgen decode reads it)",
                "a descriptor word is an unsigned 32- or 64-bit integer")


def request_notes(req: Mapping[str, Any]) -> list[str]:
    """The notes of the request's words written without ``0x``: which reading was taken
    (:func:`descgen.core.numbers.parse_uint`), as the command line prints them on stderr."""
    notes = []
    for key in _WORD_KEYS:
        v = req.get(key)
        if v.__class__ is str and v.lstrip()[:2].lower() not in ("0x", "0b"):
            try:
                note = parse_uint(v, words=True)[1]
            except ValueError:
                continue
            if note:
                notes.append(f"{key}: {note}")
    return notes


#: The request keys that hold a descriptor word.
_WORD_KEYS = ("word", "idesc", "a_desc", "b_desc", "zcm")


def _check_keys(req: Mapping[str, Any], shape: Shape, what: str) -> None:
    keys = shape.keys
    for key in req:
        if key not in keys:
            raise _unknown_key(key, req[key], shape, what)
    for key in shape.required:
        if key not in req:
            raise usage("BATCH-KEY-MISSING", key, None, shape.allowed(), f"{what} needs {key!r}")


def request_args(req: Mapping[str, Any], shape: Shape, what: str,
                 skip: tuple[str, ...] = ("op", "id", "descriptor")) -> dict[str, Any]:
    """The request's keys checked against ``shape`` (:func:`_check_keys`: an unknown or a missing
    key raises), and its arguments: the keys but ``skip``. A set of keys found good is
    remembered (with the skipped keys it holds), so that the next request with those keys costs a
    lookup and a copy."""
    keys = (id(shape), skip, tuple(req))
    dropped = _GOOD_KEYS.get(keys)
    if dropped is None:
        _check_keys(req, shape, what)
        dropped = _GOOD_KEYS.remember(keys, tuple(k for k in req if k in skip))
    args = dict(req)
    for k in dropped:
        del args[k]
    return args


#: Per shape, skipped keys and key set (in the request's order) found good by :func:`request_args`:
#: the skipped keys among them.
_GOOD_KEYS: Memo[tuple[str, ...]] = Memo("batch key sets found good", 1 << 12)


def request_descriptor(req: Mapping[str, Any], op: str) -> str | None:
    desc = req.get("descriptor")
    if desc is None or desc in DESCRIPTORS:
        return desc
    raise usage("BATCH-DESCRIPTOR", "descriptor", desc, ", ".join(DESCRIPTORS), f"{op}: no such descriptor {desc!r}")


def fitting(wide: bool) -> tuple[str, ...]:
    """The descriptors (:data:`DESCRIPTORS`) whose words are wider than 32 bits (``wide``), or not."""
    widths = {lay.word: lay.width for lay in layouts()}
    return tuple(d for d in DESCRIPTORS if (widths[d] > 32) == wide)


def named(descriptors: tuple[str, ...]) -> str:
    """``"descriptor": "smem", "wgmma_smem" or "zcm"``."""
    quoted = [f'"{d}"' for d in descriptors]
    return '"descriptor": ' + (", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0])


def word_descriptor(req: Mapping[str, Any], op: str) -> str | None:
    """The descriptor of a decode/validate request, as ``descgen decode --as/--kind`` choose it:
    a kind means idesc (and is refused with another descriptor); None when neither is given."""
    desc = request_descriptor(req, op)
    if "kind" not in req:
        return desc
    if desc not in (None, "idesc"):
        raise usage("BATCH-KEY", "kind", req["kind"], shapes()[op, desc].allowed(),
                    f"kind applies to instruction descriptors, not descriptor {desc!r}")
    return "idesc"
