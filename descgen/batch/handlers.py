"""Batch requests answered, one function per op (:mod:`descgen.batch`): each returns the
answer's parts in the brief or the full form (what the CLI's ``--json`` envelope holds, as objects
the fast serializer knows); :func:`process` adds the notes and the code a request asks for, and
makes every problem an ``error`` part."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..backends.descriptor_functions import emit_functions
from ..backends.emitters import emit
from ..model.engine import Decoded, Word, hex_bits, hex_word
from ..model.facts import idesc_defaults
from ..model.loader import KINDS
from ..tiles.descriptor import smem_for_tile
from ..words.identify import identify
from ..words.idesc import encode_idesc, validate_idesc
from ..words.instruction import check_mma
from ..words.smem import encode_smem
from ..words.taddr import encode_taddr, validate_taddr
from ..words.wgmma_smem import encode_wgmma_smem
from ..words.zcm import encode_zcm, mask_info, validate_zcm, zcm_mask
from .schema import (DESCRIPTORS, OPS, VALIDATORS, error_answer, fitting, named, request_args, request_descriptor,
                     request_notes, request_word, shapes, usage, word_descriptor)

__all__ = ["handle", "process"]

_SMEM_TILE_ONLY = ("mn", "k", "dtype", "major", "atom_order", "kind")


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


def _validated(what: str, word: int, kind: Any = None, **ctx: Any) -> Any:
    """``validate_<what>(word, [kind], **ctx)``."""
    if what == "idesc":
        return validate_idesc(word, kind, **ctx)
    return VALIDATORS[what](word, **ctx)


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
    table = shapes()
    desc = request_descriptor(req, "encode")
    if desc is None:
        raise usage("BATCH-KEY-MISSING", "descriptor", None, ", ".join(DESCRIPTORS), "encode needs 'descriptor'")
    if desc == "idesc":
        args = request_args(req, table["encode", "idesc"], "encode idesc")
        word = encode_idesc(**args)
        kind = args["kind"]
        defaults = {name: value for name, value in idesc_defaults(kind).items()
                    if args.get(name) is None} if full else None
        return _encoded(word, 32,
                        lambda: validate_idesc(word, kind, **{k: args[k] for k in _IDESC_CONTEXT if k in args}),
                        "idesc", {"defaults": defaults} if full else None)
    if desc in ("smem", "wgmma_smem"):
        if any(k in req for k in _SMEM_TILE_ONLY):
            shape = table["encode", "smem_tile"]
            for key in ("lbo", "sbo", "base_offset", "lbo_mode"):
                if key in req:
                    raise usage("BATCH-KEY", key, req[key], shape.allowed(),
                                f"the tile form of an smem encode (mn, k, dtype, major) computes {key}; drop it or "
                                "drop the tile keys")
            args = request_args(req, shape, f"encode {desc} (tile form)")
            if desc == "wgmma_smem":
                args["arch"] = args.get("arch") or "sm_90a"  # (another target: LAYOUT-ARCH or the word it reads)
            td = smem_for_tile(**args)
            ctx = {"pattern_start": args.get("pattern_start"),
                   **({"arch": args.get("arch")} if td.descriptor == "smem" else {})}
            report = _validated(td.descriptor, td.word, **ctx)
            d = report.decoded[td.descriptor]
            return True, {**({"result": d, "tile": td} if full else
                             {"word": d.hex, "findings": report.findings}), "_source": lambda: report,
                          "_functions": lambda: td}
        args = request_args(req, table["encode", desc], f"encode {desc}")
        if desc == "wgmma_smem":
            word = encode_wgmma_smem(**args)
            ctx = {"pattern_start": args.get("pattern_start")}
        else:
            word = encode_smem(**args)
            ctx = {"arch": args.get("arch"), "pattern_start": args.get("pattern_start")}
        return _encoded(word, 64, lambda: _validated(desc, word, **ctx), desc, {} if full else None)
    if desc == "taddr":
        args = request_args(req, table["encode", "taddr"], "encode taddr")
        word = encode_taddr(**args)
        ctx = {k: args[k] for k in ("warp", "alloc_columns", "alloc_base") if k in args}
        return _encoded(word, 32, lambda: validate_taddr(word, **ctx), "taddr", {} if full else None)
    args = request_args(req, table["encode", "zcm"], "encode zcm")
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
    table = shapes()
    desc = word_descriptor(req, "decode")
    word = request_word(req, "word")
    if desc == "idesc" and "kind" not in req:
        desc = "idesc*"
    elif desc is None:
        if word is None:
            raise usage("BATCH-KEY-MISSING", "word", None, "an unsigned integer", "decode needs 'word'")
        desc = "word32" if word < 1 << 32 else "smem+zcm"
        if desc == "word32":
            for key in req:
                if key not in table["decode", "word32"].keys and key in table["decode", "smem+zcm"].keys:
                    wide = tuple(d for d in fitting(True) if key in table["decode", d].keys)
                    raise usage("BATCH-KEY", key, req[key], table["decode", "word32"].allowed(),
                                f"{key!r} does not apply to an instruction descriptor or a tensor memory address; a "
                                f"word below 2**32 decodes as one: add {named(wide)}")
            own = {d: [k for k in table["decode", d].keys if k in req and k not in table["decode", o].keys]
                   for d, o in (("idesc", "taddr"), ("taddr", "idesc"))}
            if own["idesc"] and own["taddr"]:
                raise usage("BATCH-KEY", own["taddr"][0], req[own["taddr"][0]], table["decode", "word32"].allowed(),
                            f"{', '.join(own['idesc'])} is an instruction descriptor's context and "
                            f"{', '.join(own['taddr'])} a tensor memory address's: no reading of the word takes both; "
                            "add \"descriptor\"")
    shape = table["decode", desc]
    ctx = request_args(req, shape, "decode" if desc in ("idesc*", "word32", "smem+zcm") else f"decode {desc}",
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
    names = ([*KINDS, "taddr"] if desc == "word32" else list(KINDS) if desc == "idesc*"
             else ["smem", "wgmma_smem", "zcm"])
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
    table = shapes()
    desc = word_descriptor(req, "validate")
    if desc is None:
        word = request_word(req, "word")
        wide = word is not None and word >= 1 << 32
        raise usage("BATCH-DESCRIPTOR", "descriptor", None, ", ".join(d if d != "idesc" else "idesc (with kind)"
                                                                         for d in DESCRIPTORS),
                    f"validate reads one descriptor; a word wider than 32 bits: add {named(fitting(True))}"
                    if wide else
                    "validate reads one descriptor; an instruction descriptor needs \"kind\" (its rules depend on the "
                    f"MMA kind): add \"kind\", or {named(tuple(d for d in fitting(False) if d != 'idesc'))}")
    shape = table["validate", desc]
    ctx = request_args(req, shape, f"validate {desc}", ("op", "id", "descriptor", "word", "kind"))
    word = request_word(req, "word")
    assert word is not None  # "word" is a required key of every validate shape
    report = _validated(desc, word, req["kind"], **ctx) if desc == "idesc" else _validated(desc, word, **ctx)
    return report.ok, {**({"result": report} if full else _brief_report(report)), "_source": lambda: report}


def _check(req: Mapping[str, Any], full: bool) -> tuple[bool, dict[str, Any]]:
    shape = shapes()["check", None]
    args = request_args(req, shape, "check", ("op", "id"))
    for key in shape.words:
        if key in args:
            args[key] = request_word(args, key)
    report = check_mma(**args)
    return report.ok, {**({"result": report} if full else _brief_report(report)), "_source": lambda: report}


_OPS: dict[str, Callable[[Mapping[str, Any], bool], tuple[bool, dict[str, Any]]]] = {
    "encode": _encode, "decode": _decode, "validate": _validate, "check": _check,
}


def process(req: Any, full: bool = False) -> tuple[bool, dict[str, Any], bool]:
    """(ok, response parts (the full or the brief form), internal error) for one parsed request."""
    try:
        if req.__class__ is not dict:
            raise usage("BATCH-JSON", "request", _shown(req), "a JSON object", "a request is one JSON object per line")
        op = req.get("op")
        fn = _OPS.get(op) if op.__class__ is str else None
        if fn is None:
            raise usage("BATCH-OP", "op", op, ", ".join(OPS),
                        "every request names its op" if op is None else "no such op")
        fmt = name = None
        functions: dict[str, Any] | None = None
        if any(key in req for key in _CODE_KEYS):  # the answer's words as source code (descgen.emit)
            req = dict(req)
            fmt, name = req.pop("format", None), req.pop("name", None)
            functions = _functions_options(req)
            if functions is not None and op == "encode" and req.get("descriptor") in ("smem", "wgmma_smem"):
                req.setdefault("start_address", 0)  # (the functions take the address at run time)
            if fmt is None:
                raise usage("BATCH-KEY-MISSING", "format", None, "hex, json, c, cpp, ptx, python",
                            "name, functions and stage_bytes shape the code of format; give format too")
        ok, parts = fn(req, full)
        source = parts.pop("_source", None)
        runtime = parts.pop("_functions", source)
        notes = request_notes(req)
        if notes:  # after the answer's own parts, as the CLI prints them on stderr
            parts["notes"] = notes
        if fmt is not None:
            if source is None:
                raise usage("BATCH-KEY", "format", fmt, "a request about one word or instruction",
                            "format writes one word's code: give the decode a descriptor (and kind)")

            parts["code"] = emit(source(), fmt, name=name) if functions is None else \
                emit_functions(runtime(), fmt, name=name, **functions)
        return ok, parts, False
    except RecursionError as e:  # pragma: no cover - absurdly nested input
        error, internal = error_answer(e)
    except Exception as e:  # errors are data; a bug is reported as one and the run goes on
        error, internal = error_answer(e)
    failed_notes = request_notes(req) if req.__class__ is dict else None
    return False, {"error": error, **({"notes": failed_notes} if failed_notes else {})}, internal


#: The keys that ask for an answer's words as source code: descgen.emit's format and name, and
#: descgen.emit_functions' (the fixed part and the run-time functions) functions and stage_bytes.
_CODE_KEYS = ("format", "name", "functions", "stage_bytes")


def _functions_options(req: dict[str, Any]) -> dict[str, Any] | None:
    """Pop ``functions`` and ``stage_bytes`` from ``req``: None for descgen.emit's constant, else
    descgen.emit_functions' keywords."""
    functions, stage_bytes = req.pop("functions", False), req.pop("stage_bytes", None)
    if functions.__class__ is not bool:
        raise usage("BATCH-KEY", "functions", _shown(functions), "true or false",
                    "functions asks for the word's fixed part and run-time functions instead of a constant")
    if stage_bytes is not None and not functions:
        raise usage("BATCH-KEY", "stage_bytes", _shown(stage_bytes), "with \"functions\": true",
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
    JSON-ready values; :func:`descgen.batch.run` adds ``line``.
    """
    ok, parts, _ = process(request, full)
    out: dict[str, Any] = {}
    if request.__class__ is dict and "id" in request:
        out["id"] = request["id"]
    out["ok"] = ok
    out.update({k: _plain(v) for k, v in parts.items()})
    return out
