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
import operator
import random
import struct
import sys
from array import array
from typing import Any, Iterator

import descgen
from descgen.rules import checks
from descgen.backends import cpp_header
from descgen.model.catalog import SCALE_VECS, catalog, constraints
from descgen.model.context import context
from descgen.model.engine import plan
from descgen.model.facts import kind_facts
from descgen.model.loader import KINDS, layout

RECORD = struct.Struct("<BBbbbbbbbBB5xQQQQqq")
assert RECORD.size == 64
#: The default size of the differential (records).
SIZE = 1_000_000
SEED = 20


def _plans() -> dict[tuple[str, str | None], list[tuple[int, int, list[int]]]]:
    """Per plan (word, kind): each field's (lo, width, legal raw values)."""
    return {(w, k): [(f.lo, f.width, cpp_header._legal_raw(f, k)) for f in layout(lay).fields]
            for w, lay, k in cpp_header.plans()}


def _pack(op: int, kind: int = 0, cg: int = -1, ws: int = -1, sp: int = -1, a_tmem: int = -1, sv: int = -1,
          arch: int = -1, warp: int = -1, has_a: int = 0, has_zcm: int = 0, w0: int = 0, w1: int = 0, w2: int = 0,
          w3: int = 0, p0: int = -1, p1: int = -1) -> bytes:
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
        # Table 39 / 50 under every cta_group and .ws; Tables 39 (types) / 51 / 52 / 54 under a_tmem and scale_vec
        families = (
            (("m", "n", "sparse", "k_dim", "b_major", "btype"),
             [(cg, ws, -1, -1) for cg in (-1, 1, 2) for ws in (-1, 0, 1)]),
            (("atype", "btype", "dtype", "scale_type", "a_major", "b_major", "sparse", "k_dim", "a_sf_id", "b_sf_id"),
             [(-1, -1, a_tmem, sv) for a_tmem in (-1, 0, 1) for sv in range(-1, len(SCALE_VECS))]),
        )
        for names, contexts in families:
            names = tuple(n for n in names if n in by)
            for combo in itertools.product(*[fields[n][1] for n in names]):
                w = base
                for n, raw in zip(names, combo):
                    lo = fields[n][0]
                    w = (w & ~(((1 << by[n].width) - 1) << lo)) | (raw << lo)
                for cg, ws, a_tmem, sv in contexts:
                    yield _pack(0, ki, cg, ws, a_tmem=a_tmem, sv=sv, w0=w)
    smem = layout("smem_desc").by_name
    for swz in range(8):
        for base_offset in range(8):
            for mode in range(2):
                for start in range(8):
                    w = (1 << smem["version"].lo) | (swz << smem["swizzle"].lo) \
                        | (base_offset << smem["base_offset"].lo) | (mode << smem["lbo_mode"].lo) \
                        | ((start << 3) << smem["start_address"].lo) | (1 << smem["lbo"].lo) | (64 << smem["sbo"].lo)
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
        op = _OPS[r % len(_OPS)]
        kind = (r >> 4) % len(KINDS)
        cg = (-1, 1, 2)[(r >> 8) % 3]
        ws, sp, a_tmem = tri(), tri(), tri()
        sv = bits(8) % (n_sv + 1) - 1
        arch = bits(8) % (n_arch + 1) - 1
        if op == 0:
            out += pack(0, kind, cg, ws, sp, a_tmem, sv, arch, -1, 0, 0, word(idesc[kind], 32), 0, 0, 0, -1, -1)
        elif op == 1:
            ps = -1 if bits(1) else bits(18) & ~0xf if bits(1) else bits(18)
            ss = ps + 0x400 if ps >= 0 and not ps & 0x20 else -1  # (smem_size: no new random bits)
            out += pack(1, 0, -1, -1, -1, -1, -1, arch, -1, 0, 0, word(smem, 64), 0, 0, 0, ps, ss)
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


#: The mix of the random records: idesc 55%, smem 20%, zcm 10%, taddr 10%, check_mma 5%.
_OPS = (0,) * 11 + (1,) * 4 + (2,) * 2 + (3,) * 2 + (4,)


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
        return descgen.validate_smem(w0, arch=_ARCH[arch], pattern_start=opt(p0), smem_size=opt(p1))
    if op == 2:
        return descgen.validate_zcm(w0, m=opt(p0), n=opt(p1), ws=_flag(ws))
    if op == 3:
        return descgen.validate_taddr(w0, warp=opt(warp), alloc_columns=opt(p0), alloc_base=opt(p1))
    return descgen.check_mma(idesc=w0, kind=KINDS[kind], a_desc=w1 if has_a else None, b_desc=w2,
                             zcm=w3 if has_zcm else None, a_tmem=_flag(a_tmem), cta_group=opt(cg), ws=_flag(ws),
                             sp=_flag(sp), scale_vec=_SV[sv], arch=_ARCH[arch], a_pattern_start=opt(p0),
                             b_pattern_start=opt(p1))


def _opt(x: int) -> int | None:
    return None if x < 0 else x


def _flag(x: int) -> bool | None:
    return None if x < 0 else bool(x)


_SV: dict[int, Any] = {-1: None, **dict(enumerate(SCALE_VECS))}
_ARCH: dict[int, Any] = {-1: None, **dict(enumerate(constraints().targets))}


def digests(data: bytes, check_every: int = 64) -> array:
    """The Python API's digest of every record (see the module docstring).

    A million API calls take minutes, so the answers are composed from what the API itself is made
    of (:class:`_Composer`): each word's field checks (the engine's per-field decode) and each
    catalog rule's findings, remembered per the facts the library declares the rule reads
    (``checks.idesc_reads()``, the smem / zcm rule keys, ``checks.mma_reads()``: tests/test_speed_paths.py
    holds the library to them). Every ``check_every``-th record is also answered by the public
    API call itself, and a difference raises: the composition is checked as it goes."""
    ids = {code: i for i, code in enumerate(cpp_header.codes())}
    compose = _Composer(ids)
    out = array("I")
    append = out.append
    for i, rec in enumerate(RECORD.iter_unpack(data)):
        ok, codes = compose(rec)
        if i % check_every == 0:
            report = answer(rec)
            full = [ids[f.code] for f in report.findings]
            if (report.ok, full) != (ok, codes):
                raise AssertionError(f"record {i} {rec}: the API says {report.ok} {[f.code for f in report.findings]}, "
                                     f"composed {ok} {[cpp_header.codes()[c] for c in codes]}")
        append(_fnv(ok, codes))
    return out


class _Composer:
    """A record's (ok, codes) from the API's parts, each rule's findings remembered per what it reads."""

    def __init__(self, ids: dict[str, int]) -> None:
        self.ids = ids
        self.c = constraints()
        self.memo: dict[Any, tuple[tuple[int, bool], ...]] = {}
        self.ctx: dict[Any, dict[str, Any]] = {}
        self.runnable: dict[tuple[str, int], list[tuple[Any, Any, Any, dict[Any, Any]]]] = {}
        self.rule_memo: dict[tuple[str, str], dict[Any, Any]] = {}
        self.idesc_rules = [(r.code, r, checks.rule_impl(r.code), tuple(checks.idesc_reads()[r.code]),
                             frozenset(r.needs)) for r in catalog().values() if r.applies == "idesc"]
        self.plans = {k: kind_facts(k).plan for k in KINDS}
        self.smem, self.zcm, self.taddr = plan("smem_desc"), plan("zcm_desc"), plan("taddr")

    def _runnable(self, kind: str, ctx: dict[str, Any]) -> list[tuple[Any, Any, Any, dict[Any, Any]]]:
        """The idesc rules that run under ``ctx`` (its needs given), each with a getter of what it reads
        (the names present in a ``kind`` word's facts) and its memo (one per rule and kind)."""
        given = checks.given_names(ctx)
        present = set(self.plans[kind].layout.by_name) | set(ctx) | {"kind", "k", "implied_dtype"}
        out = []
        for code, rule, fn, reads, needs in self.idesc_rules:
            if needs <= given:
                names = [n for n in reads if n in present]
                get = operator.itemgetter(*names) if len(names) > 1 else (lambda v, n=names[0]: (v[n],))
                out.append((rule, fn, get, self.rule_memo.setdefault((code, kind), {})))
        return out

    def _codes(self, findings: Any) -> tuple[tuple[int, bool], ...]:
        return tuple((self.ids[f.code], f.severity == "error") for f in findings)

    def _context(self, **given: Any) -> dict[str, Any]:
        key = tuple(given.items())
        hit = self.ctx.get(key)
        if hit is None:
            hit = self.ctx[key] = context(**given)
        return hit

    def _idesc(self, word: int, kind: str, ctx: dict[str, Any], out: list[tuple[int, bool]]) -> dict[str, Any]:
        read = self.plans[kind].read(word)
        out += self._codes(read.findings)
        facts = checks._idesc_facts(kind, read.values, ctx)
        runnable = self.runnable.get((kind, id(ctx)))
        if runnable is None:
            runnable = self.runnable[kind, id(ctx)] = self._runnable(kind, ctx)
        c = self.c
        for rule, fn, get, memo in runnable:
            key = get(facts)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = self._codes(fn(rule, facts, c))
            if hit:
                out += hit
        return read.values

    def _smem(self, word: int, ctx: dict[str, Any], out: list[tuple[int, bool]]) -> dict[str, Any]:
        read = self.smem.read(word)
        out += self._codes(read.findings)
        if ctx["smem_size"] is not None:  # (the rule reads the whole start address: no key)
            out += self._codes(checks.smem_findings(read.values, ctx)[0])
            return read.values
        key = ("smem", checks._smem_key(read.values, ctx["arch"], ctx["pattern_start"]))
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._codes(checks.smem_findings(read.values, ctx)[0])
        out += hit
        return read.values

    def _zcm(self, word: int, ctx: dict[str, Any], out: list[tuple[int, bool]]) -> None:
        read = self.zcm.read(word)
        out += self._codes(read.findings)
        key = ("zcm", checks._zcm_key(read.values, ctx["m"], ctx["n"], ctx["ws"]))
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._codes(checks.zcm_findings(read.values, ctx)[0])
        out += hit

    def __call__(self, rec: tuple[Any, ...]) -> tuple[bool, list[int]]:
        op, kind, cg, ws, sp, a_tmem, sv, arch, warp, has_a, has_zcm, w0, w1, w2, w3, p0, p1 = rec
        out: list[tuple[int, bool]] = []
        if op == 0:
            ctx = self.ctx.get(rec[2:8])  # (the record's context bytes: one normalization each)
            if ctx is None:
                ctx = self.ctx[rec[2:8]] = self._context(cta_group=_opt(cg), ws=_flag(ws), sp=_flag(sp),
                                                         scale_vec=_SV[sv], a_tmem=_flag(a_tmem), arch=_ARCH[arch])
            self._idesc(w0, KINDS[kind], ctx, out)
        elif op == 1:
            self._smem(w0, self._context(arch=_ARCH[arch], pattern_start=_opt(p0), smem_size=_opt(p1)), out)
        elif op == 2:
            self._zcm(w0, self._context(m=_opt(p0), n=_opt(p1), ws=_flag(ws)), out)
        elif op == 3:
            read = self.taddr.read(w0)
            out += self._codes(read.findings)
            out += self._codes(checks.taddr_findings(read.values, self._context(warp=_opt(warp), alloc_columns=_opt(p0),
                                                                                 alloc_base=_opt(p1)))[0])
        else:  # check_mma: the idesc, A and B, the zcm under the idesc's M and N, then the rules between them
            ctx = self._context(cta_group=_opt(cg), ws=_flag(ws), sp=_flag(sp), scale_vec=_SV[sv],
                                a_tmem=_flag(a_tmem) if a_tmem >= 0 or not has_a else False, arch=_ARCH[arch])
            values = self._idesc(w0, KINDS[kind], ctx, out)
            facts: dict[str, Any] = {"idesc": {**values, "kind": KINDS[kind]}}
            for role, word, start, given in (("a_desc", w1, p0, has_a), ("b_desc", w2, p1, True)):
                if given:
                    facts[role] = self._smem(word, self._context(arch=_ARCH[arch], pattern_start=_opt(start)), out)
            if has_zcm:
                self._zcm(w3, self._context(m=values["m"], n=values["n"], ws=_flag(ws)), out)
            out += self._codes(checks.mma_findings(facts, ctx)[0])
        return all(not error for _, error in out), [code for code, _ in out]


def digests_parallel(data: bytes, jobs: int = 0) -> array:
    """:func:`digests` over ``jobs`` forked processes (0: one per CPU), in record order."""
    import multiprocessing
    import os
    jobs = jobs or len(os.sched_getaffinity(0))
    if jobs < 2:
        return digests(data)
    step = -(-len(data) // RECORD.size // jobs) * RECORD.size
    parts = [data[i:i + step] for i in range(0, len(data), step)]
    with multiprocessing.get_context("fork").Pool(len(parts)) as pool:
        done = pool.map(_digest_bytes, parts)
    out = array("I")
    for part in done:
        out.frombytes(part)
    return out


def _digest_bytes(part: bytes) -> bytes:
    return digests(part).tobytes()


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
        out = digests_parallel(data)
        with open(argv[2], "wb") as fh:
            fh.write(out.tobytes())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
