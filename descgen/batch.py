"""Batch mode: JSON-lines requests in, one JSON line per request out, errors as data.

Each input line is one JSON object, a request::

    {"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256, "id": 7}
    {"op": "encode", "descriptor": "smem", "start_address": 1024, "lbo": 16, "sbo": 1024, "swizzle": "128B"}
    {"op": "encode", "descriptor": "smem", "dtype": "bf16", "major": "k", "swizzle": "128B", "mn": 128, "k": 64, "start_address": 1024}
    {"op": "encode", "descriptor": "zcm", "skip_span": 1, "use_span": 13, "start_count": [1, 3, 5, 7], "m": 32, "n": 64}
    {"op": "decode", "word": "0x08400010", "kind": "f16"}
    {"op": "validate", "word": "0x08400010", "kind": "f16", "cta_group": 1, "ws": false}
    {"op": "check", "idesc": "0x08400010", "kind": "f16", "a_desc": "0x4000404000010040", "b_desc": "0x4000404000010440"}

and gets one response line::

    {"line": 1, "id": 7, "ok": true, "word": "0x08400010", "findings": []}
    {"line": 9, "ok": false, "error": {"type": "UsageError", "message": "...", "findings": [...]}}

Keys are the keyword arguments of the API (so their documentation is the API's):
:func:`descgen.encode_idesc`, :func:`descgen.encode_smem`, :func:`descgen.smem_for_tile` (the
tile form of an smem encode, chosen by any of ``mn``, ``k``, ``dtype``, ``major``,
``atom_order``, ``kind``), :func:`descgen.encode_zcm`, the context keywords of
:func:`descgen.validate_idesc` / ``validate_smem`` / ``validate_zcm``, and :func:`descgen.check_mma`.
``check`` (``check=False``) is not a key: batch mode is strict. A key the request's op and
descriptor do not take is an error naming the key and the allowed keys (``BATCH-KEY``), never
ignored.

Answers are brief by default, what a generator or a script needs: an encode's ``word`` and
``findings`` (and a zcm's ``mask`` hex for m and n); a decode's ``descriptor``, ``kind``,
``word``, ``fields`` (``{name: value}``), ``derived`` and ``findings`` (several layouts tried:
``consistent`` and ``results``); a validate's or check's ``findings`` and ``not_checked`` codes.
With ``full`` (``descgen batch --full``) the answer mirrors the CLI's ``--json`` envelope without
``descgen``/``command``/``input``: ``result`` (and ``defaults``, ``mask``, ``tile``,
``consistent``/``results``) exactly as ``descgen idesc|smem|zcm|decode|validate|check --json``
prints them (:meth:`descgen.Decoded.as_dict`, :meth:`descgen.Report.as_dict`). A request about
one word or instruction may add ``format`` (and ``name``): the answer then carries ``code``,
:func:`descgen.emit`'s text; with ``"functions": true`` (``format`` c, cpp, ptx or python) it is
:func:`descgen.emit_functions`' instead: the word's fixed part as a checked constant and its
run-time functions (a shared memory descriptor's ``NAME(smem_addr)`` and, of a tile, ``NAME_k``
and ``NAME_stage``, whose step ``stage_bytes`` sets; of one given by its fields, ``NAME_advance``;
an idesc's scale factor IDs or sparsity selector; a zcm's column shift), as ``descgen smem``
without ``--addr`` and ``idesc``/``zcm --functions`` write them (an smem encode's
``start_address`` may then be left out: 0). Words come back as
hex strings zero-padded to their width (``"0x08400010"``, 16 digits for 64-bit words; JSON
consumers cannot all hold 64-bit integers); words may be given as JSON integers or as strings in
decimal, ``0x`` hex or ``0b`` binary (``_`` separators allowed), or hex pasted without ``0x`` read
as the command line reads it (:mod:`descgen.core.numbers`: ``"08400010"`` is 0x08400010), the answer's
``notes`` saying which reading was taken.

``ok`` is what the CLI's exit status would say: true when the command would exit 0 (an encode
that succeeded, a decode/validate/check with no error finding). A refused request carries
``error`` (the CLI's ``error_dict``: ``type``, ``message``, ``findings``); a decode, validate or
check of a word with error findings carries its ``result`` with ``ok`` false. ``line`` is the
1-based input line; ``id`` (any JSON value) is echoed when given. Blank lines and lines whose
first non-blank character is ``#`` are not requests: they produce no output but are counted in
``line``.

Errors are data: a malformed line (``BATCH-JSON``: not JSON, NaN/Infinity, a duplicate key, not
an object), an unknown or missing op (``BATCH-OP``), descriptor (``BATCH-DESCRIPTOR``), an
unknown key (``BATCH-KEY``), a missing key (``BATCH-KEY-MISSING``), a word that is not an
unsigned integer (``BATCH-WORD``), a wrong type or a value that breaks a PTX rule (the
library's own codes). A failure inside descgen itself (a bug) is reported as
``"type": "InternalError"`` and the run goes on.

Results are pure functions of the request: :func:`run` keeps an LRU cache of responses keyed on
the request (without ``id``); full answers are serialized from cached per-field JSON fragments.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping

from .model.catalog import usage_error
from .backends.descriptor_functions import emit_functions
from .backends.emitters import emit
from .model.engine import Decoded, Word, hex_bits, hex_word
from .core.errors import DescgenError
from .model.facts import idesc_defaults
from .words.identify import DESCRIPTORS as IDENTIFIED, identify
from .words.idesc import encode_idesc, validate_idesc
from .words.instruction import check_mma
from .model.loader import KINDS, layouts
from .core.memo import Memo
from .core.numbers import parse_uint
from .words.smem import encode_smem, validate_smem
from .words.taddr import encode_taddr, validate_taddr
from .tiles import smem_for_tile
from .words.wgmma_smem import encode_wgmma_smem, validate_wgmma_smem
from .words.zcm import encode_zcm, mask_info, validate_zcm, zcm_mask

__all__ = ["OPS", "DESCRIPTORS", "BatchStats", "ResponseCache", "handle", "run", "response_line", "request_keys"]

#: The operations a request can ask for.
OPS = ("encode", "decode", "validate", "check")
#: The descriptor words (``descriptor`` key of encode/decode/validate): every word descgen reads
#: (:data:`descgen.words.identify.DESCRIPTORS`, ``descgen decode --as``).
DESCRIPTORS: tuple[str, ...] = IDENTIFIED

_SMEM_TILE_ONLY = ("mn", "k", "dtype", "major", "atom_order", "kind")


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
class _Shape:
    """What one (op, descriptor) takes: its keys, the required ones, the word keys."""

    keys: tuple[str, ...]
    required: tuple[str, ...]
    words: tuple[str, ...] = ()

    def allowed(self) -> str:
        return ", ".join(self.keys)


_SHAPES: dict[tuple[str, str | None], _Shape] = {}


def _shapes() -> dict[tuple[str, str | None], _Shape]:
    if _SHAPES:
        return _SHAPES

    head = ("op", "id", "descriptor")
    ctx = {name: _params(fn, ("word", "kind", "more"))[0] for name, fn in _VALIDATE.items()}
    for desc, fn in _ENCODE.items():
        keys, required = _params(fn)
        _SHAPES["encode", desc] = _Shape(head + keys, ("descriptor",) + required)
    keys, required = _params(smem_for_tile)  # (its arch: sm_90a makes a wgmma word; a tcgen05 target checks the word)
    _SHAPES["encode", "smem_tile"] = _Shape(head + keys, ("descriptor",) + required)
    for op in ("decode", "validate"):
        for desc in DESCRIPTORS:
            _SHAPES[op, desc] = _Shape(head + ("word",) + (("kind",) if desc == "idesc" else ()) + ctx[desc],
                                       ("word",) + (("kind",) if desc == "idesc" and op == "validate" else ()), ("word",))
    # decode of an idesc without a kind: under every kind; without a descriptor: a word below 2**32
    # under every kind and as a tensor memory address, a wider one as smem, wgmma_smem and zcm
    _SHAPES["decode", "idesc*"] = _Shape(head + ("word",) + ctx["idesc"], ("word",), ("word",))
    _SHAPES["decode", "word32"] = _Shape(head + ("word",) + tuple(dict.fromkeys(ctx["idesc"] + ctx["taddr"])), ("word",),
                                         ("word",))
    _SHAPES["decode", "smem+zcm"] = _Shape(head + ("word",) + tuple(dict.fromkeys(ctx["smem"] + ctx["zcm"])), ("word",), ("word",))
    keys, required = _params(check_mma)
    _SHAPES["check", None] = _Shape(("op", "id") + keys, required, ("idesc", "a_desc", "b_desc", "zcm"))
    return _SHAPES


def request_keys() -> dict[str, dict[str, list[str]]]:
    """The keys each op (and descriptor) takes and requires: ``{"encode idesc": {"keys": [...],
    "required": [...]}, ...}`` (the schema ``descgen batch --help`` documents)."""
    names = {("encode", "smem_tile"): "encode smem (tile form)", ("decode", "idesc*"): "decode idesc (no kind)",
             ("decode", "word32"): "decode (word below 2**32, no descriptor)",
             ("decode", "smem+zcm"): "decode (wider word, no descriptor)", ("check", None): "check"}
    return {names.get(k, f"{k[0]} {k[1]}"): {"keys": list(s.keys), "required": list(s.required)} for k, s in _shapes().items()}


# --------------------------------------------------------------------------------------------
# Errors.


def _usage(code: str, field: str, value: Any, allowed: str, detail: str) -> DescgenError:
    """The ``BATCH-*`` usage error ``code`` (a ``[[usage]]`` entry of ``tables/rules.toml``: its rule
    and source), with ``detail`` saying what is wrong with this request."""
    return usage_error(code, field, value, allowed, detail, "batch")


#: "did you mean" hints per unknown key and shape.
_NEAR: Memo[str] = Memo("batch key hints", 1 << 12)


def _unknown_key(key: str, value: Any, shape: _Shape, what: str) -> DescgenError:
    hint = _NEAR.get((key, shape.keys))
    if hint is None:
        import difflib

        near = difflib.get_close_matches(key, shape.keys, n=1)
        hint = _NEAR.remember((key, shape.keys), f" (did you mean {near[0]!r}?)" if near else "")
    return _usage("BATCH-KEY", key, value, shape.allowed(), f"{what} takes no key {key!r}{hint}")


def _error(e: BaseException) -> tuple[dict[str, Any], bool]:
    """The CLI's ``error_dict`` for an exception, and whether it is an internal error (a bug)."""
    if isinstance(e, DescgenError):
        return {"type": type(e).__name__, "message": str(e), "findings": [f.as_dict() for f in e.findings]}, False
    return {"type": "InternalError", "message": f"internal error: {type(e).__name__}: {e} (a bug in descgen; please report it)",
            "findings": []}, True


# --------------------------------------------------------------------------------------------
# Results: what the CLI's --json envelope holds, as objects the fast serializer knows.


@dataclass(frozen=True)
class _DecodeResult:
    """``descgen decode --json``'s result: the decoded word plus the rules not checked."""

    decoded: Decoded
    report: Any

    def as_dict(self) -> dict[str, Any]:
        return {**self.decoded.as_dict(), "not_checked": [n.as_dict() for n in self.report.not_checked]}


_SCALARS = frozenset((str, int, bool, float, type(None)))


def _plain(value: Any) -> Any:
    """The JSON-ready form of a response part (as_dict of results and findings, recursively)."""
    if value.__class__ in _SCALARS:
        return value
    if hasattr(value, "as_dict"):
        return value.as_dict()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _word(req: Mapping[str, Any], key: str) -> int | None:
    v = req.get(key)
    if v is None:
        return None
    if v.__class__ is int or v.__class__ is Word:  # a request built in Python may hold an encoder's Word
        if v >= 0:
            return int(v)
    elif v.__class__ is str:
        try:
            return parse_uint(v, words=True)[0]  # the command line's rule (hex pasted without 0x: the note is _notes')
        except ValueError:
            pass
    raise _usage("BATCH-WORD", key, v, "an unsigned integer: a JSON number, or a string in decimal, 0x hex or 0b binary "
                 "(hex without 0x read as descgen decode reads it)", "a descriptor word is an unsigned 32- or 64-bit integer")


def _notes(req: Mapping[str, Any]) -> list[str]:
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


def _check_keys(req: Mapping[str, Any], shape: _Shape, what: str) -> None:
    keys = shape.keys
    for key in req:
        if key not in keys:
            raise _unknown_key(key, req[key], shape, what)
    for key in shape.required:
        if key not in req:
            raise _usage("BATCH-KEY-MISSING", key, None, shape.allowed(), f"{what} needs {key!r}")


def _args(req: Mapping[str, Any], shape: _Shape, what: str, skip: tuple[str, ...] = ("op", "id", "descriptor")) -> dict[str, Any]:
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


#: Per shape, skipped keys and key set (in the request's order) found good by :func:`_args`: the
#: skipped keys among them.
_GOOD_KEYS: Memo[tuple[str, ...]] = Memo("batch key sets found good", 1 << 12)


def _descriptor(req: Mapping[str, Any], op: str) -> str | None:
    desc = req.get("descriptor")
    if desc is None or desc in DESCRIPTORS:
        return desc
    raise _usage("BATCH-DESCRIPTOR", "descriptor", desc, ", ".join(DESCRIPTORS), f"{op}: no such descriptor {desc!r}")


def _fitting(wide: bool) -> tuple[str, ...]:
    """The descriptors (:data:`DESCRIPTORS`) whose words are wider than 32 bits (``wide``), or not."""
    widths = {lay.word: lay.width for lay in layouts()}
    return tuple(d for d in DESCRIPTORS if (widths[d] > 32) == wide)


def _named(descriptors: tuple[str, ...]) -> str:
    """``"descriptor": "smem", "wgmma_smem" or "zcm"``."""
    quoted = [f'"{d}"' for d in descriptors]
    return '"descriptor": ' + (", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0])


def _word_descriptor(req: Mapping[str, Any], op: str) -> str | None:
    """The descriptor of a decode/validate request, as ``descgen decode --as/--kind`` choose it:
    a kind means idesc (and is refused with another descriptor); None when neither is given."""
    desc = _descriptor(req, op)
    if "kind" not in req:
        return desc
    if desc not in (None, "idesc"):
        raise _usage("BATCH-KEY", "kind", req["kind"], _shapes()[op, desc].allowed(),
                     f"kind applies to instruction descriptors, not descriptor {desc!r}")
    return "idesc"


#: Per descriptor: its validator and its encoder.
_VALIDATE: dict[str, Callable[..., Any]] = {"idesc": validate_idesc, "smem": validate_smem, "zcm": validate_zcm,
                                            "taddr": validate_taddr, "wgmma_smem": validate_wgmma_smem}
_ENCODE: dict[str, Callable[..., Any]] = {"idesc": encode_idesc, "smem": encode_smem, "zcm": encode_zcm,
                                          "taddr": encode_taddr, "wgmma_smem": encode_wgmma_smem}


def _validated(what: str, word: int, kind: Any = None, **ctx: Any) -> Any:
    """``validate_<what>(word, [kind], **ctx)``."""
    if what == "idesc":
        return validate_idesc(word, kind, **ctx)
    return _VALIDATE[what](word, **ctx)


#: A JSON value's class as a one-letter code: keys hold no type object, so the garbage collector
#: can stop tracking them (a tuple of strings and numbers is untracked at its first collection).
_CODES = {int: "i", str: "s", bool: "b", float: "f", type(None): "n"}


# -- the ops: each returns (ok, parts): the answer's parts in the brief or the full form ---------


def _brief_decoded(d: Decoded) -> dict[str, Any]:
    """The brief form of a decoded word: its logical field values, derived values and findings."""
    return {"descriptor": d.descriptor, **({"kind": d.kind} if d.kind else {}), "word": d.hex, "ok": d.ok,
            "fields": d.values(), "derived": {name: value for name, value, _ in d.derived}, "findings": d.findings}


def _brief_report(report: Any) -> dict[str, Any]:
    return {"findings": report.findings, "not_checked": [n.code for n in report.not_checked]}


def _encoded(word: int, width: int, validate: Callable[[], Any], role: str,
             full: dict[str, Any] | None) -> tuple[bool, dict[str, Any]]:
    """An encode's answer. Brief: the word and its findings, which the encoder returns with it (a
    :class:`descgen.Word` carries the warnings and notes: what ``validate`` would report). Full:
    the decoded word (``validate()``'s) and ``full``'s parts (defaults, tile, mask).
    ``_source`` makes the report when a ``format`` asks for code."""
    if full is None:
        findings = word.findings if word.__class__ is Word else ()
        return True, {"word": hex_word(word, width), "findings": findings, "_source": validate}
    report = validate()
    return True, {"result": report.decoded[role], **full, "_source": lambda: report}


#: The keywords of encode_idesc that are instruction context, not fields: what validate_idesc takes.
_IDESC_CONTEXT = ("cta_group", "ws", "sp", "scale_vec", "a_tmem", "arch")


def _encode(req: Mapping[str, Any], full: bool) -> tuple[bool, dict[str, Any]]:
    shapes = _shapes()
    desc = _descriptor(req, "encode")
    if desc is None:
        raise _usage("BATCH-KEY-MISSING", "descriptor", None, ", ".join(DESCRIPTORS), "encode needs 'descriptor'")
    if desc == "idesc":
        args = _args(req, shapes["encode", "idesc"], "encode idesc")
        word = encode_idesc(**args)
        kind = args["kind"]
        defaults = {name: value for name, value in idesc_defaults(kind).items()
                    if args.get(name) is None} if full else None
        return _encoded(word, 32, lambda: validate_idesc(word, kind, **{k: args[k] for k in _IDESC_CONTEXT if k in args}),
                        "idesc", {"defaults": defaults} if full else None)
    if desc in ("smem", "wgmma_smem"):
        if any(k in req for k in _SMEM_TILE_ONLY):
            shape = shapes["encode", "smem_tile"]
            for key in ("lbo", "sbo", "base_offset", "lbo_mode"):
                if key in req:
                    raise _usage("BATCH-KEY", key, req[key], shape.allowed(),
                                 f"the tile form of an smem encode (mn, k, dtype, major) computes {key}; drop it or drop the tile keys")
            args = _args(req, shape, f"encode {desc} (tile form)")
            if desc == "wgmma_smem":
                args["arch"] = args.get("arch") or "sm_90a"  # (another target: LAYOUT-ARCH or the word it reads)
            td = smem_for_tile(**args)
            ctx = {"pattern_start": args.get("pattern_start"), **({"arch": args.get("arch")} if td.descriptor == "smem" else {})}
            report = _validated(td.descriptor, td.word, **ctx)
            d = report.decoded[td.descriptor]
            return True, {**({"result": d, "tile": td} if full else
                             {"word": d.hex, "findings": report.findings}), "_source": lambda: report,
                          "_functions": lambda: td}
        args = _args(req, shapes["encode", desc], f"encode {desc}")
        if desc == "wgmma_smem":
            word = encode_wgmma_smem(**args)
            ctx = {"pattern_start": args.get("pattern_start")}
        else:
            word = encode_smem(**args)
            ctx = {"arch": args.get("arch"), "pattern_start": args.get("pattern_start")}
        return _encoded(word, 64, lambda: _validated(desc, word, **ctx), desc, {} if full else None)
    if desc == "taddr":
        args = _args(req, shapes["encode", "taddr"], "encode taddr")
        word = encode_taddr(**args)
        ctx = {k: args[k] for k in ("warp", "alloc_columns", "alloc_base") if k in args}
        return _encoded(word, 32, lambda: validate_taddr(word, **ctx), "taddr", {} if full else None)
    args = _args(req, shapes["encode", "zcm"], "encode zcm")
    word = encode_zcm(**args)
    m, n = args.get("m"), args.get("n")
    ok, parts = _encoded(word, 64, lambda: validate_zcm(word, m=m, n=n, ws=args.get("ws")), "zcm", {} if full else None)
    if m is not None and n is not None:
        parts["mask"] = _mask(word, m, n, full)
    return ok, parts


def _mask(word: int, m: int, n: int, full: bool) -> Any:
    """The N-bit mask: the CLI's form (sub-masks in hex and binary) for ``full``, else its hex."""
    if not full:
        return hex_bits(zcm_mask(word, m, n), n)
    return mask_info(word, m, n)  # the form descgen zcm/decode --json print


def _decode(req: Mapping[str, Any], full: bool) -> tuple[bool, dict[str, Any]]:
    """``descgen decode``'s rules: a kind means idesc; an idesc without a kind is decoded under
    every kind; no descriptor: idesc (every kind) below 2**32, else both smem and zcm."""
    shapes = _shapes()
    desc = _word_descriptor(req, "decode")
    word = _word(req, "word")
    if desc == "idesc" and "kind" not in req:
        desc = "idesc*"
    elif desc is None:
        if word is None:
            raise _usage("BATCH-KEY-MISSING", "word", None, "an unsigned integer", "decode needs 'word'")
        desc = "word32" if word < 1 << 32 else "smem+zcm"
        if desc == "word32":
            for key in req:
                if key not in shapes["decode", "word32"].keys and key in shapes["decode", "smem+zcm"].keys:
                    raise _usage("BATCH-KEY", key, req[key], shapes["decode", "word32"].allowed(),
                                 f"{key!r} does not apply to an instruction descriptor or a tensor memory address; a word "
                                 f"below 2**32 decodes as one: add {_named(tuple(d for d in _fitting(True) if key in shapes['decode', d].keys))}")
            own = {d: [k for k in shapes["decode", d].keys if k in req and k not in shapes["decode", o].keys]
                   for d, o in (("idesc", "taddr"), ("taddr", "idesc"))}
            if own["idesc"] and own["taddr"]:
                raise _usage("BATCH-KEY", own["taddr"][0], req[own["taddr"][0]], shapes["decode", "word32"].allowed(),
                             f"{', '.join(own['idesc'])} is an instruction descriptor's context and {', '.join(own['taddr'])} a "
                             "tensor memory address's: no reading of the word takes both; add \"descriptor\"")
    shape = shapes["decode", desc]
    ctx = _args(req, shape, "decode" if desc in ("idesc*", "word32", "smem+zcm") else f"decode {desc}",
                ("op", "id", "descriptor", "word", "kind"))
    assert word is not None  # "word" is a required key of every decode shape
    if desc in DESCRIPTORS:
        report = _validated(desc, word, req["kind"], **ctx) if desc == "idesc" else _validated(desc, word, **ctx)
        d = report.decoded[desc]
        mask = _decode_mask(word, ctx, report, full) if desc == "zcm" else None
        parts = {"result": _DecodeResult(d, report)} if full else _brief_decoded(d)
        return d.ok, {**parts, **({"mask": mask} if mask else {}), "_source": lambda: report}
    # several readings, as descgen decode reads a bare word (identify): every kind below 2**32,
    # and a tensor memory address where it is a valid one (or its context says so); smem,
    # wgmma_smem and zcm above, with CUTLASS's runtime idesc when the low half is 0 (its first
    # consistent kind, as "idesc", and "runtime" naming them all)
    found = identify(word, descriptor="idesc" if desc == "idesc*" else None, **ctx)
    by_name = {r.name: r for r in found.readings}
    names = [*KINDS, "taddr"] if desc == "word32" else list(KINDS) if desc == "idesc*" else ["smem", "wgmma_smem", "zcm"]
    runtime = [r for r in found.readings if r.runtime is not None and r.ok]
    results = {name: by_name[name] for name in names if name in by_name}
    if runtime and desc == "smem+zcm":
        results["idesc"] = runtime[0]
    rank = {id(r): i for i, r in enumerate(found.readings)}  # identify's order: best first
    consistent = sorted((name for name, r in results.items() if r.ok), key=lambda name: rank[id(results[name])])
    answer: dict[str, Any] = {"consistent": consistent, "results": {
        name: _DecodeResult(r.decoded, r.report) if full else _brief_decoded(r.decoded) for name, r in results.items()}}
    if found.best.runtime is not None:
        answer["runtime"] = {**found.best.runtime.as_dict(), "kinds": [r.kind for r in runtime]}
    if desc == "smem+zcm":
        mask = _decode_mask(word, ctx, by_name["zcm"].report, full)
        if mask:
            answer["mask"] = mask
    return bool(consistent), answer


def _decode_mask(word: int, ctx: Mapping[str, Any], report: Any, full: bool) -> Any:
    """The mask for m and n, as descgen decode --m/--n shows it; None without both, or when M
    itself breaks a rule (the finding says so)."""
    m, n = ctx.get("m"), ctx.get("n")
    if m is None or n is None or any(f.code == "ZCM-M" for f in report.findings):
        return None
    return _mask(word, m, n, full)


def _validate(req: Mapping[str, Any], full: bool) -> tuple[bool, dict[str, Any]]:
    shapes = _shapes()
    desc = _word_descriptor(req, "validate")
    if desc is None:
        word = _word(req, "word")
        wide = word is not None and word >= 1 << 32
        raise _usage("BATCH-DESCRIPTOR", "descriptor", None, ", ".join(d if d != "idesc" else "idesc (with kind)"
                                                                         for d in DESCRIPTORS),
                     f"validate reads one descriptor; a word wider than 32 bits: add {_named(_fitting(True))}" if wide else
                     "validate reads one descriptor; an instruction descriptor needs \"kind\" (its rules depend on the MMA "
                     f"kind): add \"kind\", or {_named(tuple(d for d in _fitting(False) if d != 'idesc'))}")
    shape = shapes["validate", desc]
    ctx = _args(req, shape, f"validate {desc}", ("op", "id", "descriptor", "word", "kind"))
    word = _word(req, "word")
    assert word is not None  # "word" is a required key of every validate shape
    report = _validated(desc, word, req["kind"], **ctx) if desc == "idesc" else _validated(desc, word, **ctx)
    return report.ok, {**({"result": report} if full else _brief_report(report)), "_source": lambda: report}


def _check(req: Mapping[str, Any], full: bool) -> tuple[bool, dict[str, Any]]:
    shape = _shapes()["check", None]
    args = _args(req, shape, "check", ("op", "id"))
    for key in shape.words:
        if key in args:
            args[key] = _word(args, key)
    report = check_mma(**args)
    return report.ok, {**({"result": report} if full else _brief_report(report)), "_source": lambda: report}


_OPS: dict[str, Callable[[Mapping[str, Any], bool], tuple[bool, dict[str, Any]]]] = {
    "encode": _encode, "decode": _decode, "validate": _validate, "check": _check,
}


def _process(req: Any, full: bool = False) -> tuple[bool, dict[str, Any], bool]:
    """(ok, response parts (the full or the brief form), internal error) for one parsed request."""
    try:
        if req.__class__ is not dict:
            raise _usage("BATCH-JSON", "request", _shown(req), "a JSON object", "a request is one JSON object per line")
        op = req.get("op")
        fn = _OPS.get(op) if op.__class__ is str else None
        if fn is None:
            raise _usage("BATCH-OP", "op", op, ", ".join(OPS), "every request names its op" if op is None else "no such op")
        fmt = name = None
        functions: dict[str, Any] | None = None
        if any(key in req for key in _CODE_KEYS):  # the answer's words as source code (descgen.emit)
            req = dict(req)
            fmt, name = req.pop("format", None), req.pop("name", None)
            functions = _functions_options(req)
            if functions is not None and op == "encode" and req.get("descriptor") in ("smem", "wgmma_smem"):
                req.setdefault("start_address", 0)  # (the functions take the address at run time)
            if fmt is None:
                raise _usage("BATCH-KEY-MISSING", "format", None, "hex, json, c, cpp, ptx, python",
                             "name, functions and stage_bytes shape the code of format; give format too")
        ok, parts = fn(req, full)
        source = parts.pop("_source", None)
        runtime = parts.pop("_functions", source)
        notes = _notes(req)
        if notes:  # after the answer's own parts, as the CLI prints them on stderr
            parts["notes"] = notes
        if fmt is not None:
            if source is None:
                raise _usage("BATCH-KEY", "format", fmt, "a request about one word or instruction",
                             "format writes one word's code: give the decode a descriptor (and kind)")

            parts["code"] = emit(source(), fmt, name=name) if functions is None else \
                emit_functions(runtime(), fmt, name=name, **functions)
        return ok, parts, False
    except RecursionError as e:  # pragma: no cover - absurdly nested input
        error, internal = _error(e)
    except Exception as e:  # errors are data; a bug is reported as one and the run goes on
        error, internal = _error(e)
    failed_notes = _notes(req) if req.__class__ is dict else None
    return False, {"error": error, **({"notes": failed_notes} if failed_notes else {})}, internal


#: The keys that ask for an answer's words as source code: descgen.emit's format and name, and
#: descgen.emit_functions' (the fixed part and the run-time functions) functions and stage_bytes.
_CODE_KEYS = ("format", "name", "functions", "stage_bytes")


def _functions_options(req: dict[str, Any]) -> dict[str, Any] | None:
    """Pop ``functions`` and ``stage_bytes`` from ``req``: None for descgen.emit's constant, else
    descgen.emit_functions' keywords."""
    functions, stage_bytes = req.pop("functions", False), req.pop("stage_bytes", None)
    if functions.__class__ is not bool:
        raise _usage("BATCH-KEY", "functions", _shown(functions), "true or false",
                     "functions asks for the word's fixed part and run-time functions instead of a constant")
    if stage_bytes is not None and not functions:
        raise _usage("BATCH-KEY", "stage_bytes", _shown(stage_bytes), "with \"functions\": true",
                     "stage_bytes sets a tile's stage function: it applies to functions")
    if not functions:
        return None
    return {} if stage_bytes is None else {"stage_bytes": stage_bytes}


def _shown(value: Any) -> Any:
    text = json.dumps(value, allow_nan=False)
    return text if len(text) <= 80 else text[:77] + "..."


def handle(request: Any, *, full: bool = False) -> dict[str, Any]:
    """Answer one request (a parsed JSON object): ``{"id"?, "ok", ... | "error"}``, in the brief
    form, or with ``full`` the ``--json`` envelope's parts (see the module doc).

    Never raises for a bad request: every problem is an ``error`` entry. The parts are plain
    JSON-ready values; :func:`run` adds ``line``.
    """
    ok, parts, _ = _process(request, full)
    out: dict[str, Any] = {}
    if request.__class__ is dict and "id" in request:
        out["id"] = request["id"]
    out["ok"] = ok
    out.update({k: _plain(v) for k, v in parts.items()})
    return out


# --------------------------------------------------------------------------------------------
# JSON lines: parsing and fast serialization.


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


def _as_dict(value: Any) -> Any:
    """What :func:`_plain` makes of a result object, for the JSON encoder's ``default``."""
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _encoder(default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
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
_loads = _decoder.decode
#: The decoder's scanner: a value from a position, and where it ends (``_loads`` wraps it for
#: whitespace around the value and makes its errors).
_scan: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]  # (JSONDecoder's own)
_dumps = _encoder()
#: ``_dumps(_plain(value))`` in one pass: the C encoder walks dicts, lists and tuples itself, and
#: results serialize through their own ``as_dict`` (the one JSON form of a Decoded, a Report...).
_dumps_plain = _encoder(_as_dict)


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


def _key(req: dict[str, Any]) -> Any:
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


class _NotJSON:
    """A line that is not a JSON value: its parse error, in place of the request."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _parse(text: str) -> Any:
    """The request on a line (its text, stripped), or :class:`_NotJSON`. A line that is one JSON
    value and nothing more is read by the scanner directly; anything else goes through
    ``_loads``, whose error says what is wrong."""
    try:
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except Exception:  # (StopIteration: no value at all; a hook's ValueError; RecursionError)
        pass
    try:
        return _loads(text)
    except (ValueError, RecursionError) as e:
        return _NotJSON(e)


def response_line(n: int, text: str, cache: ResponseCache | None = None,
                  stats: BatchStats | None = None, full: bool = False) -> str:
    """The response line (no newline) to request line number ``n`` (its text, stripped): the
    brief answer, or with ``full`` the ``--json`` envelope's parts."""
    return _answer(n, text, _parse(text), cache, stats, full)


def _answer(n: int, text: str, req: Any, cache: ResponseCache | None, stats: BatchStats | None, full: bool) -> str:
    """:func:`response_line` for a line already parsed (``req``: :func:`_parse`'s result)."""
    internal = False
    if req.__class__ is _NotJSON:
        error = _usage("BATCH-JSON", "line", text if len(text) <= 80 else text[:77] + "...", "one JSON object (RFC 8259; "
                       "no NaN/Infinity, no duplicate keys)", f"not a JSON object: {req.error}")
        ok, body = False, '"ok":false,"error":' + _dumps(_error(error)[0])
        is_error = True
    else:
        key = (full, _key(req)) if cache is not None and req.__class__ is dict and cache.active() else None
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
            ok, parts, internal = _process(req, full)
            is_error = "error" in parts
            try:
                if full:
                    body = f'"ok":{"true" if ok else "false"}' + "".join(f',"{k}":{_dumps_plain(v)}' for k, v in parts.items())
                else:
                    body = _dumps_plain({"ok": ok, **parts})[1:-1]
            except Exception as e:  # a result that is not JSON (a bug): still one valid line
                answer, internal = _error(e)
                ok, is_error, body = False, True, '"ok":false,"error":' + _dumps(answer)
            if key is not None and not internal:
                cache.put(key, (ok, is_error, body))  # type: ignore[union-attr]
        if req.__class__ is dict and "id" in req:
            rid = req["id"]
            body = f'"id":{int.__repr__(rid) if rid.__class__ is int else _dumps(rid)},{body}'  # (what json writes for an int)
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
    parsed = [_parse(text) for _, text in chunk]
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
            parsed[i] = None  # (freed as answered: memory the memos take meanwhile is not held apart; peak RSS stays flat)
    return out


def run(lines: Iterable[str], *, cache: "bool | int | ResponseCache" = True, stats: BatchStats | None = None, start: int = 1,
        full: bool = False, chunk: int = 1) -> Iterator[str]:
    """Answer JSON-lines requests: one response line (without newline) per request, in order.

    Args:
        lines: the input lines (a file, ``sys.stdin``, a list of strings).
        full: answer with the ``--json`` envelope's parts (every field's bits, unit, description
            and source) instead of the brief form (values and findings).
        cache: keep an LRU cache of answers up to this many characters (True: 16 Mi, and at most 64 Ki answers) keyed on the request
            without ``id``, or use the given :class:`ResponseCache` (shared between calls);
            False disables it. Results are pure functions of the request.
        stats: if given, counts are added to it.
        start: the number of the first line.
        chunk: answer this many requests at a time, alike requests together (faster; the
            answers still come in input order, a chunk's once it is read whole). 1: each answer
            as soon as its line is read (interactive use).

    Blank lines and ``#`` comment lines produce no response; ``line`` counts them.
    """
    lru: Any = cache if isinstance(cache, ResponseCache) else ResponseCache() if cache is True else ResponseCache(int(cache)) if cache else None
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
