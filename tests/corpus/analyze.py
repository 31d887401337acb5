#!/usr/bin/env python3
"""Where the descriptor operands of tcgen05.mma / tcgen05.cp come from, per corpus file.

A rough, independent def-use walk (NOT the descgen scanner; it only exists to
write PATTERNS.md): for every tcgen05.mma and tcgen05.cp it follows the
registers of the descriptor operands back through all their definitions in the
enclosing function and reports the leaves they come from:

  const    integer literal                 param    ld.param
  pred     a predicate (setp, selp's condition)
  load     ld / ld.shared / ld.global ...  smem     a shared memory symbol (mov/cvta of it)
  special  %tid, %ctaid, ...               asm-out  output of an instruction not modelled
  undef    register never defined in the function

and a class per operand: immediate (literal in the instruction), constant
(every leaf a literal), param, load, computed (literals mixed with run-time
leaves such as a shared memory address or a loop counter).  Flags say whether
any register on the way has several definitions (multi-def), a predicated
definition (pred-def) or depends on itself (loop).  When an operand's value is
fully constant it is evaluated (mov, or/and/xor, shl/shr, add/sub, cvt, bfe,
16/32/64-bit vector packing) and printed in hex.  A rough known-bits evaluation
(KnownBits) says which bits of each operand are known at compile time (full,
partial, unknown) and, for a 64-bit shared memory descriptor, which fields are
not fully known.

    python tests/corpus/analyze.py FILE_OR_DIR... [--json] [--lines]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trim  # noqa: E402

NO_DEST = re.compile(r"^(st|stmatrix|red|bar|barrier|bra|ret|exit|fence|tcgen05\.(mma|cp|commit|st|wait|fence|dealloc|"
                     r"relinquish_alloc_permit|alloc|shift)|cp\.async|cp\.reduce|membar|trap|prefetch|"
                     r"griddepcontrol|setmaxnreg|call|@|elect|mbarrier\.(init|arrive\.expect_tx\.shared::cluster|"
                     r"expect_tx|inval)|nanosleep|cvt\.pack|discard|applypriority|multimem\.st|"
                     r"wgmma\.(fence|commit|wait)|st\.async|pmevent)")
SPECIAL = re.compile(r"^%(tid|ntid|ctaid|nctaid|laneid|warpid|nwarpid|smid|nsmid|clusterid|nclusterid|"
                     r"cluster_ctaid|cluster_nctaid|cluster_ctarank|cluster_nctarank|clock|clock64|globaltimer|"
                     r"lanemask_\w+|dynamic_smem_size|total_smem_size|aggr_smem_size|envreg\d+|pm\d+)")
INT = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[Uu]?$")


def parse_int(tok):
    t = tok.rstrip("Uu")
    neg = t.startswith("-")
    t = t.lstrip("+-")
    v = int(t, 16) if t[:2].lower() == "0x" else int(t, 2) if t[:2].lower() == "0b" else int(t, 10)
    return -v if neg else v


def split_operands(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Instr:
    __slots__ = ("line", "guard", "op", "ops", "dests", "text")

    def __init__(self, line, guard, op, ops, text):
        self.line, self.guard, self.op, self.ops, self.text = line, guard, op, ops, text
        self.dests = []


def functions(text):
    """Yield (name, first_line, [Instr]) for every function definition."""
    pos = 0
    for chunk in trim.split_top_level(text):
        kind, name = trim.classify(chunk)
        first = text.count("\n", 0, pos) + 1
        pos += len(chunk)
        if kind != "def":
            continue
        body_start = chunk.index("{")
        instrs = []
        line0 = first + chunk.count("\n", 0, body_start)
        code = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), chunk[body_start:], flags=re.S)
        for k, raw in enumerate(code.split("\n")):
            ln = line0 + k
            raw = raw.split("//", 1)[0]
            for stmt in raw.split(";"):
                s = stmt.strip().strip("{}").strip()
                if not s or s.endswith(":") or s.startswith("."):
                    continue
                s = re.sub(r"^[A-Za-z_$][\w$]*:\s*", "", s)  # label on the same line
                m = re.match(r"^(@!?%?[\w$]+\s+)?([A-Za-z_][\w.:]*)\s*(.*)$", s)
                if not m:
                    continue
                guard = (m.group(1) or "").strip() or None
                op = m.group(2)
                ins = Instr(ln, guard, op, split_operands(m.group(3)), s)
                if ins.ops and not NO_DEST.match(op):
                    d = ins.ops[0]
                    if d.startswith("{"):
                        ins.dests = [x.strip() for x in d.strip("{}").split(",")]
                    else:
                        ins.dests = [x.strip() for x in d.split("|")]
                instrs.append(ins)
        yield name, first, instrs


class Func:
    def __init__(self, instrs, smem_symbols):
        self.instrs = instrs
        self.defs = defaultdict(list)
        for ins in instrs:
            for i, d in enumerate(ins.dests):
                self.defs[d].append((ins, i))
        self.smem = smem_symbols
        self.memo = {}

    def leaf_of_token(self, tok):
        tok = tok.strip()
        if INT.match(tok):
            return "const"
        if SPECIAL.match(tok):
            return "special"
        if tok.startswith("%") or tok in self.defs:
            return None  # a register
        base = re.split(r"[+\[\]\s]", tok.strip("[]"))[0]
        return "smem" if base in self.smem else "symbol"

    def trace(self, reg, stack=()):
        """Return (leaves:set, flags:set, ops:Counter)."""
        if reg in self.memo:
            return self.memo[reg]
        if reg in stack:
            return {"loop"}, {"loop"}, Counter()
        leaves, flags, ops = set(), set(), Counter()
        defs = self.defs.get(reg, [])
        if not defs:
            leaves.add("undef")
        if len(defs) > 1:
            flags.add("multi-def")
        for ins, idx in defs:
            if ins.guard:
                flags.add("pred-def")
            ops[ins.op] += 1
            if ins.op.startswith("ld.param"):
                leaves.add("param")
                continue
            if re.match(r"^(ld|ldu|tcgen05\.ld|shfl|atom|ld\.global|ldmatrix)\b", ins.op):
                leaves.add("load")
                continue
            if re.match(r"^(setp|and\.pred|or\.pred|not\.pred|xor\.pred|mov\.pred)", ins.op):
                leaves.add("pred")
                continue
            if re.match(r"^(elect|mbarrier|vote|activemask|match|redux|tcgen05|cvt\.rn\.satfinite)", ins.op):
                leaves.add("asm-out")
                continue
            srcs = ins.ops[1:]
            if ins.op.startswith("mov") and len(ins.dests) > 1:
                srcs = ins.ops[1:]  # unpacking: every piece depends on the source
            for s in srcs:
                toks = [t.strip() for t in s.strip("{}").split(",")] if s.startswith("{") else [s]
                for t in toks:
                    lf = self.leaf_of_token(t)
                    if lf is not None:
                        leaves.add(lf)
                        continue
                    l2, f2, o2 = self.trace(t, stack + (reg,))
                    leaves |= l2 - {"loop"}
                    flags |= f2
                    if "loop" in l2:
                        flags.add("loop")
                    ops.update(o2)
        res = (leaves, flags, ops)
        if not stack:
            self.memo[reg] = res
        return res

    # --- constant evaluation (single definitions only) ---
    def value(self, tok, width=64, depth=0):
        tok = tok.strip()
        if INT.match(tok):
            return parse_int(tok) & ((1 << width) - 1)
        defs = self.defs.get(tok, [])
        if len(defs) != 1 or depth > 60:
            return None
        ins, idx = defs[0]
        if ins.guard:
            return None
        op = ins.op
        w = int(re.search(r"(\d+)$", op.split(".")[-1]).group(1)) if re.search(r"\.[bsu](\d+)$", op) else width
        src = ins.ops[1:]

        def v(t, ww=w):
            return self.value(t, ww, depth + 1)
        mask = (1 << w) - 1
        try:
            if op.startswith("mov"):
                if len(ins.dests) > 1:  # unpack
                    whole = v(src[0], w)
                    piece = w // len(ins.dests)
                    return None if whole is None else (whole >> (piece * idx)) & ((1 << piece) - 1)
                if src[0].startswith("{"):
                    parts = [p.strip() for p in src[0].strip("{}").split(",")]
                    piece = w // len(parts)
                    vals = [v(p, piece) for p in parts]
                    if None in vals:
                        return None
                    return sum(x << (piece * i) for i, x in enumerate(vals))
                return v(src[0])
            if op.startswith("cvt"):
                sw = int(re.search(r"(\d+)$", op).group(1))
                x = v(src[0], sw)
                return None if x is None else x & mask
            a = v(src[0]) if src else None
            b = v(src[1]) if len(src) > 1 else None
            if None in (a, b):
                return None
            base = op.split(".")[0]
            if base == "or":
                return (a | b) & mask
            if base == "and":
                return a & b & mask
            if base == "xor":
                return (a ^ b) & mask
            if base == "add":
                return (a + b) & mask
            if base == "sub":
                return (a - b) & mask
            if base == "shl":
                return (a << b) & mask
            if base == "shr":
                return (a >> b) & mask
            if base == "bfe":
                c = v(src[2])
                return None if c is None else (a >> b) & ((1 << c) - 1)
        except (ValueError, IndexError, AttributeError):
            return None
        return None


class KnownBits:
    """Rough known-bits evaluation: (mask, value) of the bits known at compile time.

    Unknown leaves: loads, parameters, special registers, unmodelled instructions; a shared
    memory symbol is unknown but for its low 4 bits (16-byte aligned).  Several definitions
    (or a loop) give the bits all of them agree on; a register on a cycle starts unknown."""

    def __init__(self, func):
        self.f = func
        self.memo = {}

    def tok(self, t, w, stack):
        t = t.strip()
        full = (1 << w) - 1
        if INT.match(t):
            return full, parse_int(t) & full
        if SPECIAL.match(t):
            return 0, 0
        if t.startswith("%") or t in self.f.defs:
            return self.reg(t, w, stack)
        base = re.split(r"[+\[\]\s]", t.strip("[]"))[0]
        if base in self.f.smem:
            return 0xF, 0
        return 0, 0

    def reg(self, r, w, stack=()):
        key = (r, w)
        if key in self.memo:
            return self.memo[key]
        if r in stack:
            return 0, 0
        defs = self.f.defs.get(r, [])
        res = None
        for ins, idx in defs:
            m, v = self.one(ins, idx, w, stack + (r,))
            if res is None:
                res = (m, v & m)
            else:
                agree = res[0] & m & ~(res[1] ^ v)
                res = (agree, res[1] & agree)
        res = res or (0, 0)
        if not stack:
            self.memo[key] = res
        return res

    def one(self, ins, idx, w, stack):
        op = ins.op
        src = ins.ops[1:]
        mw = re.search(r"\.[bsuf](\d+)$", op)
        ow = int(mw.group(1)) if mw else w
        ofull = (1 << ow) - 1

        def T(t, ww=ow):
            return self.tok(t, ww, stack)
        base = op.split(".")[0]
        try:
            if base == "mov":
                if len(ins.dests) > 1:
                    m, v = T(src[0], ow)
                    piece = ow // len(ins.dests)
                    pm = (1 << piece) - 1
                    return (m >> (piece * idx)) & pm, (v >> (piece * idx)) & pm
                if src[0].startswith("{"):
                    parts = [x.strip() for x in src[0].strip("{}").split(",")]
                    piece = ow // len(parts)
                    m = v = 0
                    for i, x in enumerate(parts):
                        pm_, pv_ = T(x, piece)
                        m |= pm_ << (piece * i)
                        v |= pv_ << (piece * i)
                    return m, v
                return T(src[0])
            if base == "cvt":
                parts = op.split(".")
                sw = int(re.search(r"(\d+)$", parts[-1]).group(1))
                dw = int(re.search(r"(\d+)$", parts[-2]).group(1)) if re.search(r"\d+$", parts[-2]) else w
                m, v = T(src[0], sw)
                if parts[-1].startswith("s") and dw > sw and not (m >> (sw - 1)) & 1:
                    return m & ((1 << (sw - 1)) - 1), v & ((1 << (sw - 1)) - 1)
                if parts[-1].startswith("s") and dw > sw:  # known sign: extend
                    ext = ((1 << dw) - 1) ^ ((1 << sw) - 1)
                    sign = (v >> (sw - 1)) & 1
                    return m | ext, v | (ext if sign else 0)
                high = ((1 << dw) - 1) ^ ((1 << sw) - 1)
                return m | high, v
            if base in ("and", "or", "xor", "not"):
                am, av = T(src[0])
                if base == "not":
                    return am, ~av & am
                bm, bv = T(src[1])
                if base == "and":
                    zero = (am & ~av) | (bm & ~bv)
                    one = am & bm & av & bv
                    return (zero | one) & ofull, one
                if base == "or":
                    one = (am & av) | (bm & bv)
                    zero = am & bm & ~av & ~bv
                    return (zero | one) & ofull, one
                return am & bm, (av ^ bv) & am & bm
            if base in ("shl", "shr"):
                am, av = T(src[0])
                sm, sv = T(src[1], 32)
                if sm != 0xFFFFFFFF:
                    return 0, 0
                if base == "shl":
                    return ((am << sv) | ((1 << sv) - 1)) & ofull, (av << sv) & ofull
                if ".s" in op and not (am >> (ow - 1)) & 1:
                    return (am >> sv), (av >> sv)
                top = ofull ^ (ofull >> sv) if ".s" not in op else 0
                return ((am >> sv) | top) & ofull, (av >> sv) & ofull
            if base == "bfe":
                am, av = T(src[0])
                pm, pv = T(src[1], 32)
                lm, lv = T(src[2], 32)
                if pm != 0xFFFFFFFF or lm != 0xFFFFFFFF or ".u" not in op:
                    return 0, 0
                fm = (1 << lv) - 1
                return ((am >> pv) & fm) | (ofull ^ fm), (av >> pv) & fm
            if base in ("add", "sub"):
                am, av = T(src[0])
                bm, bv = T(src[1])
                if base == "sub":
                    if bm != ofull:
                        return 0, 0
                    bv = (-bv) & ofull
                # carry-aware known bits (the KnownBits add rule of LLVM)
                lz, lo_ = ofull & am & ~av, av & am
                rz, ro = ofull & bm & ~bv, bv & bm
                psz = ((~lz & ofull) + (~rz & ofull)) & ofull
                pso = (lo_ + ro) & ofull
                ckz = ~(psz ^ lz ^ rz) & ofull
                cko = (pso ^ lo_ ^ ro) & ofull
                known = (lz | lo_) & (rz | ro) & (ckz | cko)
                return known, pso & known
            if base == "mul" and ".lo" in op or base == "mul" and ".wide" not in op and ".hi" not in op:
                am, av = T(src[0])
                bm, bv = T(src[1])
                for (xm, xv), (ym, yv) in (((am, av), (bm, bv)), ((bm, bv), (am, av))):
                    if ym == ofull and yv and yv & (yv - 1) == 0:
                        sh = yv.bit_length() - 1
                        return ((xm << sh) | ((1 << sh) - 1)) & ofull, (xv << sh) & ofull
                return 0, 0
            if base == "selp":
                am, av = T(src[0])
                bm, bv = T(src[1])
                agree = am & bm & ~(av ^ bv)
                return agree, av & agree
        except (ValueError, IndexError, AttributeError):
            return 0, 0
        return 0, 0


def descriptor_operands(ins):
    """[(role, operand)] for the descriptor operands of a tcgen05.mma / tcgen05.cp."""
    ops = ins.ops
    if ins.op.startswith("tcgen05.cp"):
        return [("s-desc", ops[1])] if len(ops) > 1 else []
    res = []
    if len(ops) >= 4:
        if not ops[1].startswith("["):
            res.append(("a-desc", ops[1]))
        res.append(("b-desc", ops[2]))
        res.append(("idesc", ops[3]))
    return res


SMEM_FIELDS = {"start_address": (0, 14), "lbo": (16, 14), "sbo": (32, 14), "version": (46, 2),
               "base_offset": (49, 3), "lbo_mode": (52, 1), "swizzle": (61, 3)}


def classify(func, operand, role, kb):
    width = 64 if role.endswith("desc") and role != "idesc" else 32
    full = (1 << width) - 1
    if INT.match(operand):
        v = parse_int(operand) & full
        return dict(cls="immediate", leaves=["const"], flags=[], value=hex(v), known_mask=hex(full),
                    known_value=hex(v), known="full", unknown_fields=[])
    leaves, flags, ops = func.trace(operand)
    if leaves <= {"const"}:
        cls = "constant"
    elif "param" in leaves:
        cls = "param"
    elif "load" in leaves and not (leaves - {"load", "const"}):
        cls = "load"
    else:
        cls = "computed"
    val = func.value(operand, width)
    m, v = kb.reg(operand, width)
    known = "full" if m == full else "partial" if m else "unknown"
    unknown_fields = []
    if width == 64:
        unknown_fields = [n for n, (lo, w) in SMEM_FIELDS.items() if (m >> lo) & ((1 << w) - 1) != (1 << w) - 1]
    else:
        unknown_fields = [f"bit{i}" for i in range(32) if not (m >> i) & 1]
    return dict(cls=cls, leaves=sorted(leaves), flags=sorted(flags), ops=dict(ops),
                value=None if val is None else hex(val), known_mask=hex(m), known_value=hex(v), known=known,
                unknown_fields=unknown_fields)


def analyze(path):
    text = Path(path).read_text(errors="replace")
    smem = set(re.findall(r"\.shared\s[^;]*?([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\])?\s*;", text))
    out = dict(file=str(path), version=(re.search(r"^\s*\.version\s+(\S+)", text, re.M) or [None, None])[1],
               target=(re.search(r"^\s*\.target\s+(.+)$", text, re.M) or [None, None])[1], instructions=[])
    for name, first, instrs in functions(text):
        if not any(i.op.startswith(("tcgen05.mma", "tcgen05.cp")) for i in instrs):
            continue
        f = Func(instrs, smem)
        kb = KnownBits(f)
        for ins in instrs:
            if not ins.op.startswith(("tcgen05.mma", "tcgen05.cp")):
                continue
            rec = dict(line=ins.line, op=ins.op, operands={})
            for role, opnd in descriptor_operands(ins):
                rec["operands"][role] = dict(operand=opnd, **classify(f, opnd, role, kb))
            out["instructions"].append(rec)
    return out


def check_known(results):
    """Validate with descgen every word whose checked fields are all known (needs descgen importable).

    idesc: fully known words, with kind, cta_group, scale_vec, a_tmem and ws from the qualifiers.
    shared memory descriptors (A, B, tcgen05.cp source): words whose bits 16-63 are all known; bits 0-15 (the
    start address and two reserved bits, which a carry may reach) are set to 0.  Returns Counter of (role, severity,
    code)."""
    import descgen
    found = Counter()
    examples = {}
    for r in results:
        for i in r["instructions"]:
            op = i["op"]
            q = op.split(".")
            kind = next((x.split("::")[1] for x in q if x.startswith("kind::")), None)
            cg = next((int(x.split("::")[1]) for x in q if x.startswith("cta_group::")), None)
            sv = next((x.split("::")[1] for x in q if x.startswith("scale_vec::")), None)
            sv = sv or next((x for x in q if x in ("block16", "block32")), None)
            for role, o in i["operands"].items():
                m, v = int(o["known_mask"], 16), int(o["known_value"], 16)
                if role == "idesc":
                    if m != 0xFFFFFFFF or not kind:
                        continue
                    rep = descgen.validate_idesc(v, kind, cta_group=cg, scale_vec=sv,
                                                 a_tmem="a-desc" not in i["operands"], ws=".ws" in op)
                else:
                    if (m >> 16) != (1 << 48) - 1:
                        continue
                    rep = descgen.validate_smem(v & ~0xFFFF)
                for f in rep.findings:
                    key = (Path(r["file"]).name, role, f.severity, f.code, f"{f.field}={f.value}")
                    found[key] += 1
                    examples.setdefault(key, (i["line"], hex(v)))
    return found, examples


def _cell(ops):
    if not ops:
        return "-"
    cls = Counter(o["cls"] for o in ops)
    kn = Counter(o["known"] for o in ops)
    fl = Counter(f for o in ops for f in o["flags"])
    unk = Counter(u for o in ops if o["known"] == "partial" and len(o["unknown_fields"]) < 8
                  for u in o["unknown_fields"])
    parts = [", ".join(f"{k} {n}" for k, n in sorted(cls.items()))]
    parts.append("known: " + ", ".join(f"{k} {n}" for k, n in sorted(kn.items())))
    if unk:
        parts.append("unknown fields: " + ", ".join(f"{k} {n}" for k, n in sorted(unk.items())))
    if fl:
        parts.append("; ".join(f"{k} {n}" for k, n in sorted(fl.items())))
    return "; ".join(parts)


def markdown_table(results):
    rows = ["| file | .version | mma | cp | A desc | B desc | idesc | cp src desc |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        ins = r["instructions"]
        mma = [i for i in ins if i["op"].startswith("tcgen05.mma")]
        cp = [i for i in ins if i["op"].startswith("tcgen05.cp")]
        a_tmem = sum(1 for i in mma if "a-desc" not in i["operands"])

        def col(role, group):
            return _cell([i["operands"][role] for i in group if role in i["operands"]])
        acell = col("a-desc", mma) + (f"; A in tensor memory {a_tmem}" if a_tmem else "")
        rows.append(f"| {Path(r['file']).name} | {r['version']} | {len(mma)} | {len(cp)} | {acell} | "
                    f"{col('b-desc', mma)} | {col('idesc', mma)} | {col('s-desc', cp)} |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--lines", action="store_true", help="one line per instruction")
    ap.add_argument("--table", action="store_true", help="a Markdown table, one row per file")
    ap.add_argument("--check", action="store_true",
                    help="validate the known words with descgen (see check_known) and list the findings")
    a = ap.parse_args(argv)
    files = []
    for p in a.paths:
        pp = Path(p)
        files += sorted(pp.rglob("*.ptx")) if pp.is_dir() else [pp]
    results = [analyze(f) for f in files]
    if a.json:
        json.dump(results, sys.stdout, indent=1)
        return 0
    if a.table:
        print(markdown_table(results))
        return 0
    if a.check:
        found, ex = check_known(results)
        for key, n in sorted(found.items()):
            print(f"{key[0]}: {key[1]}: {key[2]} {key[3]} {key[4]} x{n} (first at line {ex[key][0]}, "
                  f"known bits {ex[key][1]})")
        print(f"{sum(found.values())} findings")
        return 0
    for r in results:
        ins = r["instructions"]
        mma = [i for i in ins if i["op"].startswith("tcgen05.mma")]
        cp = [i for i in ins if i["op"].startswith("tcgen05.cp")]
        print(f"{r['file']}: .version {r['version']} .target {r['target']}: {len(mma)} tcgen05.mma, "
              f"{len(cp)} tcgen05.cp")
        summary = defaultdict(Counter)
        for i in ins:
            for role, o in i["operands"].items():
                key = o["cls"] + ("[" + ",".join(o["flags"]) + "]" if o["flags"] else "")
                summary[role][key] += 1
                summary[role + " known"][o["known"] + ("" if o["known"] != "partial" or role == "idesc" else
                                                       " (unknown: " + ",".join(o["unknown_fields"]) + ")")] += 1
        for role in ("a-desc", "b-desc", "idesc", "s-desc"):
            for r2 in (role, role + " known"):
                if r2 in summary:
                    print(f"    {r2:13} " + ", ".join(f"{k}: {n}" for k, n in sorted(summary[r2].items())))
        if a.lines:
            for i in ins:
                print(f"    {i['line']}: {i['op']}")
                for role, o in i["operands"].items():
                    print(f"        {role:7} {o['operand']:10} {o['cls']:9} leaves={','.join(o['leaves'])} "
                          f"flags={','.join(o['flags'])} value={o['value']} known={o['known']} "
                          f"mask={o['known_mask']} bits={o['known_value']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
