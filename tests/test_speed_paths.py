"""The fast paths give the answers of the slow ones (no timing here: bench/ measures speed).

The encoders run a word's rules once per rule key (descgen.rules.checks: what the rules read, reduced to
what decides whether they find anything) and skip them for a later value with a key found clean.
These tests walk the fields against the rules: two values with one key are both clean or both not.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import descgen
from descgen.core.memo import clear_all
from descgen.rules import checks
from descgen.model.context import context
from descgen.core.errors import DescgenError

SWIZZLES = ("none", "128B_base32B", "128B", "64B", "32B")


def _smem_values(start: int, swizzle: str, base: int, mode: str) -> dict:
    return {"start_address": start, "lbo": 16, "sbo": 1024, "swizzle": swizzle, "base_offset": base, "lbo_mode": mode}


def test_smem_rule_key_decides_the_rules():
    """Every start address bit that the key drops (bits 0-6 and 10-17) and every pattern start bit
    above bit 9 leave the rules' verdict unchanged."""
    starts = (0, 0x80, 0x100, 0x180, 0x200, 0x280, 0x300, 0x380)
    extra = (0, 0x70, 0x3FC00)
    patterns = (None, 0, 0x1, 0x80, 0x100, 0x180, 0x200, 0x300, 0x380, 0x3F0)
    for swizzle, base, mode, arch in itertools.product(SWIZZLES, range(8), ("relative", "absolute"),
                                                       (None, "sm_100a", "sm_103a")):
        for start, ps in itertools.product(starts, patterns):
            verdicts = {}
            for hi in extra:
                for ps_hi in ((0,) if ps is None else (0, 0x2C00)):
                    values = _smem_values(start + hi, swizzle, base, mode)
                    p = None if ps is None else ps + ps_hi
                    key = checks._smem_key(values, arch, p)
                    clean = not checks.smem_findings(values, context(arch=arch, pattern_start=p))[0]
                    assert verdicts.setdefault(key, clean) == clean, (values, arch, p)


def test_zcm_rule_key_decides_the_rules():
    """The exact start counts (beyond zero or not), sub-mask 0 and N leave the verdict unchanged."""
    for m, ws, shift in itertools.product((None, 16, 32, 64, 128), (None, True, False), (0, 16, 17, 32)):
        for nz in itertools.product((False, True), repeat=6):
            verdicts = {}
            for count, first0, n in itertools.product((1, 200), (0, 1), (None, 64, 256)):
                sc = [7, *(count if z else 0 for z in nz[:3])]
                fs = [first0, *(1 if z else 0 for z in nz[3:])]
                values = {"nonzero_mask": True, "skip_span": 1, "use_span": 1, "column_shift": shift,
                          **{f"start_count_{i}": v for i, v in enumerate(sc)},
                          **{f"first_span_{i}": v for i, v in enumerate(fs)}}
                key = checks._zcm_key(values, m, n, ws)
                clean = not checks.zcm_findings(values, context(m=m, n=n, ws=ws))[0]
                assert verdicts.setdefault(key[:2] + key[4:], clean) == clean, (values, m, n, ws)


def _outcome(fn, **kw):
    try:
        word = fn(**kw)
    except DescgenError as e:
        return type(e).__name__, str(e), tuple(e.findings)
    return int(word), word.findings


@pytest.mark.parametrize("warm", [False, True])
def test_encoders_same_answers_with_the_rule_memo(warm, monkeypatch):
    """The same words, findings and errors with the memo empty and warmed, for clean values,
    warnings, errors and bad context (including classes that compare equal: True == 1)."""
    cases = [
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")),
        (descgen.encode_smem, dict(start_address=0x580, lbo=16, sbo=1024, swizzle="128B")),  # warning
        (descgen.encode_smem, dict(start_address=0x580, lbo=16, sbo=1024, swizzle="128B", base_offset=3,
                                   pattern_start=0x400)),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", pattern_start=1)),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", pattern_start=True)),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", pattern_start=-1023)),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", lbo_mode="absolute")),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", lbo_mode="absolute",
                                   arch="sm_103a")),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", arch="sm_101a")),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", arch="sm_90a")),
        (descgen.encode_smem, dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B", arch=["sm_100a"])),
        (descgen.encode_smem, dict(start_address=0x408, lbo=16, sbo=1024, swizzle="128B")),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=(1, 3, 5, 7), m=32, n=64, ws=True)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=(1, 3, 5, 7), m=32, n=64, ws=1)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=(1, 3, 5, 7), m=64, n=64, ws=True)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=(1, 0, 0, 0), m=128, n=True, ws=True)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=(1, 0, 0, 0), m=128, n=1, ws=True)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=[1, 0, 0, 0], m=128, n=[1], ws=True)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, column_shift=20, m=32)),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, start_count=(1, 2, 3))),
        (descgen.encode_zcm, dict(skip_span=1, use_span=13, ws=False)),
        (descgen.encode_zcm, dict(skip_span=0, use_span=13)),
    ]
    clear_all()
    cold = [_outcome(fn, **kw) for fn, kw in cases]
    if warm:
        assert [_outcome(fn, **kw) for fn, kw in cases] == cold
        assert [_outcome(fn, **kw) for fn, kw in reversed(cases)] == cold[::-1]
    for (fn, kw), got in zip(cases, cold):  # check=False runs every rule: the same findings
        if got[0].__class__ is int:
            word = fn(**kw, check=False)
            assert int(word) == got[0] and word.findings == got[1]


def test_check_mma_decodes_each_word_once_and_runs_each_rule_once(monkeypatch):
    """check_mma decodes each of its words once and runs each rule once per word it is about
    (idesc, mma and zcm rules once; smem rules once for A and once for B), with the same report
    the validators give."""
    import collections

    from descgen.model import engine
    from descgen.model.catalog import catalog

    decodes: collections.Counter = collections.Counter()
    runs: collections.Counter = collections.Counter()
    real_read = engine.Plan.read

    def read(self, word):  # (every decode reads its word's fields here once)
        decodes[self.layout.word, word] += 1
        return real_read(self, word)

    def counted(code, fn):
        def run(rule, facts, c):
            runs[code] += 1
            return fn(rule, facts, c)
        return run

    monkeypatch.setattr(engine.Plan, "read", read)
    real_impl = checks.rule_impl
    monkeypatch.setattr(checks, "rule_impl", lambda code: counted(code, real_impl(code)))
    checks._plan.cache_clear()  # its plans hold the implementations
    clear_all()  # (so do the idesc rule groups and the instruction rules' memo, with what they found)
    try:
        idesc = descgen.encode_idesc("tf32", 128, 128, b_major="mn")
        a = descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
        b = descgen.encode_smem(start_address=0x4400, lbo=8192, sbo=1024, swizzle="128B")
        zcm = descgen.encode_zcm(skip_span=1, use_span=13, start_count=(1, 0, 0, 0))
        ctx = dict(cta_group=1, ws=True, sp=False, arch="sm_100a")
        decodes.clear()
        runs.clear()
        clear_all()  # (the encoders' rule keys found clean)
        report = descgen.check_mma(idesc=idesc, kind="tf32", a_desc=a, b_desc=b, zcm=zcm, a_pattern_start=0x400, **ctx)
        assert decodes == {("idesc", idesc): 1, ("smem", a): 1, ("smem", b): 1, ("zcm", zcm): 1}
        per_word = {"idesc": 1, "smem": 2, "zcm": 1, "mma": 1}
        ran = {code: n for code, n in runs.items()}
        assert ran and all(n <= per_word[catalog()[code].applies] for code, n in ran.items()), ran
        assert ran["SMEM-LBO-MODE-SWIZZLE"] == 2 and ran["SMEM-BASE-OFFSET-TABLE41"] == 1  # (A's pattern start only)
        assert set(ran) >= {"IDESC-M-SHAPE", "SMEM-BASE-OFFSET-TABLE41", "ZCM-M", "MMA-SWIZZLE-TABLE52"}
        assert report.codes == ("MMA-SWIZZLE-TABLE52",)
    finally:
        checks._plan.cache_clear()
    # the same findings as each validator, prefixed by role, then the instruction rules
    vi = descgen.validate_idesc(idesc, "tf32", a_tmem=False, **ctx)  # (an A descriptor: A is not in tensor memory)
    va = descgen.validate_smem(a, arch="sm_100a", pattern_start=0x400)
    vb = descgen.validate_smem(b, arch="sm_100a")
    vz = descgen.validate_zcm(zcm, m=128, n=128, ws=True)
    assert report.decoded == {"idesc": vi.decoded["idesc"], "a_desc": va.decoded["smem"], "b_desc": vb.decoded["smem"],
                              "zcm": vz.decoded["zcm"]}
    assert report.context == vi.context
    assert report.not_checked[: len(vi.not_checked)] == vi.not_checked


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(SWIZZLES), st.integers(0, (1 << 18) - 16).map(lambda a: a & ~15), st.integers(0, 7),
       st.sampled_from(("relative", "absolute")), st.sampled_from((None, "sm_100a", "sm_103a")),
       st.one_of(st.none(), st.integers(0, (1 << 18) - 1)))
def test_smem_encoder_returns_what_validate_reports(swizzle, start, base, mode, arch, pattern_start):
    """An encode that succeeds returns exactly validate_smem's findings with the word (warnings and
    notes on the descgen.Word; a clean one: none), so that batch need not validate it again."""
    kw = dict(start_address=start, lbo=16, sbo=1024, swizzle=swizzle, base_offset=base, lbo_mode=mode)
    try:
        word = descgen.encode_smem(**kw, arch=arch, pattern_start=pattern_start)
    except DescgenError:
        return
    report = descgen.validate_smem(word, arch=arch, pattern_start=pattern_start)
    assert word.findings == report.findings and report.ok
    assert word.__class__ is descgen.Word


@settings(max_examples=600, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=4, max_size=4), st.lists(st.integers(0, 1), min_size=4, max_size=4),
       st.integers(1, 256), st.integers(1, 256), st.integers(0, 32), st.sampled_from((None, 16, 32, 64, 128)),
       st.sampled_from((None, 8, 64, 256)), st.sampled_from((None, False, True)))
def test_zcm_encoder_returns_what_validate_reports(start_count, first_span, skip, use, shift, m, n, ws):
    kw = dict(start_count=start_count, first_span=first_span, skip_span=skip, use_span=use, column_shift=shift)
    try:
        word = descgen.encode_zcm(**kw, m=m, n=n, ws=ws)
    except DescgenError:
        return
    report = descgen.validate_zcm(word, m=m, n=n, ws=ws)
    assert word.findings == report.findings and report.ok
    assert word.__class__ is descgen.Word


# -- the idesc rule memo (checks.idesc_word_findings): each rule's findings per the facts it reads --

_CTX_CHOICES = {
    "cta_group": (None, 1, 2), "ws": (None, False, True), "sp": (None, False, True),
    "scale_vec": (None, "1X", "2X", "4X", "block16", "block32"), "a_tmem": (None, False, True),
    "arch": (None, "sm_100a", "sm_100f", "sm_101a", "sm_103a", "sm_110f"),
}


def _random_idesc_cases(n: int, seed: int):
    import random

    from descgen.model.loader import KINDS

    rng = random.Random(seed)
    legal = []
    for kind in KINDS:  # legal words too (the memo's common case), not only random bits
        for m, nn in ((64, 64), (128, 256), (128, 8), (256, 128)):
            try:
                legal.append((kind, descgen.encode_idesc(kind, m, nn, check=False)))
            except DescgenError:
                pass
    for i in range(n):
        if i % 3 == 0:
            kind, word = rng.choice(legal)
            word ^= rng.choice((0, 1 << rng.randrange(32)))
        else:
            kind, word = rng.choice(KINDS), rng.getrandbits(32)
        ctx = {name: rng.choice(values) for name, values in _CTX_CHOICES.items() if rng.random() < 0.6}
        yield kind, word, ctx


class _Recording(dict):
    """Facts that add every name read to ``read``."""

    def __init__(self, data, read):
        super().__init__(data)
        self.read = read

    def __getitem__(self, key):
        self.read.add(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self.read.add(key)
        return dict.get(self, key, default)


def test_idesc_reads_are_what_each_rule_reads():
    """Every idesc rule reads only the facts IDESC_READS lists for it (the memo's key), over
    random and near-legal words and contexts."""
    from descgen.model.catalog import catalog, constraints
    from descgen.words.idesc import decode_fields

    rules = [r for r in catalog().values() if r.applies == "idesc" and r.code in checks.implemented()]
    assert {r.code for r in rules} == set(checks.idesc_reads())
    for kind, word, ctx in _random_idesc_cases(3000, 11):
        d = decode_fields(word, kind)
        norm = context(**ctx)
        facts = checks._idesc_facts(d.kind, d.values(), norm)
        runnable, _ = checks._plan("idesc", frozenset(k for k, v in norm.items() if v is not None), d.kind)
        for rule, fn in runnable:  # the rules the context lets run
            rec = _Recording(facts, set())
            list(fn(rule, rec, constraints()))
            assert rec.read <= set(checks.idesc_reads()[rule.code]), \
                (rule.code, rec.read - set(checks.idesc_reads()[rule.code]))


def _random_mma_cases(n: int, seed: int):
    """(kind, idesc, A's smem word or None (A in tensor memory), B's, context): idesc words as
    :func:`_random_idesc_cases` makes them; smem words random or legal with one bit flipped."""
    import random

    rng = random.Random(seed)
    legal = [descgen.encode_smem(start_address=a, lbo=lbo, sbo=1024, swizzle=sw, lbo_mode=mode, check=False)
             for a in (0, 0x480) for lbo in (0, 16, 8192) for sw in SWIZZLES for mode in ("relative", "absolute")]
    for kind, word, ctx in _random_idesc_cases(n, seed):
        smem = [rng.choice(legal) ^ rng.choice((0, 1 << rng.randrange(64))) if rng.random() < 0.7
                else rng.getrandbits(64) for _ in range(2)]
        ctx.pop("a_tmem", None)
        yield kind, word, (None if rng.random() < 0.15 else smem[0]), smem[1], ctx


def test_mma_reads_are_what_the_instruction_rules_read():
    """Every instruction rule, run over one operand, reads only what MMA_READS lists for it (the
    memo's key) of the idesc's values and of the operand's, over random and near-legal words and
    contexts; and the rules run over both operands find what they find over each in turn."""
    from descgen.model.catalog import catalog, constraints

    order = {code: i for i, code in enumerate(catalog())}
    rules = [r for r in catalog().values() if r.applies == "mma" and r.code in checks.implemented()]
    assert {r.code for r in rules} >= {"MMA-SWIZZLE-TABLE52", "MMA-LBO-MODE-MAJOR", "MMA-LBO-IGNORED"}
    for kind, idesc, a, b, ctx in _random_mma_cases(1500, 3):
        report = descgen.check_mma(idesc=idesc, kind=kind, a_desc=a, a_tmem=a is None, b_desc=b, **ctx)
        runnable, _ = checks._plan("mma", frozenset(k for k, v in report.context.items() if v is not None), None)
        idesc_values = {**report.decoded["idesc"].values(), "kind": kind}
        operands = [role for role in ("a_desc", "b_desc") if role in report.decoded]
        each = []
        for role in operands:
            of_idesc, of_desc = set(), set()
            facts = {"idesc": _Recording(idesc_values, of_idesc),
                     role: _Recording(report.decoded[role].values(), of_desc)}
            for rule, fn in runnable:
                each += fn(rule, facts, constraints())
            assert of_idesc <= set(checks.mma_reads()[role][0]) and of_desc <= set(checks.mma_reads()[role][1]), \
                (role, of_idesc, of_desc)
        both = {"idesc": idesc_values, **{role: report.decoded[role].values() for role in operands}}
        assert [f for rule, fn in runnable for f in fn(rule, both, constraints())] == \
            sorted(each, key=lambda f: order[f.code])


@pytest.mark.parametrize("warm", [False, True])
def test_mma_rule_memo_same_answers(warm, monkeypatch):
    """check_mma (through the instruction rules' memo) reports what the rules run directly find,
    cold and warm."""
    from descgen.model.catalog import catalog

    mma_codes = {r.code for r in catalog().values() if r.applies == "mma"}
    clear_all()
    cases = list(_random_mma_cases(1500, 8))
    seen = set()
    for _ in range(2 if warm else 1):
        for kind, idesc, a, b, ctx in cases:
            report = descgen.check_mma(idesc=idesc, kind=kind, a_desc=a, a_tmem=a is None, b_desc=b, **ctx)
            facts = {"idesc": {**report.decoded["idesc"].values(), "kind": kind}}
            facts.update({role: report.decoded[role].values() for role in ("a_desc", "b_desc")
                          if role in report.decoded})
            found, skipped = checks.run_rules("mma", facts, report.context)
            assert tuple(f for f in report.findings if f.code in mma_codes) == tuple(found), (kind, hex(idesc), ctx)
            assert set(skipped) <= set(report.not_checked)
            seen.update(f.code for f in found)
    assert seen >= {"MMA-SWIZZLE-TABLE52", "MMA-LBO-MODE-MAJOR", "MMA-LBO-IGNORED"}  # (the cases reach every rule)


@pytest.mark.parametrize("warm", [False, True])
def test_idesc_rule_memo_same_answers(warm, monkeypatch):
    """validate_idesc (through the memo) gives the findings and rules not checked of the rules run
    directly (checks.idesc_findings), cold and warm, over random words, legal words and contexts."""
    from descgen.words.idesc import decode_fields

    clear_all()
    cases = list(_random_idesc_cases(4000, 5))
    for _ in range(2 if warm else 1):
        for kind, word, ctx in cases:
            norm = context(**ctx)
            d = decode_fields(word, kind)
            slow = checks.idesc_findings(d.kind, d.values(), norm)
            fast = checks.idesc_word_findings(d.kind, d.values(), norm)
            assert (fast[0], fast[1]) == (list(slow[0]), slow[1]), (kind, hex(word), ctx)
            report = descgen.validate_idesc(word, kind, **ctx)
            assert report.findings == d.findings + tuple(slow[0]) and report.not_checked == slow[1]


def test_idesc_rule_memo_keeps_context_classes():
    """A cta_group of an int subclass is not served from the memo entry of the plain int."""
    import enum

    class G(enum.IntEnum):
        TWO = 2

    word = descgen.encode_idesc("f16", 128, 8, check=False)
    plain = descgen.validate_idesc(word, "f16", cta_group=2)
    odd = descgen.validate_idesc(word, "f16", cta_group=G.TWO)
    norm = context(cta_group=G.TWO)
    from descgen.words.idesc import decode_fields
    d = decode_fields(word, "f16")
    assert odd.findings == d.findings + tuple(checks.idesc_findings("f16", d.values(), norm)[0])
    assert plain.findings and len(plain.findings) == len(odd.findings)


def test_context_memo_same_answers(monkeypatch):
    """context() gives the same normalized context or error with its memo empty and warm, keeps
    classes apart (True and 1), and hands out a fresh dict each time."""

    cases = [dict(cta_group=2), dict(cta_group=True), dict(cta_group=1), dict(ws=1), dict(ws=True), dict(ws=2),
             dict(arch="sm_101a"), dict(arch="SM_100A"), dict(arch=["sm_100a"]), dict(scale_vec="2x"), dict(foo=None),
             dict(cta_group=2, ws=None, sp=False, scale_vec=None, a_tmem=False, arch="sm_100a"), dict(m=64, n=128),
             dict(pattern_start=1024), dict(pattern_start=True), dict(pattern_start=-1)]

    def outcome(kw):
        try:
            out = context(**kw)
        except DescgenError as e:
            return type(e).__name__, str(e), e.findings
        return {k: (v, v.__class__) for k, v in out.items()}

    clear_all()
    cold = [outcome(kw) for kw in cases]
    assert [outcome(kw) for kw in cases] == cold and [outcome(kw) for kw in reversed(cases)] == cold[::-1]
    context(cta_group=2)["cta_group"] = 99
    assert context(cta_group=2)["cta_group"] == 2


def test_batch_id_echoed_as_json_writes_it():
    import json

    from descgen.batch import response_line

    for rid in (0, 1, -5, 2**70, True, False, None, 1.5, "x", [1, 2], {"a": 1}):
        line = json.loads(response_line(1, json.dumps({"op": "nope", "id": rid})))
        assert line["id"] == rid and type(line["id"]) is type(rid)
        assert response_line(1, json.dumps({"op": "nope", "id": rid})).startswith(
            '{"line":1,"id":' + json.dumps(rid, separators=(",", ":")) + ",")


def test_batch_chunks_answer_as_line_by_line():
    """descgen.batch.run with chunk > 1 (requests answered grouped by op, descriptor and kind) gives
    the lines and counts of answering each line as it comes, with the cache on and off: mixed
    ops, bad lines, repeats, blank and comment lines, a chunk edge inside a group."""
    import json

    from descgen.batch import BatchStats, run

    reqs = []
    for i in range(60):
        reqs += [json.dumps({"op": "encode", "descriptor": "idesc", "kind": ("f16", "tf32", "mxf4")[i % 3], "m": 128,
                             "n": 8 * (1 + i % 32), "id": i}),
                 json.dumps({"op": "decode", "word": hex(0x08400010 + i)}), "", "# note",
                 json.dumps({"op": "validate", "descriptor": "smem", "word": 0x4000404000010040 + (i << 4)}),
                 json.dumps({"op": "encode", "descriptor": "idesc", "kind": "f16", "m": 128, "n": 256}),  # repeated
                 '{"op": "encode",', json.dumps({"op": ["x"]}), json.dumps([1, 2]),
                 json.dumps({"op": "check", "kind": 7}),
                 json.dumps({"op": "encode", "descriptor": "zcm", "skip_span": 1, "use_span": 1 + i % 200, "m": 64,
                             "n": 128})]
    for cache in (False, True):
        one, many = BatchStats(), BatchStats()
        want = list(run(reqs, cache=cache, stats=one))
        for chunk in (2, 7, 4096):
            got = list(run(reqs, cache=cache, stats=many, chunk=chunk, start=1))
            assert got == want, chunk
        assert len(want) == len(reqs) - 120 and json.loads(want[-1])["line"] == len(reqs)
        assert (many.requests, many.ok, many.failed, many.errors) == tuple(3 * x for x in (one.requests, one.ok,
                                                                                           one.failed, one.errors))


def test_response_cache_rests_while_it_finds_nothing():
    """On distinct requests the answer cache stops looking up and storing (and empties) after a
    window that found under 1 in 16, for 4 windows, then 8, 16...; on repeats it keeps going. The
    answers are the same."""
    import json

    from descgen.batch import ResponseCache, run

    distinct = [json.dumps({"op": "encode", "descriptor": "smem", "start_address": 16 * i, "lbo": 16, "sbo": 1024,
                            "swizzle": "none"}) for i in range(300)]
    cache = ResponseCache(window=64)
    assert list(run(distinct, cache=cache)) == list(run(distinct, cache=False))
    assert cache.resting == 64 + 4 * 64 - 300 and len(cache) == 0  # resting after the first window, for 4 windows
    list(run(distinct[:10] * 4, cache=cache))
    assert len(cache) == 10 and cache.resting == 0 and cache.found == 10  # then it tries again
    series = ResponseCache(window=64)
    many = [json.dumps({"op": "decode", "word": i}) for i in range(64 + 4 * 64 + 64 + 8 * 64 + 64)]
    assert list(run(many, cache=series)) == list(run(many, cache=False))
    assert series.resting == 16 * 64 and series.rest == 32  # rests of 4, 8, then 16 windows
    list(run(many[:1] * (16 * 64) + many[:8] * 8, cache=series))
    assert series.resting == 0 and series.found == 0 and series.rest == 4  # a window that finds enough ends the series
    repeats = ResponseCache(window=64)
    assert list(run(distinct[:10] * 30, cache=repeats)) == list(run(distinct[:10] * 30, cache=False))
    assert repeats.resting == 0 and len(repeats) == 10


@settings(max_examples=400, deadline=None)
@given(st.integers(0, (1 << 64) - 1), st.sampled_from((None, "sm_100a", "sm_103a")),
       st.one_of(st.none(), st.integers(0, (1 << 18) - 1)), st.integers(0, (1 << 64) - 1),
       st.sampled_from((None, 32, 64, 128)), st.sampled_from((None, 64, 256)), st.sampled_from((None, False, True)))
def test_validators_same_reports_with_the_rule_keys_warm(smem, arch, pattern_start, zcm, m, n, ws):
    """validate_smem / validate_zcm skip the rules for a rule key found clean before: the same
    report as with the keys forgotten, for random words (every field, reserved bits too)."""
    clear_all()
    cold = (descgen.validate_smem(smem, arch=arch, pattern_start=pattern_start),
            descgen.validate_zcm(zcm, m=m, n=n, ws=ws))
    warm = (descgen.validate_smem(smem, arch=arch, pattern_start=pattern_start),
            descgen.validate_zcm(zcm, m=m, n=n, ws=ws))
    assert warm == cold


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_batch_json_writer_writes_what_json_writes(value):
    """batch's JSON writer (the C encoder made once) writes what json.dumps writes with the same
    options: compact, ASCII (non-ASCII escaped), no NaN; and so does its plain fallback."""
    import json

    from descgen.batch import codec

    want = json.dumps(value, separators=(",", ":"), allow_nan=False)
    assert codec.dumps(value) == want == codec.dumps_plain(value)
    assert codec.encoder()(value) == want


def test_batch_json_writer_refuses_what_json_refuses(monkeypatch):
    import json

    from descgen.batch import codec

    for bad in (float("nan"), [1, float("inf")], {"a": object()}):
        with pytest.raises((ValueError, TypeError)):
            codec.dumps(bad)
    assert codec.dumps_plain(descgen.validate_idesc(0x08400010, "f16").findings) == "[]"
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)  # (a Python without json's C encoder)
    plain = codec.encoder(codec.json_default)
    finding = descgen.decode_smem(0x4000).findings or descgen.decode_idesc(1 << 6, "f16").findings
    assert finding and plain(finding) == json.dumps([f.as_dict() for f in finding], separators=(",", ":"))


@pytest.mark.parametrize("text", [
    '{"op": "decode", "word": 1}', '{"a": [1, 2.5, "x\\u00e9"], "b": {"c": null}}', "[]", "1", '"s"', "{", "{} x",
    "[1] [2]", '{"a": 1, "a": 2}', '{"a": {"b": 1, "b": 2}}', "NaN", '{"a": Infinity}', "1e999", "-", "tru", '"\\x"',
    '{"a" 1}', "\x00", "[" * 5000 + "]" * 5000,
])
def test_batch_reads_a_line_as_json_reads_it(text):
    """A line read by the decoder's scanner directly is the value json's decode gives, and a line
    that is not one JSON value gets json's own error."""
    from descgen.batch import codec

    try:
        want: object = codec.loads(text)
    except (ValueError, RecursionError) as e:
        got = codec.parse(text)
        assert isinstance(got, codec.NotJSON) and str(got.error) == str(e) and type(got.error) is type(e)
    else:
        assert codec.parse(text) == want


def test_every_memo_is_bounded_and_none_is_bounded_by_hand():
    """What descgen remembers between calls is in descgen.core.memo.Memo (a limit each) or functools.cache
    over the tables' finite keys: a memo past its limit starts again, and no module bounds a dict of
    its own (``if len(x) >= N: x.clear()``)."""
    import pathlib
    import re

    from descgen.core.memo import MEMOS, Memo

    import descgen.batch, descgen.words.idesc, descgen.words.smem  # noqa: F401,E401 (every memo made)
    assert MEMOS and all(m.limit > 0 and m.name for m in MEMOS)
    memo = Memo("test", 4)
    for i in range(9):
        assert memo.remember(i, -i) == -i and len(memo) <= 4
    assert memo == {8: -8}
    MEMOS.remove(memo)
    root = pathlib.Path(descgen.__file__).parent
    by_hand = [str(p) for p in root.rglob("*.py") if p.name != "memo.py"
               and re.search(r"if len\((\w+)\) >= [^:]+:\s*\n\s*\1\.clear\(\)", p.read_text())]
    assert not by_hand
