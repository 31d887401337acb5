"""One ``tcgen05.mma`` instruction checked as a whole: :func:`check_mma`; one Hopper
``wgmma.mma_async`` (``sm_90a``, §9.7.15): :func:`check_wgmma`. Both decode and check their shared
memory descriptors the same way (:func:`_check_operands`: findings named ``a_desc.FIELD``, partly
known words, rules not checked at run time) and then run their instruction rules.

Each word's own rules run (those of :func:`descgen.validate_idesc`, :func:`descgen.validate_smem`,
:func:`descgen.validate_zcm`; each word decoded once, each rule run once), then the rules that tie
the words together (``applies = "mma"`` in ``tables/rules.toml``): Table 52's swizzle against the idesc's types and
major-ness, absolute
LBO mode only K-major, the K-major swizzled LBO that is ignored, and the zero-column mask limits
for the idesc's M.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ..model.catalog import usage_error
from ..rules.checks import Facts, mma_findings, partial, wgmma_findings
from ..model.context import context
from ..model.engine import Decoded, KnownBits
from ..core.errors import Finding
from ..model.facts import normalize_kind
from .idesc import checked_idesc
from ..model.report import NotChecked, Report
from .smem import checked_smem
from ..core.types import Arch, CtaGroup, Kind, ScaleVec
from ..model.wgmma_facts import wgmma_table
from .wgmma_smem import checked_wgmma_smem
from .zcm import checked_zcm

__all__ = ["check_mma", "check_wgmma"]


def _prefixed(role: str, findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """The findings about the word ``role``, their field named with it (``a_desc.swizzle``)."""
    return tuple(Finding(f.code, f.severity, f"{role}.{f.field}", f.value, f.allowed, f.rule, f.source)
                 for f in findings)


def _role_named(role: str, skipped: Iterable[NotChecked]) -> list[NotChecked]:
    """A word's rules not checked, the run-time fields named with the word (``a_desc.start_address``)."""
    return [n if n.why == "context"
            else NotChecked(n.code, tuple(f"{role}.{m}" for m in n.missing), n.rule, n.source, n.why)
            for n in skipped]


_Checker = Callable[[Any, Mapping[str, Any]], tuple[Decoded, tuple[NotChecked, ...]]]


def _check_operands(checker: _Checker, base_ctx: Mapping[str, Any],
                    words: Iterable[tuple[int | KnownBits | None, int | None]], findings: list[Finding],
                    skipped: list[NotChecked], decoded: dict[str, Decoded], facts: Facts) -> None:
    """A's and B's shared memory descriptors (None: not read through one), each decoded and checked
    once by ``checker`` (``checked_smem``, ``checked_wgmma_smem``) under ``base_ctx`` with the
    operand's pattern start: its findings and rules not checked named with the operand
    (``a_desc.swizzle``, ``b_desc.start_address``), its decode in ``decoded``, its values in
    ``facts`` for the instruction rules (:func:`descgen.rules.checks.partial`: a partly known word's
    run-time fields are not read). Appends to the lists and dicts given."""
    for role, (word, start) in zip(("a_desc", "b_desc"), words):
        if word is None:
            continue
        sub_ctx = (base_ctx if start is None
                   else {**base_ctx, "pattern_start": context(pattern_start=start)["pattern_start"]})
        d, sub_skipped = checker(word, sub_ctx)
        decoded[role] = d
        facts[role] = partial(d.values(), d.unknown)
        findings += _prefixed(role, d.findings)
        skipped += [n for n in _role_named(role, sub_skipped) if n not in skipped]


def check_mma(*, idesc: int | KnownBits, kind: Kind, b_desc: int | KnownBits, a_desc: int | KnownBits | None = None,
              zcm: int | KnownBits | None = None, a_tmem: bool | None = None, cta_group: CtaGroup | None = None,
              ws: bool | None = None, sp: bool | None = None, scale_vec: ScaleVec | None = None,
              arch: Arch | None = None, a_pattern_start: int | None = None,
              b_pattern_start: int | None = None, smem_size: int | None = None) -> Report:
    """Check one ``tcgen05.mma`` instruction as a whole: each word's rules plus the rules that tie
    them together (Table 52 swizzle vs the idesc's major-ness and types, absolute LBO only K-major,
    the K-major swizzled LBO that is ignored, the zero-column mask limits for the idesc's M).

    Args:
        idesc: the 32-bit instruction descriptor. kind: the MMA kind.
        b_desc: B's 64-bit shared memory descriptor.
        a_desc: A's shared memory descriptor, or None with ``a_tmem=True`` (A in tensor memory).
        zcm: the 64-bit zero-column mask descriptor (``.ws`` only), if any.
        a_tmem, cta_group, ws, sp, scale_vec, arch: the instruction's context, as
            :func:`validate_idesc`. Give ``a_desc`` or ``a_tmem=True``.
        a_pattern_start, b_pattern_start: where A's / B's swizzle pattern starts, for the exact
            Table 41 base offset check of each descriptor (:func:`validate_smem`).
        smem_size: the CTA's shared memory in bytes (``%aggr_smem_size``), for the check that each
            descriptor's first atom lies inside it (``SMEM-OUTSIDE-CTA``, E50).

    Findings from a shared memory or zcm word name their field as ``a_desc.swizzle``,
    ``b_desc.lbo``, ``zcm.column_shift``.

    A word a compiler fixes only in part (the start address known at run time only, say) is
    given as :class:`descgen.model.engine.KnownBits`: every field whose bits are all known is checked,
    and every rule whose inputs are known runs, cross-word rules included; a rule that reads an
    unknown field is listed in ``.not_checked`` with ``why="run-time"``. ``KnownBits(0, 0)`` is
    a word known at run time only.

    Returns:
        A :class:`descgen.Report`; ``.decoded`` has ``idesc``, ``a_desc``, ``b_desc``, ``zcm``.

    Raises:
        UsageError: neither or both of ``a_desc`` and ``a_tmem=True``; bad context; unknown kind.
        WordError: a word of the wrong width.
    """
    if a_tmem is None and a_desc is not None:
        a_tmem = False
    if (a_desc is None) != bool(a_tmem):
        raise usage_error("MMA-A-OPERAND", "a_desc", a_desc, "an A descriptor, or a_tmem=True without one",
                          "both given" if a_tmem else "neither given")
    kind = normalize_kind(kind)
    # Each word is decoded once and its rules run once, under the context normalized once
    # (what validate_idesc / validate_smem / validate_zcm would each do again).
    ctx = context(cta_group=cta_group, ws=ws, sp=sp, scale_vec=scale_vec, a_tmem=a_tmem, arch=arch)
    di, skipped_idesc = checked_idesc(idesc, kind, ctx)
    findings = list(di.findings)
    skipped = list(skipped_idesc)
    decoded: dict[str, Decoded] = {"idesc": di}
    facts: Facts = {"idesc": partial({**di.values(), "kind": kind}, di.unknown)}
    smem_ctx = context(arch=arch, smem_size=smem_size)  # validate_smem's context
    _check_operands(checked_smem, smem_ctx, ((a_desc, a_pattern_start), (b_desc, b_pattern_start)),
                    findings, skipped, decoded, facts)
    if zcm is not None:
        d, sub_skipped = checked_zcm(zcm, context(m=di.value("m"), n=di.value("n"), ws=ws))
        decoded["zcm"] = d
        findings += _prefixed("zcm", d.findings)
        skipped += _role_named("zcm", sub_skipped)
    found, more = mma_findings(facts, ctx)
    return Report(tuple(findings + found), (*skipped, *more), decoded, ctx)


def check_wgmma(*, atype: str, dtype: str, n: int, b_desc: int | KnownBits, a_desc: int | KnownBits | None = None,
                btype: str | None = None, m: int = 64, k: int | None = None, sp: bool = False,
                trans_a: int | None = None, trans_b: int | None = None, scale_a: int | None = None,
                scale_b: int | None = None, scale_d: int | None = None, sp_sel: int | None = None,
                satfinite: bool = False, a_pattern_start: int | None = None,
                b_pattern_start: int | None = None, smem_size: int | None = None) -> Report:
    """Check one Hopper ``wgmma.mma_async{.sp}`` instruction (``sm_90a``, PTX ISA 9.1 §9.7.15) as a
    whole: each shared memory descriptor's own rules (§9.7.15.5.1.2.2, :func:`validate_wgmma_smem`)
    plus the instruction's (``applies = "wgmma"``): the shape for the types (§9.7.15.2), the type
    combination (§9.7.15.3), the immediates, and the descriptors against the major-ness the
    transpose immediates give.

    Args:
        atype, btype, dtype: ``.atype``, ``.btype`` (default: ``atype``), ``.dtype`` as PTX names
            them (``f16``, ``bf16``, ``tf32``, ``e4m3``, ``e5m2``, ``s8``, ``u8``, ``b1``; D ``f16``,
            ``f32``, ``s32``).
        n: N of the shape ``.m64nNkK``, in columns. m: M (64 is the only one). k: K, in elements
            (default: the types' K, doubled with ``sp``).
        b_desc: B's 64-bit descriptor. a_desc: A's 64-bit descriptor, or None when A is read from
            registers (the ``a`` operand form).
        sp: ``wgmma.mma_async.sp`` (A structured-sparse, K doubled). sp_sel: its ``sp-sel`` immediate.
        trans_a, trans_b: ``imm-trans-a`` / ``imm-trans-b`` (0: K-major, 1: transposed, MN-major);
            None: the form has no such operand.
        scale_a, scale_b: ``imm-scale-a`` / ``imm-scale-b`` (1, or -1 to negate); None: no operand.
        scale_d: ``scale-d`` as an immediate (0: D = A*B, 1: D = A*B+D); None: a predicate.
        satfinite: ``.satfinite`` given (integer forms).
        a_pattern_start, b_pattern_start: where A's / B's swizzle pattern starts (bytes), for the
            exact base offset check of each descriptor.
        smem_size: the CTA's shared memory in bytes (``%aggr_smem_size``): each descriptor's first
            atom must lie inside it (``SMEM-OUTSIDE-CTA``, E50).

    A descriptor a compiler fixes only in part is given as :class:`descgen.KnownBits`: its known
    fields are checked, and a rule that reads an unknown one is in ``.not_checked`` with
    ``why="run-time"``, as for :func:`check_mma`. Findings about a descriptor name their field as
    ``a_desc.swizzle``, ``b_desc.lbo``.

    Returns:
        A :class:`descgen.Report`; ``.decoded`` has ``a_desc`` (when given) and ``b_desc``;
        ``.context`` the instruction's shape, types and immediates.

    Raises:
        WordError: a descriptor of the wrong width. UsageError: a bad pattern start.
    """
    atype, dtype = atype.strip().lower(), dtype.strip().lower()
    btype = atype if btype is None else btype.strip().lower()
    if k is None:
        row = wgmma_table().row_of(atype, btype)
        k = row.k_for(sp) if row is not None else None
    inst: dict[str, Any] = {"atype": atype, "btype": btype, "dtype": dtype, "m": m, "n": n, "k": k, "sp": sp,
                            "trans_a": trans_a, "trans_b": trans_b, "scale_a": scale_a, "scale_b": scale_b,
                            "scale_d": scale_d, "sp_sel": sp_sel, "satfinite": satfinite,
                            "a_in_registers": a_desc is None}
    findings: list[Finding] = []
    skipped: list[NotChecked] = []
    decoded: dict[str, Decoded] = {}
    facts: Facts = dict(inst)
    _check_operands(checked_wgmma_smem, context(smem_size=smem_size),
                    ((a_desc, a_pattern_start), (b_desc, b_pattern_start)),
                    findings, skipped, decoded, facts)
    found, more = wgmma_findings(facts)
    return Report(tuple(findings + found), (*skipped, *more), decoded, inst)
