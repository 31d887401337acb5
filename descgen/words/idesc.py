"""The 32-bit instruction descriptor (PTX ISA 9.1 §9.7.16.4.2, Tables 42-44): encode, decode,
validate.

Its layout depends on the MMA kind, which is not in the word: ``kind`` is always an argument.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Mapping

from ..model.catalog import catalog
from ..rules.checks import enforce, idesc_findings, idesc_word_findings
from ..model.context import context, no_context
from ..model.engine import Decoded, FieldsRead, Plan, Word, WordInput, as_word
from ..core.errors import EncodeError, Finding
from ..model.facts import kind_facts, major_keys, mma_k, normalize_kind, selector_keys, shape_keys
from ..model.loader import KINDS
from ..core.memo import Memo
from ..model.report import NotChecked, Report
from ..core.types import AccumType, Arch, CtaGroup, ElementType, Kind, Major, ScaleType, ScaleVec

if TYPE_CHECKING:
    from bitstring import Bits

__all__ = ["encode_idesc", "decode_idesc", "decode_fields", "validate_idesc", "idesc_report", "checked_idesc",
           "decode_idesc_all", "consistent_kinds"]


def encode_idesc(
    kind: Kind,
    m: int,
    n: int,
    *,
    atype: ElementType | None = None,
    btype: ElementType | None = None,
    dtype: AccumType | None = None,
    a_major: Major = "k",
    b_major: Major = "k",
    negate_a: bool = False,
    negate_b: bool = False,
    saturate: bool = False,
    sparse: bool = False,
    sparsity_selector: int = 0,
    max_shift: int = 0,
    scale_type: ScaleType | None = None,
    a_sf_id: int = 0,
    b_sf_id: int = 0,
    k: int | None = None,
    cta_group: CtaGroup | None = None,
    ws: bool | None = None,
    sp: bool | None = None,
    scale_vec: ScaleVec | None = None,
    a_tmem: bool | None = None,
    arch: Arch | None = None,
    check: bool = True,
) -> Word:
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
        sparsity_selector: bits 0-1, 0-3 (Table 42 layout only; reserved for the mx kinds); 0
            unless ``sparse`` (E37).
        max_shift: ``.ws`` B-reuse maximum shift: 0, 8, 16 or 32 (bits 30-31, Table 42 only).
        scale_type: ``ue8m0`` or ``ue4m3`` (bit 23, mx kinds only). None: ue8m0 (ue4m3 for
            mxf4nvf4).
        a_sf_id, b_sf_id: scale factor A/B IDs, 0-3 (bits 29-30 / 4-5, mx kinds only). Which
            are legal depends on the scale vector size and K (§9.7.16.10.7.2-3); without
            ``scale_vec``, an ID that no size allows for the kind and K raises.
        k: the MMA's K, optional. For mxf4/mxf4nvf4, ``k=96`` sets bit 31 (dense only); any other
            kind's K is fixed by Table 39 and only that value (or None) is accepted.
        cta_group, ws, sp, scale_vec, a_tmem, arch: the instruction's context, optional (see
            :func:`descgen.validate_idesc`). Without it, M, N and the types must be legal under
            some context (Table 39, Table 50, Table 52); with it, under that one.
        check: when False, values that break a rule but still fit their bits are encoded anyway;
            the errors come back in the result's ``.findings``.

    Every rule :func:`descgen.validate_idesc` checks runs; an error-severity finding raises.

    Returns:
        The descriptor, an unsigned 32-bit integer, as a :class:`descgen.Word`: ``.findings``
        holds what the rules warn or note (empty when clean), exactly as the validator reports it.

    Raises:
        UsageError: unknown kind, or a context value that is not one.
        EncodeError: a value breaks a PTX rule, or an argument is given that the kind's
            layout has no field for (with every finding attached).
    """
    p, absent, ks, combos, implied_dtype = kind_facts(kind)
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
                # Table 39/50/52, the sub-column selectors and the type combinations as sets
                # (descgen.model.facts builds them from the tables): a legal configuration costs four
                # lookups. Anything else goes through the rules, which report it.
                # (cta_group's class is in the key: True == 1 must not find cta_group 1's entry)
                fast = (_FAST.get((kind, cta_group, cta_group.__class__, ws, a_tmem))
                        or _fast(kind, cta_group, ws, a_tmem))
                try:
                    b8 = fast[1].get((atype, a_major, btype, b_major))
                    if (b8 is not None and (m, n, sparse, values["k_dim"], b8) in fast[0]
                            and (sparse, values["k_dim"], sparsity_selector, max_shift, a_sf_id, b_sf_id) in fast[2]
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


#: The encoder's fast path per kind and context as given (:func:`_fast`).
_FAST: Memo[tuple[frozenset[Any], dict[Any, bool], frozenset[Any]]] = Memo("idesc encoder's legal keys", 1 << 10)


def _fast(kind: str, cta_group: Any, ws: Any, a_tmem: Any) -> tuple[frozenset[Any], dict[Any, bool], frozenset[Any]]:
    """The encoder's fast path for one kind and context: :func:`descgen.model.facts.shape_keys`,
    :func:`~descgen.model.facts.major_keys` and :func:`~descgen.model.facts.selector_keys` (a test walks the
    legal space to keep them equal to what the rules decide)."""
    ctx = context(cta_group=cta_group, ws=ws, a_tmem=a_tmem)  # raises on a bad context value
    name = normalize_kind(kind)
    return _FAST.remember((kind, cta_group, cta_group.__class__, ws, a_tmem), (
        shape_keys(name, ctx["cta_group"], ctx["ws"]),
        major_keys(name, ctx["a_tmem"]),
        selector_keys(name, ctx["ws"]),
    ))


def _rules_checked(p: Plan, word: Word, values: dict[str, Any], check: bool, **ctx: Any) -> Word:
    """Run every idesc rule over the encoder's values; raise on an error (see checks.enforce)."""
    assert p.kind is not None  # an idesc plan is a kind's
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
    return catalog()["IDESC-K-VALUE"].finding("k", k, ", ".join(map(str, allowed)),
                                              f"K = {k!r} for {'sparse' if sparse else 'dense'} .kind::{p.kind}")


def decode_fields(word: WordInput, kind: str) -> Decoded:
    """Decode under ``kind`` with the field checks only (no cross-field rules), and the derived
    K and implied dtype. :func:`decode_idesc` adds the rules; :func:`descgen.validate_idesc` the
    context rules too."""
    p, read, derived = _read(word, kind)
    return p.result(read, (), derived)


def _read(word: WordInput, kind: str) -> tuple[Plan, FieldsRead, tuple[tuple[str, Any, str], ...]]:
    """The plan of ``kind``, the word's fields read under it, and the derived values
    :func:`decode_fields` adds to them."""
    p = kind_facts(kind).plan
    read = p.read(word)
    if read.unknown and {"sparse", "k_dim"} & set(read.unknown):  # K is known only when Sparsity and the K bit are
        return p, read, tuple((name, value, "") for name, value in p.layout.implied.items())
    spots = _spots(p)
    sparse = bool(read.fields[spots[0]].raw)
    k96 = spots[1] is not None and read.fields[spots[1]].value == "96"
    return p, read, _derived(p, sparse, k96)


@functools.cache
def _derived(p: Plan, sparse: bool, k96: bool) -> tuple[tuple[str, Any, str], ...]:
    """The derived values of a word of plan ``p``: K (sparsity, Table 44's K bit), the implied ones."""
    assert p.kind is not None  # an idesc plan is a kind's
    found: list[tuple[str, Any, str]] = [("k", mma_k(p.kind, sparse, k96 and not sparse), "elements")]
    return (*found, *((name, value, "") for name, value in p.layout.implied.items()))


@functools.cache
def _spots(p: Plan) -> tuple[int, int | None]:
    """The positions of the sparse and k_dim fields among the plan's decoded fields (k_dim: None
    when the layout has none)."""
    names = [f.name for f in p.layout.fields]
    return names.index("sparse"), names.index("k_dim") if "k_dim" in names else None


def decode_idesc(word: WordInput, kind: Kind) -> Decoded:
    """Decode a 32-bit instruction descriptor under ``kind`` (Tables 42-44).

    Total: every unsigned 32-bit integer decodes. Reserved bits set, unknown type codes, and every
    rule that needs no instruction context come back as ``.findings``: M and N that no Table 39
    row allows, type combinations Table 39 lacks, MN-major 4-/6-bit types (Table 52), Table 50's
    N for transposed 8-bit B, K = 96 with sparsity. ``.derived`` holds the MMA's K (Table 39;
    Table 44 bit 31) and, for the block-scaled kinds, the implied dtype.
    :func:`descgen.validate_idesc` adds the rules that need context.

    ``word``: an unsigned 32-bit integer, a :class:`descgen.KnownBits`, its 4 bytes as they lie in
    memory (little-endian: ``bytes.fromhex("10004008")`` is ``0x08400010``) or a
    ``bitstring.Bits`` of length 32 (MSB first; ``Decoded.bits`` gives one back).

    Raises:
        UsageError: unknown kind.
        WordError: ``word`` is negative or wider than 32 bits, or bytes / Bits of another length
            (``IDESC-WORD-RANGE``).
    """
    return checked_idesc(word, kind, no_context())[0]


def validate_idesc(word: WordInput, kind: Kind, *, cta_group: CtaGroup | None = None, ws: bool | None = None,
                   sp: bool | None = None, scale_vec: ScaleVec | None = None, a_tmem: bool | None = None,
                   arch: Arch | None = None) -> Report:
    """Check a 32-bit instruction descriptor against every rule that applies to it.

    Args:
        word: the descriptor (unsigned 32-bit), or its 4 bytes (little-endian) or a Bits of
            length 32, as :func:`decode_idesc` takes it.
        kind: the MMA kind (``f16``, ``kind::f16``...); it selects Table 42, 43 or 44.
        cta_group: 1 or 2 (Table 39 rows; Table 50).
        ws: the instruction is ``tcgen05.mma.ws`` (Table 39 rows; max shift).
        sp: the instruction is ``tcgen05.mma.sp`` (must match the Sparsity bit).
        scale_vec: ``"1X"``, ``"2X"``, ``"4X"``, ``"block16"`` or ``"block32"`` (Tables 54/55,
            scale factor IDs §9.7.16.10.7.2-3).
        a_tmem: A is read from tensor memory (Table 51: K-major only).
        arch: the target, e.g. ``"sm_100a"`` (Target ISA notes).

    Context left as None is not guessed: rules that need it are listed in ``.not_checked``.

    Returns:
        A :class:`descgen.Report`: the findings (every check runs), the rules not checked and the
        decoded word (``report.decoded["idesc"]``).

    Raises:
        UsageError: unknown kind, or a context value that is not one.
        WordError: ``word`` is not an unsigned 32-bit integer (nor 4 bytes, nor a Bits of length 32).
    """
    return idesc_report(word, kind, context(cta_group=cta_group, ws=ws, sp=sp, scale_vec=scale_vec, a_tmem=a_tmem,
                                            arch=arch))


def idesc_report(word: WordInput, kind: str, ctx: Mapping[str, Any]) -> Report:
    """:func:`validate_idesc` under a context normalized already (:func:`descgen.model.context.context`):
    for one word read under several kinds, one normalization."""
    d, skipped = checked_idesc(word, kind, ctx)
    return Report(d.findings, skipped, {"idesc": d}, ctx)


def checked_idesc(word: WordInput, kind: str, ctx: Mapping[str, Any]) -> tuple[Decoded, tuple[NotChecked, ...]]:
    """:func:`validate_idesc`'s work under a normalized context (:func:`descgen.model.context.context`):
    the word decoded once with every finding, and the rules not checked."""
    p, read, derived = _read(word, kind)
    assert p.kind is not None  # an idesc plan is a kind's
    if read.unknown:
        found, skipped = idesc_findings(p.kind, read.values, ctx, read.unknown)
    else:
        found, skipped = idesc_word_findings(p.kind, read.values, ctx)
    return p.result(read, found, derived), tuple(skipped)


def decode_idesc_all(word: int | bytes | bytearray | memoryview | Bits) -> dict[Kind, Decoded]:
    """Decode ``word`` under every kind, in PTX's kind order (``word`` as :func:`decode_idesc`
    takes it, its bytes or Bits read once).

    Raises:
        WordError: not an unsigned 32-bit integer, 4 bytes or a Bits of length 32.
    """
    word = as_word(word, 32, "idesc")
    return {kind: decode_idesc(word, kind) for kind in KINDS}


def consistent_kinds(word: int | bytes | bytearray | memoryview | Bits) -> list[Kind]:
    """The kinds under which ``word`` decodes with no error finding."""
    return [kind for kind, d in decode_idesc_all(word).items() if d.ok]

