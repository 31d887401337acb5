"""The 32-bit instruction descriptor (PTX ISA 9.1 §9.7.16.4.2, Tables 42-44).

Its layout depends on the MMA kind, which is not in the word: ``kind`` is always an argument.
"""

from __future__ import annotations

from typing import Any

from .engine import Decoded, Plan, Word, plan
from .errors import EncodeError, Finding, UsageError
from .loader import KINDS, shapes

__all__ = ["KIND_LAYOUTS", "encode_idesc", "decode_idesc", "decode_fields", "decode_idesc_all", "consistent_kinds", "normalize_kind", "mma_k", "type_names", "idesc_defaults"]

#: Which PTX table lays out the instruction descriptor for each kind.
KIND_LAYOUTS: dict[str, str] = {
    "tf32": "idesc_dense",  # Table 42
    "f16": "idesc_dense",
    "f8f6f4": "idesc_dense",
    "i8": "idesc_dense",
    "mxf8f6f4": "idesc_mxf8f6f4",  # Table 43
    "mxf4": "idesc_mxf4",  # Table 44
    "mxf4nvf4": "idesc_mxf4",
}

# API arguments some layouts do not have, with the value that means "not asked for". A layout
# that lacks the field accepts only that value (or, for dtype, the value the kind implies).
_NEUTRAL: dict[str, Any] = {
    "dtype": None,
    "saturate": False,
    "sparsity_selector": 0,
    "max_shift": 0,
    "scale_type": None,
    "a_sf_id": 0,
    "b_sf_id": 0,
}

_Compiled = tuple[Plan, tuple[tuple[str, tuple[Any, ...]], ...], tuple[int, ...], frozenset[tuple[Any, ...]], Any]
_PLANS: dict[str, _Compiled] = {}


def normalize_kind(kind: str) -> str:
    """Accept ``f16``, ``kind::f16`` or ``.kind::f16``; raise :class:`UsageError` on an unknown kind."""
    if isinstance(kind, str):
        k = kind.strip().lower().removeprefix(".").removeprefix("kind::")
        if k in KIND_LAYOUTS:
            return k
    raise UsageError((Finding("IDESC-KIND", "error", "kind", kind, ", ".join(KINDS),
                              "the MMA kind selects the instruction descriptor layout (Tables 42-44)",
                              "§9.7.16.4.2, Tables 42-44"),))


def _compiled(kind: str) -> _Compiled:
    """Per kind, once: the plan, the arguments its layout lacks, K (dense, sparse) and Table 39's
    legal (atype, btype, dtype, scale type) combinations."""
    hit = _PLANS.get(kind)
    if hit is None:
        kind = normalize_kind(kind)
        p = plan(KIND_LAYOUTS[kind], kind)
        names = {f.name for f in p.layout.fields}
        absent = tuple(
            (arg, (neutral, p.layout.implied[arg]) if arg in p.layout.implied else (neutral,))
            for arg, neutral in _NEUTRAL.items()
            if arg not in names
        )
        table = shapes()
        ks = table.k_values(kind, False)[:1] + table.k_values(kind, True)[:1]
        combos = frozenset(
            (a, b, row["dtype"], scale)
            for row in table.types
            if row["kind"] == kind
            for a in row["ab"]
            for b in row["ab"]
            for scale in row.get("scale", [None])
        )
        hit = _PLANS[kind] = (p, absent, ks, combos, p.layout.implied.get("dtype"))
    return hit


def type_names(field: str) -> tuple[str, ...]:
    """Every member name of an idesc enum field (``atype``, ``btype``, ``dtype``, ``scale_type``)
    over all kinds, in kind order then code order, from the tables."""
    names: dict[str, None] = {}
    for kind in KINDS:
        f = _compiled(kind)[0].layout.by_name.get(field)
        if f is not None:
            names.update(dict.fromkeys(f.domain(kind).members()))
    return tuple(names)


def idesc_defaults(kind: str) -> dict[str, str]:
    """The types descgen fills in for ``kind`` when the caller names none (``[defaults]`` in the
    tables), plus what the kind implies but the word does not hold (dtype f32 for the mx kinds).

    Raises:
        UsageError: unknown kind.
    """
    p = _compiled(kind)[0]
    return {**p.layout.implied, **p.defaults}


def mma_k(kind: str, sparse: bool, k96: bool = False) -> int:
    """The MMA's K for ``kind`` and sparsity (Table 39); ``k96`` is Table 44's K bit."""
    if k96:
        return 96
    return _compiled(kind)[2][1 if sparse else 0]


def encode_idesc(
    kind: str,
    m: int,
    n: int,
    *,
    atype: str | None = None,
    btype: str | None = None,
    dtype: str | None = None,
    a_major: str = "k",
    b_major: str = "k",
    negate_a: bool = False,
    negate_b: bool = False,
    saturate: bool = False,
    sparse: bool = False,
    sparsity_selector: int = 0,
    max_shift: int = 0,
    scale_type: str | None = None,
    a_sf_id: int = 0,
    b_sf_id: int = 0,
    k: int | None = None,
    cta_group: int | None = None,
    ws: bool | None = None,
    sp: bool | None = None,
    scale_vec: str | None = None,
    a_tmem: bool | None = None,
    arch: str | None = None,
    check: bool = True,
) -> int:
    """Encode a 32-bit ``tcgen05.mma`` instruction descriptor.

    Args:
        kind: ``tf32``, ``f16``, ``f8f6f4``, ``i8`` (Table 42), ``mxf8f6f4`` (Table 43),
            ``mxf4`` or ``mxf4nvf4`` (Table 44); ``.kind::`` prefixes are accepted.
        m: M, rows of A and D, as the instruction states it (for ``cta_group::2``, the pair's M).
            Stored as M >> 4 (bits 24-28, Table 42) or M >> 7 (bits 27-28, Tables 43/44).
        n: N, columns of B and D; stored as N >> 3 in bits 17-22.
        atype, btype: A/B element types in PTX spelling (``f16``, ``bf16``, ``tf32``, ``e4m3``,
            ``e5m2``, ``e2m3``, ``e3m2``, ``e2m1``, ``s8``, ``u8``). None: the kind's default
            (f16: f16; tf32: tf32; f8f6f4 and mxf8f6f4: e4m3; i8: s8; mxf4, mxf4nvf4: e2m1).
        dtype: D type (``f16``, ``f32``, ``s32``); None: f32 (s32 for i8). The block-scaled
            kinds have no dtype field; D is f32 and only None or ``"f32"`` is accepted.
        a_major, b_major: ``"k"`` or ``"mn"`` (MN-major = the Transpose A/B bit, bits 15/16).
        negate_a, negate_b: the Negate A/B bits (13/14); not for i8 (Table 49).
        saturate: bit 3, i8 only.
        sparse: bit 2 (``tcgen05.mma.sp``).
        sparsity_selector: bits 0-1, 0-3 (Table 42 layout only; reserved for the mx kinds).
        max_shift: ``.ws`` B-reuse maximum shift: 0, 8, 16 or 32 (bits 30-31, Table 42 only).
        scale_type: ``ue8m0`` or ``ue4m3`` (bit 23, mx kinds only). None: ue8m0 (ue4m3 for
            mxf4nvf4).
        a_sf_id, b_sf_id: scale factor A/B IDs, 0-3 (bits 29-30 / 4-5, mx kinds only).
        k: the MMA's K, optional. For mxf4/mxf4nvf4, ``k=96`` sets bit 31 (dense only); any other
            kind's K is fixed by Table 39 and only that value (or None) is accepted.
        cta_group, ws, sp, scale_vec, a_tmem, arch: the instruction's context, optional (see
            :func:`descgen.validate_idesc`). Without it, M, N and the types must be legal under
            some context (Table 39, Table 50, Table 52); with it, under that one.
        check: when False, values that break a rule but still fit their bits are encoded anyway;
            the result is a :class:`descgen.Word` (an int) with the findings in ``.findings``.

    Every rule :func:`descgen.validate_idesc` checks runs; an error-severity finding raises.

    Returns:
        The descriptor as an unsigned 32-bit integer.

    Raises:
        UsageError: unknown kind, or a context value that is not one.
        EncodeError: a value breaks a PTX rule, or an argument is given that the kind's
            layout has no field for (with every finding attached).
    """
    p, absent, ks, combos, implied_dtype = _PLANS.get(kind) or _compiled(kind)
    d = p.defaults
    if atype is None:
        atype = d["atype"]
    if btype is None:
        btype = d["btype"]
    if scale_type is None:
        scale_type = d.get("scale_type")
    values = {
        "m": m,
        "n": n,
        "atype": atype,
        "btype": btype,
        "dtype": d.get("dtype") if dtype is None else dtype,
        "a_major": a_major,
        "b_major": b_major,
        "negate_a": negate_a,
        "negate_b": negate_b,
        "saturate": saturate,
        "sparse": sparse,
        "sparsity_selector": sparsity_selector,
        "max_shift": max_shift,
        "scale_type": scale_type,
        "a_sf_id": a_sf_id,
        "b_sf_id": b_sf_id,
        "k_dim": "64/128" if k is None else _k_member(p, k, sparse, ks),
    }
    for name, allowed in absent:
        if values[name] not in allowed:
            break
    else:
        if values["k_dim"] is not None:
            word = p.encode(values, check=check)
            if sp is None and scale_vec is None and arch is None:
                # Table 39/50/52 and the type combinations as sets (descgen.validate builds them
                # from the tables): a legal configuration costs three lookups.
                # (cta_group's class is in the key: True == 1 must not find cta_group 1's entry)
                fast = _FAST.get((kind, cta_group, cta_group.__class__, ws, a_tmem)) or _fast(kind, cta_group, ws, a_tmem)
                try:
                    b8 = fast[1].get((atype, a_major, btype, b_major))
                    if (b8 is not None and (m, n, sparse, values["k_dim"], b8) in fast[0]
                            and (atype, btype, values["dtype"] or implied_dtype, scale_type) in combos):
                        return word
                except TypeError:  # unhashable: the field checks have named it
                    pass
            return _rules_checked(p, word, values, check, cta_group=cta_group, ws=ws, sp=sp, scale_vec=scale_vec,
                                  a_tmem=a_tmem, arch=arch)
    # Values with no bits to hold them (a field the kind lacks, a K it cannot have) always raise.
    problems = [_absent(p, name, values[name], allowed) for name, allowed in absent if values[name] not in allowed]
    if values["k_dim"] is None:
        problems.append(_bad_k(p, k, sparse, ks))
    try:  # report the field checks' findings too
        p.encode(values, check=check)
    except EncodeError as err:
        problems += err.findings
    raise EncodeError(problems, p.context)


_FAST: dict[tuple[Any, ...], tuple[frozenset[Any], dict[Any, bool]]] = {}


def _fast(kind: str, cta_group: Any, ws: Any, a_tmem: Any) -> tuple[frozenset[Any], dict[Any, bool]]:
    from .rules import context
    from .validate import major_keys, shape_keys

    ctx = context(cta_group=cta_group, ws=ws, a_tmem=a_tmem)  # raises on a bad context value
    hit = _FAST[(kind, cta_group, cta_group.__class__, ws, a_tmem)] = (
        shape_keys(normalize_kind(kind), ctx["cta_group"], ctx["ws"]),
        major_keys(normalize_kind(kind), ctx["a_tmem"]),
    )
    return hit


def _rules_checked(p: Plan, word: int, values: dict[str, Any], check: bool, **ctx: Any) -> int:
    """Run every idesc rule over the encoder's values; raise on an error (see validate.enforce)."""
    from .rules import context
    from .validate import enforce, idesc_findings

    return enforce(word, idesc_findings(p.kind, values, context(**ctx))[0], check, p.context)


def _k_member(p: Plan, k: Any, sparse: bool, ks: tuple[int, ...]) -> str | None:
    """Table 44's K bit as a member name; None when ``k`` is not legal for the kind and sparsity."""
    if k is None or (k == ks[1 if sparse else 0] and not isinstance(k, bool)):
        return "64/128"
    if k == 96 and not sparse and "k_dim" in p.layout.by_name:
        return "96"
    return None


def _absent(p: Plan, name: str, value: Any, allowed: tuple[Any, ...]) -> Finding:
    shown = ", ".join("none" if a is None else str(a) for a in allowed)
    return Finding(f"IDESC-{name.upper().replace('_', '-')}-ABSENT", "error", name, value, shown,
                   f".kind::{p.kind} has no {name} field ({p.layout.source.split(', ')[-1]})", p.layout.source)


def _bad_k(p: Plan, k: Any, sparse: bool, ks: tuple[int, ...]) -> Finding:
    allowed = [ks[1 if sparse else 0]] + ([96] if "k_dim" in p.layout.by_name and not sparse else [])
    return Finding("IDESC-K-VALUE", "error", "k", k, ", ".join(map(str, allowed)),
                   f"K is fixed by .kind::{p.kind} and sparsity ({'sparse' if sparse else 'dense'}); "
                   "only .kind::mxf4/.kind::mxf4nvf4 dense take K = 96 (sm_103a)",
                   "Table 39; Table 44, bit 31")


def decode_fields(word: int, kind: str) -> Decoded:
    """Decode under ``kind`` with the field checks only (no cross-field rules), and the derived
    K and implied dtype. :func:`decode_idesc` adds the rules; :func:`descgen.validate_idesc` the
    context rules too."""
    p = _compiled(kind)[0]
    result = p.decode(word)
    sparse = bool(result["sparse"].raw)
    k96 = "k_dim" in p.layout.by_name and result["k_dim"].value == "96"
    derived: list[tuple[str, Any, str]] = [("k", mma_k(p.kind, sparse, k96 and not sparse), "elements")]
    derived += [(name, value, "") for name, value in p.layout.implied.items()]
    return result.extended((), tuple(derived))


def decode_idesc(word: int, kind: str) -> Decoded:
    """Decode a 32-bit instruction descriptor under ``kind`` (Tables 42-44).

    Total: every unsigned 32-bit integer decodes. Reserved bits set, unknown type codes, and every
    rule that needs no instruction context come back as ``.findings``: M and N that no Table 39
    row allows, type combinations Table 39 lacks, MN-major 4-/6-bit types (Table 52), Table 50's
    N for transposed 8-bit B, K = 96 with sparsity. ``.derived`` holds the MMA's K (Table 39;
    Table 44 bit 31) and, for the block-scaled kinds, the implied dtype.
    :func:`descgen.validate_idesc` adds the rules that need context.

    Raises:
        UsageError: unknown kind.
        WordError: ``word`` is negative or wider than 32 bits.
    """
    from .validate import word_findings

    d = decode_fields(word, kind)
    return d.extended(tuple(word_findings(d.kind, d.values())), d.derived)


def decode_idesc_all(word: int) -> dict[str, Decoded]:
    """Decode ``word`` under every kind, in PTX's kind order."""
    return {kind: decode_idesc(word, kind) for kind in KINDS}


def consistent_kinds(word: int) -> list[str]:
    """The kinds under which ``word`` decodes with no error finding."""
    return [kind for kind, d in decode_idesc_all(word).items() if d.ok]

