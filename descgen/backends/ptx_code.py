"""PTX code being written for one instruction site (the descriptor sanitizer's back end,
:mod:`descgen.backends.ptx_rules`): its registers, each with the range of values it may hold, the
program of one site (lines, registers, constant tables, fields read from the words' registers), and
the algebra of values that are bits of a register, moved.

Each register's range decides its width: an operation whose operands and result fit 32 bits is
written on 32-bit registers (a 64-bit operation is two instructions on the GPU's uniform
datapath). A field whose value is its raw bits shifted (an address in 16-byte units) stays
:class:`Bits` (``((src >> lo) & mask) << shift``) until it is used, so that masks, shifts and the
clearing of some of its bits cost nothing and its truth is one ``and``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["NONE", "ANY", "U32", "S32", "Unsupported", "RawField", "Const", "Reg", "Bits", "Val", "fits32",
           "Program", "imm", "imm32", "interval", "moved"]

#: None as a 64-bit value (no fact, no table entry).
NONE = -(1 << 63)


class Unsupported(Exception):
    """A check the PTX back end cannot compile at this site (the reason is the message)."""


@dataclass(frozen=True)
class RawField:
    """A field of a word held in a register: its bits ``lo .. lo + width - 1`` of ``reg``
    (``reg_width`` 32 or 64 bits), of layout ``layout`` read under ``kind``."""

    reg: str
    reg_width: int
    layout: str
    kind: str | None
    name: str
    lo: int
    width: int


# --------------------------------------------------------------------------------------------
# Values while compiling: a constant, or a register with what it holds.


@dataclass(frozen=True)
class Const:
    value: Any


#: Every 64-bit value, and the 32-bit registers' two readings.
ANY = (-(1 << 63), (1 << 63) - 1)
U32 = (0, (1 << 32) - 1)
S32 = (-(1 << 31), (1 << 31) - 1)


@dataclass(frozen=True)
class Reg:
    name: str
    kind: str  # "int" (None: NONE), "name" (an id, None: NONE), "bool" (0 or 1)
    maybe_none: bool = True  # False: never None (a field, a special register, arithmetic, a comparison)
    pred: str | None = None  # a predicate already holding its truth (a comparison's)
    lo: int = ANY[0]  # every value it may hold lies in lo .. hi (NONE included where maybe_none)
    hi: int = ANY[1]
    width: int = 64  # 32: a .b32 register, read unsigned when lo >= 0, else signed


def fits32(lo: int, hi: int) -> bool:
    """A value in ``lo .. hi`` is a 32-bit register's value (unsigned, or signed when negative)."""
    return U32[0] <= lo and hi <= U32[1] or S32[0] <= lo and hi <= S32[1]


@dataclass(frozen=True)
class Bits:
    """Bits of a 32-bit register, moved: ``((src >> lo) & mask) << shift``, not computed yet: a
    mask, a shift or the clearing of some of its bits folds into it, and its truth is one ``and``."""

    src: str
    lo: int
    mask: int
    shift: int


Val = Const | Reg | Bits


# --------------------------------------------------------------------------------------------
# A program: the code of one site, with its registers and constant tables.


@dataclass
class Program:
    """PTX being written for one site: its lines, the registers it declares (``prefix`` + number:
    64-bit ``%<prefix>r<N>``, 32-bit ``%<prefix>w<N>``, predicates ``%<prefix>p<N>``), the constant
    tables it reads (by name: the values), the names it numbers (name -> id >= 1), and the special
    registers it reads: ``specials`` maps one to the 32-bit register its function read it into once,
    at its entry (``used`` lists those this site read); one not there is read where it is used."""

    prefix: str
    pool: dict[tuple[int, ...], str] = field(default_factory=dict)
    specials: Mapping[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    regs: int = 0
    words: int = 0
    preds: int = 0
    tables: dict[str, tuple[int, ...]] = field(default_factory=dict)
    names: dict[str, int] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    masks: dict[str, tuple[str, int]] = field(default_factory=dict)
    entry: dict[str, list[str]] = field(default_factory=dict)
    _raw: dict[tuple[str, int, int], str] = field(default_factory=dict)
    _half: dict[tuple[str, int], str] = field(default_factory=dict)

    def reg(self) -> str:
        self.regs += 1
        return f"%{self.prefix}r{self.regs - 1}"

    def reg32(self) -> str:
        self.words += 1
        return f"%{self.prefix}w{self.words - 1}"

    def pred(self) -> str:
        self.preds += 1
        return f"%{self.prefix}p{self.preds - 1}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def name_id(self, name: str) -> int:
        return self.names.setdefault(name, len(self.names) + 1)

    def raw(self, f: RawField) -> str:
        """A 32-bit register holding ``f``'s raw bits (read once per site; each 64-bit word's
        halves once).

        Raises:
            Unsupported: the field is wider than 32 bits."""
        key = (f.reg, f.lo, f.width)
        if key in self._raw:
            return self._raw[key]
        if f.width > 32:
            raise Unsupported(f"field {f.name} is {f.width} bits wide")
        half = self.in_half(f)
        w = self._raw[key] = self.reg32()
        if half is not None:
            self.emit(f"bfe.u32 {w}, {half[0]}, {half[1]}, {f.width};")
        else:
            r = self.reg()
            self.emit(f"bfe.u64 {r}, {f.reg}, {f.lo}, {f.width};")
            self.emit(f"cvt.u32.u64 {w}, {r};")
        return w

    def in_half(self, f: RawField) -> tuple[str, int] | None:
        """The 32-bit register holding the half of ``f``'s word that holds all of ``f``, and
        ``f``'s first bit in it (None: ``f`` straddles the halves)."""
        if f.reg_width == 32:
            return f.reg, f.lo
        if f.lo // 32 != (f.lo + f.width - 1) // 32:
            return None
        return self._word_half(f.reg, f.lo // 32), f.lo % 32

    def nonzero_word(self, f: RawField) -> str:
        """A 32-bit register nonzero where a bit of ``f`` is set (its bits, in place)."""
        half = self.in_half(f)
        if half is None:
            return self.raw(f)
        return self.masked(half[0], ((1 << f.width) - 1) << half[1])

    def masked(self, src: str, mask: int) -> str:
        """A 32-bit register holding ``src & mask`` (``masks`` remembers it: flags that are bits of
        one register merge into one ``and``)."""
        t = self.reg32()
        self.emit(f"and.b32 {t}, {src}, {imm32(mask)};")
        self.masks[t] = (src, mask)
        return t

    def nonzero(self, f: RawField) -> str:
        """A predicate: a bit of ``f`` is set."""
        p = self.pred()
        self.emit(f"setp.ne.b32 {p}, {self.nonzero_word(f)}, 0;")
        return p

    def _word_half(self, reg: str, half: int) -> str:
        key = (reg, half)
        if key not in self._half:
            w = self._half[key] = self.reg32()
            if half:
                r = self.reg()
                self.emit(f"shr.u64 {r}, {reg}, 32;")
                reg = r
            self.emit(f"cvt.u32.u64 {w}, {reg};")
        return self._half[key]

    def special(self, name: str) -> str:
        """A 32-bit register holding special register ``name`` (``%aggr_smem_size``)."""
        self.used.add(name)
        reg = self.specials.get(name)
        if reg is None:
            reg = self.reg32()
            self.emit(f"mov.u32 {reg}, {name};")
        return reg

    def threshold(self, special: str, c: int, n: int) -> str | None:
        """A function-scope 32-bit register holding ``ceil(max(S - c, 0) / 2**n)`` for ``S`` the
        special register ``special`` was read into at the function's entry (:meth:`special`),
        computed there once (``entry``: its lines), so that ``(x << n) + c >= S`` is ``x >= it``
        for ``x >= 0``; None where ``c`` or ``n`` is too large for 32-bit arithmetic."""
        if not -(1 << 24) <= c <= 1 << 24 or not 0 <= n <= 16:
            return None
        name = f"{special}_t{'m' if c < 0 else ''}{abs(c)}_{n}"
        self.entry.setdefault(name, [f".reg .b32 {name};", f"sub.s32 {name}, {special}, {imm32(c)};",
                                     f"max.s32 {name}, {name}, 0;", f"add.s32 {name}, {name}, {(1 << n) - 1};",
                                     f"shr.u32 {name}, {name}, {n};"])
        return name

    def widen(self, reg32: str, signed: bool = False) -> str:
        """A 64-bit register holding the 32-bit register ``reg32``'s value (``signed``: read signed)."""
        r = self.reg()
        self.emit(f"cvt.{'s64.s32' if signed else 'u64.u32'} {r}, {reg32};")
        return r

    def table(self, values: tuple[int, ...]) -> str:
        """The module-level constant table holding ``values``: one per distinct content in the
        module (``pool``, shared by the sites; ``tables`` lists the ones this site adds)."""
        name = self.pool.get(values)
        if name is None:
            name = self.pool[values] = f"descgen_t{len(self.pool)}"
            self.tables[name] = values
        return name

    def bit_of(self, words: tuple[int, ...], index: str) -> str:
        """A 32-bit register holding bit ``index`` (a 32-bit register) of the bit string ``words``
        (64 bits each, the first lowest): an immediate for one word, else a constant table."""
        n = self.reg32()
        if len(words) == 1 and words[0] < 1 << 32:
            self.emit(f"mov.b32 {n}, {words[0]};")
            self.emit(f"shr.u32 {n}, {n}, {index};")
        else:
            r = self.reg()
            if len(words) == 1:
                self.emit(f"mov.b64 {r}, {imm(words[0])};")
                self.emit(f"shr.u64 {r}, {r}, {index};")
            else:
                q, a = self.reg32(), self.reg()
                self.emit(f"shr.u32 {q}, {index}, 6;")
                self.emit(f"mov.u64 {a}, {self.table(words)};")
                self.emit(f"mad.wide.u32 {a}, {q}, 8, {a};")
                self.emit(f"ld.const.u64 {r}, [{a}];")
                self.emit(f"and.b32 {q}, {index}, 63;")
                self.emit(f"shr.u64 {r}, {r}, {q};")
            self.emit(f"cvt.u32.u64 {n}, {r};")
        self.emit(f"and.b32 {n}, {n}, 1;")
        return n

    def declarations(self) -> list[str]:
        out = []
        if self.regs:
            out.append(f".reg .b64 %{self.prefix}r<{self.regs}>;")
        if self.words:
            out.append(f".reg .b32 %{self.prefix}w<{self.words}>;")
        if self.preds:
            out.append(f".reg .pred %{self.prefix}p<{self.preds}>;")
        return out


def imm(value: int) -> str:
    return str(value) if value >= 0 else f"{value & ((1 << 64) - 1):#x}"


def imm32(value: int) -> str:
    """A 32-bit operand's immediate: its low 32 bits, written signed."""
    return str(((value + (1 << 31)) & 0xFFFFFFFF) - (1 << 31))


def interval(op: type, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The values ``x op y`` may take, ``x`` in ``a`` and ``y`` in ``b`` (every 64-bit value where
    it may leave them)."""
    (al, ah), (bl, bh) = a, b
    if op is ast.Add:
        lo, hi = al + bl, ah + bh
    elif op is ast.Sub:
        lo, hi = al - bh, ah - bl
    elif op is ast.Mult:
        products = (al * bl, al * bh, ah * bl, ah * bh)
        lo, hi = min(products), max(products)
    elif op is ast.BitAnd and (al >= 0 or bl >= 0):
        lo, hi = 0, min(h for low, h in (a, b) if low >= 0)
    elif op is ast.BitOr and al >= 0 and bl >= 0:
        lo, hi = 0, (1 << max(ah, bh).bit_length()) - 1
    else:
        return ANY
    return (lo, hi) if ANY[0] <= lo and hi <= ANY[1] else ANY


def moved(op: type, left: Val, right: Val) -> Bits | Const | None:
    """``left op right`` as moved bits where it is (a mask, a shift, a power of two's remainder or
    quotient by a constant; the clearing of some of the same bits), else None."""
    if isinstance(left, Bits) and isinstance(right, Const) and type(right.value) is int:
        c = right.value
        power = c > 0 and c & (c - 1) == 0
        if op is ast.Mod and power:
            op, c = ast.BitAnd, c - 1
        if op is ast.FloorDiv and power:
            op, c = ast.RShift, c.bit_length() - 1
        out: Bits | None = None
        if op is ast.BitAnd:
            out = Bits(left.src, left.lo, left.mask & (c >> left.shift), left.shift)
        elif op is ast.LShift and 0 <= c and left.mask << (left.shift + c) < 1 << 32:
            out = Bits(left.src, left.lo, left.mask, left.shift + c)
        elif op is ast.RShift and 0 <= c <= left.shift:
            out = Bits(left.src, left.lo, left.mask, left.shift - c)
        elif op is ast.RShift and 0 <= c:
            k = c - left.shift
            out = Bits(left.src, left.lo + k, left.mask >> k, 0) if left.lo + k < 32 else None
        if out is not None and out.mask == 0:
            return Const(0)
        return out
    if op is ast.Sub and isinstance(left, Bits) and isinstance(right, Bits) \
            and (left.src, left.lo, left.shift) == (right.src, right.lo, right.shift) and not right.mask & ~left.mask:
        return Bits(left.src, left.lo, left.mask & ~right.mask, left.shift)  # (x - (x & m): x & ~m)
    return None
