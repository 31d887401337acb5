"""A scanned instruction's opcode and operands, read into typed records: the qualifiers of a
``tcgen05.mma`` (§9.7.16.10.9.1-4: :class:`MmaQualifiers`) and the shape of its operand list
(:class:`MmaOperands`), of a ``tcgen05.cp`` (§9.7.16.9.2: :class:`CpQualifiers`) and of a Hopper
``wgmma.mma_async`` with its immediates (§9.7.15.5.2: :class:`WgmmaQualifiers`).

Each ``parse_*`` function gives its record, or a :class:`Malformed` saying why the statement is no
form of the instruction's syntax (``PTX-MALFORMED``, reported by :mod:`descgen.ptx.syntax_rules`).
What the forms allow together (``.ashift`` needs A in tensor memory...) is not checked here: those
are the ``PTX-*`` rules of :mod:`descgen.ptx.syntax_rules`.

The records read as mappings too (``q["kind"]``, ``dict(q)``: :class:`QualifierRecord`), in the
order and with the keys :attr:`descgen.ptx.results.ScanInstruction.qualifiers` has always had.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Mapping, Union, cast

from ..model.catalog import constraints
from ..model.loader import KINDS
from ..core.types import Kind
from ..model.wgmma_facts import parse_wgmma_shape, wgmma_table
from .lexer import parse_int, split_operands

__all__ = ["QualifierRecord", "MmaQualifiers", "MmaOperands", "CpQualifiers", "WgmmaQualifiers", "Qualifiers",
           "Malformed", "parse_mma_qualifiers", "parse_mma_operands", "parse_cp", "parse_wgmma_qualifiers",
           "parse_wgmma_operands", "MX_KINDS", "DEFAULT_SCALE_VEC", "LANE_VECTOR"]

#: The block-scaled kinds (``.kind::mxf8f6f4``...): they need ``.block_scale``.
MX_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
#: E35: the scale vector size when .scale_vectorsize is omitted (§9.7.16.10.9.1: .kind::mxf4
#: defaults to .block32; .kind::mxf4nvf4 must name one; .kind::mxf8f6f4 unstated: ptxas 13.0 takes
#: .block32, its only size besides the alias .scale_vec::1X).
DEFAULT_SCALE_VEC = {"mxf8f6f4": "block32", "mxf4": "block32"}
#: §9.7.16.10.9.1 (disable-output-lane): the vector has 4 elements for cta_group::1, 8 for ::2.
LANE_VECTOR = {1: 4, 2: 8}
_CP_SRC = ("b6x16_p32", "b4x16_p64")
_CP_DST = ("b8x16",)
#: The tcgen05.mma qualifiers that are flags (present or not).
_MMA_FLAGS = ("ws", "sp", "block_scale", "ashift")


@dataclass(frozen=True, slots=True)
class Malformed:
    """Why a statement is no form of its instruction's syntax (``PTX-MALFORMED``).

    Attributes:
        subject: the instruction as the finding names it (``tcgen05.mma``, ``wgmma.mma_async.sp``).
        what: what is wrong (``no .kind qualifier``).
    """

    subject: str
    what: str


class QualifierRecord(Mapping[str, Any]):
    """A frozen record of qualifiers that reads as a read-only mapping as well: its keys are its
    attributes in order, less those of :attr:`OPTIONAL` that are None (absent from the form)."""

    __slots__ = ()
    #: Attributes left out of the mapping while None: the form written has none.
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    #: The attributes in order (each subclass is a dataclass: its fields).
    __match_args__: ClassVar[tuple[str, ...]]

    def __getitem__(self, key: str) -> Any:
        if key in self.__match_args__:
            value = getattr(self, key)
            if value is not None or key not in self.OPTIONAL:
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        optional = self.OPTIONAL
        return iter([k for k in self.__match_args__ if k not in optional or getattr(self, k) is not None])

    def __len__(self) -> int:
        return len(list(iter(self)))

    def as_dict(self) -> dict[str, Any]:
        """``dict(self)``, in one pass."""
        optional = self.OPTIONAL
        if not optional:
            return {k: getattr(self, k) for k in self.__match_args__}
        return {k: v for k in self.__match_args__ if (v := getattr(self, k)) is not None or k not in optional}


@dataclass(frozen=True, slots=True)
class MmaQualifiers(QualifierRecord):
    """A ``tcgen05.mma``'s qualifiers (§9.7.16.10.9.1-4).

    Attributes:
        kind: ``.kind::KIND``. cta_group: 1 or 2. ws, sp, block_scale, ashift: whether written.
        scale_vec: the scale vector size as written (``2X``, ``block16``...), or None.
        scale_vec_used: the size the rules run with: as written, else E35's default for a
            ``.block_scale`` kind (None without ``.block_scale``).
        collector: ``a::fill``, ``b2::use``... or None.
        a_tmem: whether A is in tensor memory (``[a-tmem]``; read from the operands, None before).
    """

    kind: Kind
    cta_group: int
    ws: bool = False
    sp: bool = False
    block_scale: bool = False
    scale_vec: str | None = None
    scale_vec_used: str | None = None
    collector: str | None = None
    ashift: bool = False
    a_tmem: bool | None = None

    @property
    def name(self) -> str:
        """``tcgen05.mma``, ``tcgen05.mma.ws``, ``tcgen05.mma.sp``, ``tcgen05.mma.ws.sp``."""
        return "tcgen05.mma" + ".ws" * self.ws + ".sp" * self.sp

    @property
    def features(self) -> tuple[str | None, ...]:
        """The features whose PTX ISA version ``PTX-VERSION`` checks (None: none)."""
        used = {"4X": ".scale_vec::4X", "block16": ".block16", "block32": ".block32"}.get(self.scale_vec_used or "")
        return ("tcgen05.mma", f".kind::{self.kind}", used)

    def with_a_tmem(self, a_tmem: bool) -> MmaQualifiers:
        """These qualifiers with ``a_tmem`` read from the operands."""
        return MmaQualifiers(self.kind, self.cta_group, self.ws, self.sp, self.block_scale, self.scale_vec,
                             self.scale_vec_used, self.collector, self.ashift, a_tmem)

    def context(self, arch: str | None) -> dict[str, Any]:
        """The instruction context :func:`descgen.check_mma` takes."""
        return {"cta_group": self.cta_group, "ws": self.ws, "sp": self.sp, "scale_vec": self.scale_vec_used,
                "a_tmem": self.a_tmem, "arch": arch}


def parse_mma_qualifiers(opcode: str) -> MmaQualifiers | Malformed:
    """``tcgen05.mma{.ws}.cta_group::N.kind::KIND{...}`` -> its qualifiers (``a_tmem`` left None)."""
    name = "tcgen05.mma"
    flags = dict.fromkeys(_MMA_FLAGS, False)
    kind: str | None = None
    cta_group: int | None = None
    scale_vec: str | None = None
    collector: str | None = None
    seen: set[str] = set()
    for index, token in enumerate(opcode.split(".")[2:]):
        key = token.split("::", 1)[0]
        if key in seen:
            return Malformed(name, f"qualifier .{key} given twice")
        seen.add(key)
        if token == "ws" and index:  # ptxas 13.0: "Unknown modifier '.ws'" anywhere else (E40)
            return Malformed(name, ".ws must come right after tcgen05.mma (tcgen05.mma.ws...)")
        if token in _MMA_FLAGS:
            flags[token] = True
        elif re.fullmatch(r"cta_group::[12]", token):
            cta_group = int(token[-1])
        elif token.startswith("kind::") and token[6:] in KINDS:
            kind = token[6:]
        elif re.fullmatch(r"scale_vec::[124]X", token) or token in ("block16", "block32"):
            if "scale_vectorsize" in seen:
                return Malformed(name, "two scale vector sizes")
            seen.add("scale_vectorsize")
            scale_vec = token.removeprefix("scale_vec::")
        elif re.fullmatch(r"collector::(a|b[0-3])::(fill|use|lastuse|discard)", token):
            collector = token.removeprefix("collector::")
        else:
            return Malformed(name, f"unknown qualifier .{token}")
    if cta_group is None:
        return Malformed(name, "no .cta_group qualifier")
    if kind is None:
        return Malformed(name, "no .kind qualifier")
    used = scale_vec or (DEFAULT_SCALE_VEC.get(kind) if flags["block_scale"] else None)
    return MmaQualifiers(cast(Kind, kind), cta_group, flags["ws"], flags["sp"], flags["block_scale"], scale_vec, used,
                         collector, flags["ashift"])


@dataclass(frozen=True, slots=True)
class MmaOperands:
    """A ``tcgen05.mma``'s operand list, per its syntax form.

    Attributes:
        descriptors: the descriptor operands as ``(role, text)``: ``idesc``, ``a_desc`` (unless A is
            in tensor memory), ``b_desc``, ``zcm`` (``.ws`` with a zero-column-mask-desc).
        a_tmem: whether A is ``[a-tmem]``.
        lanes: the disable-output-lane vector as written (``{%r1, ...}``), or None.
        scale_input_d: the scale-input-d operand as written, or None.
        problem: a wrong disable-output-lane vector (``PTX-MALFORMED``; the instruction is still
            checked), or None.
    """

    descriptors: tuple[tuple[str, str], ...]
    a_tmem: bool
    lanes: str | None = None
    scale_input_d: str | None = None
    problem: Malformed | None = None


def parse_mma_operands(q: MmaQualifiers, operands: list[str]) -> MmaOperands | Malformed:
    """The descriptor operands by role, and the other operands' shape, per syntax form."""
    def bracket(s: str) -> bool:
        return s.startswith("[") and s.endswith("]")

    name = q.name
    head = 5 if q.sp else 4  # [d-tmem], A, b-desc, {[sp-meta-tmem],} idesc
    if len(operands) < head + 1:
        return Malformed(name, f"{len(operands)} operands; expected at least {head + 1}")
    d, a, b = operands[:3]
    idesc = operands[head - 1]
    tail = operands[head:]
    a_tmem = bracket(a)
    lanes = scale_input_d = zcm = None
    problems = []
    if not bracket(d):
        problems.append(f"d-tmem {d} is not a [tensor memory address]")
    if q.sp and not bracket(operands[3]):
        problems.append(f"sp-meta-tmem {operands[3]} is not a [tensor memory address]")
    if q.block_scale or q.kind in MX_KINDS:  # (.ws has no block-scaled form: MMA-WS-KIND says so)
        form = "[scale-A-tmem], [scale-B-tmem], enable-input-d"
        ok = len(tail) == 3 and bracket(tail[0]) and bracket(tail[1])
    elif q.ws:
        form = "enable-input-d {, zero-column-mask-desc}"
        ok = 1 <= len(tail) <= 2 and not tail[0].startswith(("{", "["))
        if ok and len(tail) == 2:
            zcm = tail[1]
    else:
        form = "{ disable-output-lane }, enable-input-d {, scale-input-d}"
        rest = list(tail)
        if rest and rest[0].startswith("{"):
            lanes = rest.pop(0)
        ok = 1 <= len(rest) <= 2 and not any(r.startswith(("{", "[")) for r in rest)
        if ok and len(rest) == 2:
            scale_input_d = rest[1]
    if not ok:
        problems.append(f"after idesc: {', '.join(tail)}; expected {form}")
    if problems:
        return Malformed(name, "; ".join(problems))
    problem = None
    if lanes is not None:
        n = len(split_operands(lanes[1:-1]))
        want = LANE_VECTOR[q.cta_group]
        if n != want:
            problem = Malformed(name, f"disable-output-lane has {n} elements; .cta_group::{q.cta_group} takes {want}")
    ops = [("idesc", idesc)]
    if not a_tmem:
        ops.append(("a_desc", a))
    ops.append(("b_desc", b))
    if zcm is not None:
        ops.append(("zcm", zcm))
    return MmaOperands(tuple(ops), a_tmem, lanes, scale_input_d, problem)


@dataclass(frozen=True, slots=True)
class CpQualifiers(QualifierRecord):
    """A ``tcgen05.cp``'s qualifiers (§9.7.16.9.2): ``cta_group`` (1 or 2), ``shape``
    (``128x256b``...), ``multicast`` (``warpx4``... or None), ``dst_fmt`` and ``src_fmt``
    (decompression, or None)."""

    cta_group: int
    shape: str
    multicast: str | None = None
    dst_fmt: str | None = None
    src_fmt: str | None = None


def parse_cp(opcode: str, operands: list[str]) -> CpQualifiers | Malformed:
    """``tcgen05.cp.cta_group::N.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc``."""
    name = "tcgen05.cp"
    q: dict[str, Any] = {"cta_group": None, "shape": None, "multicast": None, "dst_fmt": None, "src_fmt": None}
    for token in opcode.split(".")[2:]:
        if re.fullmatch(r"cta_group::[12]", token) and q["cta_group"] is None:
            q["cta_group"] = int(token[-1])
        elif token in constraints().cp_shapes and q["shape"] is None:
            q["shape"] = token
        elif token in ("warpx2::02_13", "warpx2::01_23", "warpx4") and q["multicast"] is None:
            q["multicast"] = token
        elif token in _CP_DST and q["dst_fmt"] is None:
            q["dst_fmt"] = token
        elif token in _CP_SRC and q["src_fmt"] is None:
            q["src_fmt"] = token
        else:
            return Malformed(name, f"unknown or repeated qualifier .{token}")
    if q["cta_group"] is None or q["shape"] is None:
        return Malformed(name, "no .cta_group" if q["cta_group"] is None else "no .shape")
    if len(operands) != 2 or not operands[0].startswith("["):
        return Malformed(name, f"operands {', '.join(operands) or '(none)'}; expected [taddr], s-desc")
    return CpQualifiers(**q)


@dataclass(frozen=True, slots=True)
class WgmmaQualifiers(QualifierRecord):
    """A Hopper ``wgmma.mma_async``'s qualifiers and immediates (§9.7.15.5.2, §9.7.15.6.3).

    Attributes:
        sp: ``.sp``. shape: ``m64nNkK`` as written; m, n, k: its numbers.
        dtype, atype, btype: the types as written (``f32``, ``e4m3``...). satfinite: whether written.
        op: ``and`` for ``.b1`` (``.and.popc``), else None.
        a_registers: whether A is in registers (``{...}``) rather than a descriptor.
        scale_d: the immediate scale-d, or None (a predicate). sp_sel: ``.sp``'s sparsity selector.
        scale_a, scale_b (floating types), trans_a, trans_b (transposable types): the immediates,
            None (and absent from the mapping) when the form has none.
    """

    OPTIONAL: ClassVar[frozenset[str]] = frozenset(("scale_a", "scale_b", "trans_a", "trans_b"))

    sp: bool
    shape: str
    m: int
    n: int
    k: int
    dtype: str
    atype: str
    btype: str
    satfinite: bool = False
    op: str | None = None
    a_registers: bool = False
    scale_d: int | None = None
    sp_sel: int | None = None
    scale_a: int | None = None
    scale_b: int | None = None
    trans_a: int | None = None
    trans_b: int | None = None

    @property
    def name(self) -> str:
        """``wgmma.mma_async`` or ``wgmma.mma_async.sp``."""
        return "wgmma.mma_async" + ".sp" * self.sp

    @property
    def subject(self) -> str:
        """``wgmma.mma_async.m64n128k16.f32.f16.f16``: how findings name the instruction."""
        return f"{self.name}.{self.shape}.{self.dtype}.{self.atype}.{self.btype}"

    @property
    def features(self) -> tuple[str | None, ...]:
        """The features whose PTX ISA version ``PTX-VERSION`` checks (None: none)."""
        mixed = self.atype != self.btype and {self.atype, self.btype} <= {"s8", "u8"}
        return (self.name, ".s8.u8" if mixed else None)


def parse_wgmma_qualifiers(opcode: str) -> WgmmaQualifiers | Malformed:
    """``wgmma.mma_async{.sp}.sync.aligned.shape.dtype.atype.btype{.satfinite}`` (``.and.popc``
    for .b1) -> its qualifiers, the operands' fields left at their defaults."""
    name = "wgmma.mma_async"
    sp = satfinite = False
    shape: str | None = None
    mnk = (0, 0, 0)
    op: str | None = None
    types: list[str] = []
    seen: set[str] = set()
    for token in opcode.split(".")[2:]:
        is_type = re.fullmatch(r"[a-z]+\d+\w*", token) is not None and parse_wgmma_shape(token) is None
        if token in seen and not is_type:  # (.f16.f16: a type may repeat)
            return Malformed(name, f"qualifier .{token} given twice")
        seen.add(token)
        parsed = parse_wgmma_shape(token)
        if parsed is not None and shape is None:
            shape, mnk = token, parsed
        elif token == "sp":
            sp = True
        elif token == "satfinite":
            satfinite = True
        elif token in ("sync", "aligned", "popc"):
            continue
        elif token == "and":
            op = token
        elif is_type and len(types) < 3:  # .f32, .e4m3, .s8 ...
            types.append(token)
        else:
            return Malformed(name, f"unknown qualifier .{token}")
    if sp:
        name += ".sp"
    missing = [w for w in ("sync", "aligned") if w not in seen]
    if missing or shape is None or len(types) != 3:
        what = f"no .{' .'.join(missing)}" if missing else "no .shape (.m64nNkK)" if shape is None else \
            "expected .dtype.atype.btype"
        return Malformed(name, what)
    dtype, atype, btype = types
    row = wgmma_table().row(atype)
    if row is not None and (op is not None or "popc" in seen) != (row.name == "b1"):
        return Malformed(name, ".b1 takes .and.popc, the other types do not")
    return WgmmaQualifiers(sp, shape, mnk[0], mnk[1], mnk[2], dtype, atype, btype, satfinite, op)


def parse_wgmma_operands(q: WgmmaQualifiers, operands: list[str]
                         ) -> tuple[WgmmaQualifiers, tuple[tuple[str, str], ...]] | Malformed:
    """``d, a-desc|{a}, b-desc, {sp-meta, sp-sel,} scale-d {, imm-scale-a, imm-scale-b}
    {, imm-trans-a} {, imm-trans-b}`` -> the qualifiers with the operands' fields, and the
    descriptor operands as ``(role, text)``."""
    name = q.name
    row = wgmma_table().row(q.atype)
    a_regs = len(operands) > 1 and operands[1].startswith("{")
    head = 5 if q.sp else 3
    imms: list[str] = []
    if row is not None:
        imms = ["scale_a", "scale_b"] * row.floating + (["trans_a"] if row.transpose and not a_regs else []) + \
            ["trans_b"] * row.transpose
    want = head + 1 + len(imms)
    if len(operands) != want or not operands[0].startswith("{"):
        return Malformed(name, f"{len(operands)} operands; {q.subject} takes {want}: d, "
                               f"{'a' if a_regs else 'a-desc'}, b-desc, {'sp-meta, sp-sel, ' if q.sp else ''}scale-d"
                               + "".join(f", imm-{i.replace('_', '-')}" for i in imms))
    values: dict[str, int | None] = {}
    for i, key in enumerate(imms):
        values[key] = parse_int(operands[head + 1 + i])
        if values[key] is None:
            return Malformed(name, f"imm-{key.replace('_', '-')} {operands[head + 1 + i]} is not an integer constant")
    sel = parse_int(operands[4]) if q.sp else None
    if q.sp and sel is None:
        return Malformed(name, f"sp-sel {operands[4]} is not an integer constant")
    ops = ([] if a_regs else [("a_desc", operands[1])]) + [("b_desc", operands[2])]
    full = WgmmaQualifiers(q.sp, q.shape, q.m, q.n, q.k, q.dtype, q.atype, q.btype, q.satfinite, q.op, a_regs,
                           parse_int(operands[head]), sel, values.get("scale_a"), values.get("scale_b"),
                           values.get("trans_a"), values.get("trans_b"))
    return full, tuple(ops)


#: A scanned instruction's qualifiers, whichever it is.
Qualifiers = Union[MmaQualifiers, CpQualifiers, WgmmaQualifiers]
