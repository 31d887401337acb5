"""The canonical layouts of §9.7.16.3.3 (wgmma's §9.7.15.5.1.2.1.3) and the read address: what
LBO and SBO mean for a major-ness and swizzle, the layout in CuTe's notation, the address model
of errata E9, and the atom findings (phase, stride, row span) both directions report
(:mod:`descgen.tiles`)."""

from __future__ import annotations

from typing import Callable

from ..core.errors import Finding
from ..model.catalog import layout_finding
from ..model.facts import skewed_stride
from .atoms import CHUNK, SwizzleAtom

__all__ = ["strides", "stride_fields", "canonical_layout", "exact_layout", "ceil_div", "read_address", "atom_findings",
           "k_offset_bytes"]


def strides(atom: SwizzleAtom, lbo: int, sbo: int) -> tuple[int, int]:
    """(MN-direction stride, K-direction stride) in bytes, as LBO and SBO mean them for this
    major-ness and swizzle (§9.7.16.3.1-2; MN-major without swizzle swaps the roles: errata E28).
    K-major swizzled layouts have no K-direction stride (LBO is not used): 0."""
    if atom.major == "k":
        return sbo, (lbo if not atom.swizzled else 0)
    return (sbo, lbo) if not atom.swizzled else (lbo, sbo)


def stride_fields(atom: SwizzleAtom, mn_stride: int, k_stride: int) -> tuple[int, int]:
    """(LBO, SBO) for strides along MN and K: the inverse of :func:`strides`; K-major swizzled
    layouts get LBO 16 bytes, "assumed to be 1" (errata E8)."""
    if atom.major == "k":
        return (k_stride if not atom.swizzled else CHUNK), mn_stride
    return (k_stride, mn_stride) if not atom.swizzled else (mn_stride, k_stride)


def canonical_layout(atom: SwizzleAtom) -> str:
    """§9.7.16.3.3's canonical layout for the atom's mode, in its notation."""
    s, r = atom.columns, atom.rows
    if atom.major == "k":
        return f"((8,m),(T,2k)):(({s}T,SBO),(1,{'LBO' if not atom.swizzled else 'T'}))"
    if not atom.swizzled:
        return "((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))"
    return f"((T,{s},m),({r},k)):((1,T,LBO),({s}T,SBO))"


def exact_layout(atom: SwizzleAtom, mn: int, k: int, lbo: int, sbo: int) -> str:
    """The canonical layout with T, m, k and the strides filled in (strides in elements), as the
    §9.7.16.3.3 examples print their "Exact layout"."""
    t = atom.per_chunk
    el: Callable[[int], int] = lambda nbytes: nbytes * t // CHUNK  # noqa: E731 - bytes -> elements
    s, r = atom.columns, atom.rows
    if atom.major == "k":
        k_stride = el(lbo) if not atom.swizzled else t
        layout = f"((8,{ceil_div(mn, 8)}),({t},{ceil_div(k, t)})):(({s * t},{el(sbo)}),(1,{k_stride}))"
    elif not atom.swizzled:
        layout = f"(({t},1,{ceil_div(mn, t)}),(8,{ceil_div(k, 8)})):((1,{t},{el(sbo)}),({t},{el(lbo)}))"
    else:
        layout = f"(({t},{s},{ceil_div(mn, s * t)}),({r},{ceil_div(k, r)})):((1,{t},{el(lbo)}),({s * t},{el(sbo)}))"
    return f"{atom.cute_swizzle} o {layout}"


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def read_address(atom: SwizzleAtom, a: int, base_offset: int) -> int:
    """The address model of errata E9: ``a ^ ((((a >> (M+S)) - base_offset) & (2**B - 1)) << M)``."""
    b, m, s = atom.functor
    return a ^ ((((a >> (m + s)) - base_offset) & ((1 << b) - 1)) << m)


def atom_findings(atom: SwizzleAtom, start: int, lbo: int, sbo: int, base_offset: int, mn: int,
                  k: int) -> list[Finding]:
    """Swizzled atoms that do not line up with the swizzle pattern (warnings) and reads that run
    past the end of an atom row (error). No swizzle: core matrices need only 16-byte alignment."""
    if not atom.swizzled:
        return []
    found = []
    period, w = atom.period, atom.row_bytes
    origin = start - start % w
    if (origin - base_offset * 128) % period:
        row = (origin - base_offset * 128) % period // w
        found.append(layout_finding(
            "LAYOUT-ATOM-PHASE", "start_address", start,
            f"an address whose atom row is row 0 of the pattern: (start - 128 * base_offset) mod {period} < {w}",
            f"the first atom starts at row {row} of the {period}-byte {atom.swizzle} pattern "
            f"(base offset {base_offset}); align the tile or set the base offset from where the pattern starts"))
    mn_stride, k_stride = strides(atom, lbo, sbo)
    # (stride, groups it steps between, bytes of an atom row each group reads): E47's test
    if atom.major == "k":
        steps = [("sbo", mn_stride, ceil_div(mn, 8), ceil_div(k, atom.per_chunk) * CHUNK)]
    else:
        across = min(ceil_div(min(mn, atom.mn), atom.per_chunk) * CHUNK, w)
        steps = [("lbo", mn_stride, ceil_div(mn, atom.mn), across), ("sbo", k_stride, ceil_div(k, atom.k), across)]
    for name, stride, groups, window in steps:
        if skewed_stride(stride, atom.swizzle, groups, window, start):
            found.append(layout_finding(
                "LAYOUT-ATOM-STRIDE", name, stride,
                f"a multiple of {period} bytes, or a step that keeps every group inside one {w}-byte atom row",
                f"{name.upper()} steps between {groups} groups of {window} bytes of an atom row from byte "
                f"{start % w}; {stride} bytes is neither a whole number of {period}-byte swizzle patterns (the next "
                f"atom, on the same rows' phase) nor a step inside one {w}-byte atom row (slice-K), so the groups "
                "read a layout no tile has (errata E47)"))
    contiguous = k if atom.major == "k" else min(mn, atom.mn)
    span = start % w + ceil_div(contiguous, atom.per_chunk) * CHUNK
    if span > w:
        what = "K" if atom.major == "k" else "MN"
        hint = ("LBO is not used by K-major swizzled layouts, so one descriptor covers one atom along K; advance the "
                "start address to the next atom (advance_smem)" if atom.major == "k" else "start the descriptor at an "
                "atom row, or read fewer MN elements")
        found.append(layout_finding(
            "LAYOUT-ROW-SPAN", "k" if atom.major == "k" else "mn", contiguous,
            f"at most {(w - start % w) // CHUNK * atom.per_chunk} elements from this start",
            f"the read runs {span - w} bytes past the end of the {w}-byte {what} row of the {atom.swizzle} atom; "
            f"{hint}"))
    return found


def k_offset_bytes(atom: SwizzleAtom, k_step: int, j: int) -> int:
    """Bytes from the tile's first K column to column ``j``: whole atoms are ``k_step`` apart; a
    K-major swizzled atom row holds its 16-byte columns 16 bytes apart."""
    within = (j % atom.k) // atom.per_chunk * CHUNK if atom.major == "k" and atom.swizzled else 0
    return j // atom.k * k_step + within
