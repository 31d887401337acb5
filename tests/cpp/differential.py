"""The differential test's records and the Python API's answers (stdlib only: the device script
runs it with ``PYTHONPATH=.`` on a machine without the test dependencies).

A record is one call of a validator: ``validate_idesc``, ``validate_smem``, ``validate_zcm``,
``validate_taddr`` or ``check_mma``, with its word(s) and context, packed in 64 bytes
(:data:`RECORD`, the ``Record`` struct of tests/cpp/differential.hpp). :func:`records` makes them,
deterministically: the legal shape space of every kind under every cta_group / .ws (Table 39/50/52
exhaustively), the shared memory descriptor's rule space exhaustively, then structured random
words (fields drawn from their legal values, some from anywhere, some bits flipped) and uniformly
random words, each with a random context. :func:`digests` answers each record with the Python
API: an FNV-1a digest of (ok, the finding codes in order), as the C++ driver and the CUDA kernel
compute it with the header's ``Code`` numbering.

    python tests/cpp/differential.py records OUT [N]    # write N records (default 1,000,000)
    python tests/cpp/differential.py digests RECORDS OUT
"""

from __future__ import annotations

import hashlib
import itertools
import random
import struct
import sys
from array import array
from typing import Any, Iterator

import descgen
from descgen.backends import cpp_header
from descgen.catalog import SCALE_VECS, constraints
from descgen.loader import KINDS, layout

RECORD = struct.Struct("<BBbbbbbbbBB5xQQQQqq")
assert RECORD.size == 64
#: The default size of the differential (records).
SIZE = 1_000_000
SEED = 20


def _legal(word: str, lay_name: str, kind: str | None) -> list[tuple[int, int, list[int]]]:
    """Per field of a plan: (lo, width, its legal raw values)."""
    out = []
    for f in layout(lay_name).fields:
        out.append((f.lo, f.width, cpp_header._legal_raw(f, kind)))
    return out


def _plans() -> dict[tuple[str, str | None], list[tuple[int, int, list[int]]]]:
    return {(w, k): _legal(w, lay, k) for w, lay, k in cpp_header.plans()}


def _pack(op: int, kind: int = 0, cg: int = -1, ws: int = -1, sp: int = -1, a_tmem: int = -1, sv: int = -1, arch: int = -1,
          warp: int = -1, has_a: int = 0, has_zcm: int = 0, w0: int = 0, w1: int = 0, w2: int = 0, w3: int = 0,
          p0: int = -1, p1: int = -1) -> bytes:
    return RECORD.pack(op, kind, cg, ws, sp, a_tmem, sv, arch, warp, has_a, has_zcm, w0, w1, w2, w3, p0, p1)


def _word(rng: random.Random, fields: list[tuple[int, int, list[int]]], wild: int) -> int:
    """A word whose fields take legal raw values, except about 1 in ``wild`` taken from anywhere."""
    w = 0
    bits = rng.getrandbits
    for lo, width, legal in fields:
        r = bits(32)
        raw = legal[(r >> 8) % len(legal)] if r % wild else (r >> 8) & ((1 << width) - 1)
        w |= raw << lo
    return w


def _exhaustive() -> Iterator[bytes]:
    """The legal shape space: per kind every legal M, N, sparsity, K bit, major-ness and A/B type,
    under every cta_group and .ws; and every smem rule key with every target and some pattern starts."""
    for ki, kind in enumerate(KINDS):
        lay = layout(cpp_header.plans()[ki][1])
        by = lay.by_name
        base = 0
        fields = {f.name: (f.lo, cpp_header._legal_raw(f, kind)) for f in lay.fields}
        for f in lay.fields:  # every field at its first legal raw value
            base |= fields[f.name][1][0] << f.lo
        names = ["m", "n", "sparse", "k_dim", "a_major", "b_major", "atype", "btype"]
        names = [n for n in names if n in by]
        for combo in itertools.product(*[fields[n][1] for n in names]):
            w = base
            for n, raw in zip(names, combo):
                lo = fields[n][0]
                w = (w & ~(((1 << by[n].width) - 1) << lo)) | (raw << lo)
            for cg in (-1, 1, 2):
                for ws in (-1, 0, 1):
                    yield _pack(0, ki, cg, ws, w0=w)
    smem = layout("smem_desc").by_name
    for swz in range(8):
        for base_offset in range(8):
            for mode in range(2):
                for start in range(8):
                    w = (1 << smem["version"].lo) | (swz << smem["swizzle"].lo) | (base_offset << smem["base_offset"].lo) \
                        | (mode << smem["lbo_mode"].lo) | ((start << 3) << smem["start_address"].lo) | (1 << smem["lbo"].lo) \
                        | (64 << smem["sbo"].lo)
                    for arch in range(-1, len(constraints().targets)):
                        for ps in (-1, 0, 0x80, 0x380, 0x400 + 0x100):
                            yield _pack(1, arch=arch, w0=w, p0=ps)


def records(n: int = SIZE, seed: int = SEED) -> bytes:
    """``n`` records (the exhaustive part first, then random ones), deterministic for a seed."""
    out = bytearray()
    for rec in _exhaustive():
        out += rec
    done = len(out) // RECORD.size
    rng = random.Random(seed)
    bits = rng.getrandbits
    plans = _plans()
    idesc = [plans["idesc", k] for k in KINDS]
    smem, zcm, taddr = plans["smem", None], plans["zcm", None], plans["taddr", None]
    n_arch, n_sv = len(constraints().targets), len(SCALE_VECS)
    zcm_ms = (-1, -1, 32, 64, 128, 256, 16)
    alloc = (-1, -1, 32, 64, 128, 256, 512, 96, 48, 0)
    pack = RECORD.pack

    def word(fields: list[tuple[int, int, list[int]]], width: int) -> int:
        r = bits(8)
        if r < 24:  # uniformly random
            return bits(width)
        w = _word(rng, fields, 16 if r < 160 else 1 << 30)
        if r & 1:  # one bit flipped
            w ^= 1 << bits(8) % width
        return w

    def tri() -> int:
        return bits(8) % 3 - 1

    while done < n:
        r = bits(32)
        op = (0, 0, 0, 0, 1, 1, 2, 3, 4, 4)[r % 10]
        kind = (r >> 4) % len(KINDS)
        cg = (-1, 1, 2)[(r >> 8) % 3]
        ws, sp, a_tmem = tri(), tri(), tri()
        sv = bits(8) % (n_sv + 1) - 1
        arch = bits(8) % (n_arch + 1) - 1
        if op == 0:
            out += pack(0, kind, cg, ws, sp, a_tmem, sv, arch, -1, 0, 0, word(idesc[kind], 32), 0, 0, 0, -1, -1)
        elif op == 1:
            ps = -1 if bits(1) else bits(18) & ~0xf if bits(1) else bits(18)
            out += pack(1, 0, -1, -1, -1, -1, -1, arch, -1, 0, 0, word(smem, 64), 0, 0, 0, ps, -1)
        elif op == 2:
            m = zcm_ms[bits(8) % len(zcm_ms)]
            nn = -1 if bits(1) else bits(9)
            out += pack(2, 0, -1, ws, -1, -1, -1, -1, -1, 0, 0, word(zcm, 64), 0, 0, 0, m, nn)
        elif op == 3:
            warp = bits(8) % 5 - 1
            cols = alloc[bits(8) % len(alloc)]
            base = -1 if bits(1) else bits(9)
            out += pack(3, 0, -1, -1, -1, -1, -1, -1, warp, 0, 0, word(taddr, 32), 0, 0, 0, cols, base)
        else:
            has_a = bits(8) % 4 != 0
            a_tmem = (-1 if bits(1) else 0) if has_a else 1
            has_zcm = bits(1)
            ps = (-1 if bits(1) else bits(18) & ~0x7f, -1 if bits(1) else bits(18) & ~0x7f)
            out += pack(4, kind, cg, ws, sp, a_tmem, sv, arch, -1, has_a, has_zcm, word(idesc[kind], 32),
                        word(smem, 64) if has_a else 0, word(smem, 64), word(zcm, 64), *ps)
        done += 1
    return bytes(out[: n * RECORD.size])


def _fnv(ok: bool, codes: list[int]) -> int:
    h = ((2166136261 ^ ((0x80 if ok else 0) | len(codes))) * 16777619) & 0xFFFFFFFF
    for c in codes:
        h = ((h ^ (c & 0xFF)) * 16777619) & 0xFFFFFFFF
        h = ((h ^ (c >> 8)) * 16777619) & 0xFFFFFFFF
    return h


def answer(rec: tuple[Any, ...]) -> Any:
    """The Python API's report for one unpacked record."""
    op, kind, cg, ws, sp, a_tmem, sv, arch, warp, has_a, has_zcm, w0, w1, w2, w3, p0, p1 = rec
    opt = _opt
    if op == 0:
        return descgen.validate_idesc(w0, KINDS[kind], cta_group=opt(cg), ws=_flag(ws), sp=_flag(sp),
                                      scale_vec=_SV[sv], a_tmem=_flag(a_tmem), arch=_ARCH[arch])
    if op == 1:
        return descgen.validate_smem(w0, arch=_ARCH[arch], pattern_start=opt(p0))
    if op == 2:
        return descgen.validate_zcm(w0, m=opt(p0), n=opt(p1), ws=_flag(ws))
    if op == 3:
        return descgen.validate_taddr(w0, warp=opt(warp), alloc_columns=opt(p0), alloc_base=opt(p1))
    return descgen.check_mma(idesc=w0, kind=KINDS[kind], a_desc=w1 if has_a else None, b_desc=w2, zcm=w3 if has_zcm else None,
                             a_tmem=_flag(a_tmem), cta_group=opt(cg), ws=_flag(ws), sp=_flag(sp), scale_vec=_SV[sv],
                             arch=_ARCH[arch], a_pattern_start=opt(p0), b_pattern_start=opt(p1))


def _opt(x: int) -> int | None:
    return None if x < 0 else x


def _flag(x: int) -> bool | None:
    return None if x < 0 else bool(x)


_SV: dict[int, Any] = {-1: None, **dict(enumerate(SCALE_VECS))}
_ARCH: dict[int, Any] = {-1: None, **dict(enumerate(constraints().targets))}


def digests(data: bytes) -> array:
    """The Python API's digest of every record (see the module docstring)."""
    ids = {code: i for i, code in enumerate(cpp_header.codes())}
    out = array("I")
    append = out.append
    memo: dict[Any, int] = {}
    for rec in RECORD.iter_unpack(data):
        hit = memo.get(rec)
        if hit is None:
            report = answer(rec)
            hit = _fnv(report.ok, [ids[f.code] for f in report.findings])
            if len(memo) < 1 << 20:
                memo[rec] = hit
        append(hit)
    return out


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str]) -> int:
    if argv[:1] == ["records"]:
        data = records(int(argv[2]) if len(argv) > 2 else SIZE)
        with open(argv[1], "wb") as fh:
            fh.write(data)
        print(f"{len(data) // RECORD.size} records, sha256 {sha256(data)}")
        return 0
    if argv[:1] == ["digests"]:
        with open(argv[1], "rb") as fh:
            data = fh.read()
        out = digests(data)
        with open(argv[2], "wb") as fh:
            fh.write(out.tobytes())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
