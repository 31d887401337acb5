"""A concrete PTX interpreter for the soundness tests (tests/test_scan_soundness.py): it runs a
function's statements one thread at a time, follows branches, gives every run-time leaf a random
value (kernel parameters, loads, special registers within their architectural bounds, shared
memory symbols below 2**18 aligned as declared, every opcode it does not model), and records the
value of every register operand of each ``tcgen05.mma`` / ``tcgen05.cp`` / ``wgmma.mma_async`` it
executes (:data:`TARGETS`).

Independent of descgen's dataflow on purpose: its own operand parsing, its own scope resolution
(``.reg`` in nested braces, ``_`` sinks, ``name<N>`` ranges, labels per scope) and its own
arithmetic. It shares only the statement splitter (descgen.ptx.lexer.events), which decides where a
statement ends and nothing about what it means.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from descgen.ptx.lexer import events

M = {w: (1 << w) - 1 for w in (1, 8, 16, 32, 64, 128)}
SPECIAL = {"%laneid": (0, 31), "%warpid": (0, 63), "%tid.x": (0, 1023), "%tid.y": (0, 1023), "%tid.z": (0, 63),
           "%ntid.x": (1, 1024), "%ntid.y": (1, 1024), "%ntid.z": (1, 64), "%ctaid.x": (0, 2 ** 31 - 2),
           "%ctaid.y": (0, 65534), "%ctaid.z": (0, 65534), "%nctaid.x": (1, 2 ** 31 - 1), "%nctaid.y": (1, 65535),
           "%nctaid.z": (1, 65535), "%cluster_ctarank": (0, 15), "%cluster_nctarank": (1, 16),
           "%cluster_ctaid.x": (0, 15), "%cluster_ctaid.y": (0, 15), "%cluster_ctaid.z": (0, 15),
           "%cluster_nctaid.x": (1, 16), "%cluster_nctaid.y": (1, 16), "%cluster_nctaid.z": (1, 16)}
_INT = re.compile(r"-?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]+|[0-9]+)[uU]?")
#: The instructions whose descriptor operands the scanner checks: the runs head for them.
TARGETS = ("tcgen05.mma", "tcgen05.cp", "wgmma.mma_async")
_NO_DEST = {"bar", "barrier", "bra", "brx", "ret", "exit", "trap", "st", "red", "prefetch", "prefetchu", "nanosleep",
            "fence", "membar", "griddepcontrol", "setmaxnreg", "pmevent", "stmatrix", "discard", "applypriority",
            "call"}


def lit(t: str) -> int | None:
    """An integer literal as ptxas 13.0 reads it (E48, tests/corpus/wide_immediates.json): digit
    by digit into a 64-bit total that wraps, "Constant overflow" (None: the PTX does not assemble)
    for a digit read while the total has its top bit set, a minus sign negating modulo 2**64. An
    operand then takes the low bits of its width (:meth:`Machine.val`)."""
    t = t.strip()
    if not _INT.fullmatch(t):
        return None
    neg = t.startswith("-")
    d = t.lstrip("-").rstrip("uU")
    if d[:2].lower() == "0x":
        radix, d = 16, d[2:]
    elif d[:2].lower() == "0b":
        radix, d = 2, d[2:]
    elif len(d) > 1 and d[0] == "0":
        radix, d = 8, d[1:]
    else:
        radix = 10
    v = 0
    for ch in d:
        if v >> 63:
            return None
        v = (v * radix + int(ch, radix)) % 2 ** 64
    return (-v) % 2 ** 64 if neg else v


def split(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
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


@dataclass
class Stmt:
    line: int
    guard: tuple[str, bool] | None  # (key, negated)
    op: str
    texts: list[str]  # the operands as written
    # operands with names resolved: ("r", key) | ("i", int) | ("s", special) | ("m", sym, off) | ("v", [..])
    # | ("p", [..]) | ("_",) | ("x", text)
    args: list
    target: int | None = None


@dataclass
class Fn:
    stmts: list[Stmt] = field(default_factory=list)
    labels: dict[tuple[int, str], int] = field(default_factory=dict)
    pending: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)


def parse(text: str, shared: dict[str, int] | None = None) -> list[Fn]:
    """Every function body (and the statements outside any) of a PTX text."""
    shared = {} if shared is None else shared
    fns: list[Fn] = []
    fn = Fn()
    scopes: list[tuple[int, dict[str, str], list[tuple[str, int, str]]]] = [(0, {}, [])]
    sid = 0
    body = None
    header = False

    def resolve(name: str) -> str | None:
        for s, names, ranges in reversed(scopes):
            if name in names:
                return names[name]
            for pre, n, suf in ranges:
                rest = name[len(pre):]
                if name.startswith(pre) and rest.isdigit() and (rest == "0" or rest[0] != "0") and int(rest) < n:
                    return name + suf
        return name if name.startswith("%") and not name.startswith(tuple(SPECIAL)) and not re.match(
            r"%(clock|lanemask|smid|nsmid|gridid|globaltimer|dynamic_smem|total_smem|pm|envreg|nwarpid|cluster|"
            r"is_explicit|aggr|reserved|current)", name) else None

    def operand(t: str):
        t = t.strip()
        if t == "_":
            return ("_",)
        if t.startswith("{"):
            return ("v", [operand(x) for x in split(t[1:-1])])
        if "|" in t:
            return ("p", [operand(x) for x in t.split("|")])
        if t.startswith("["):
            return ("x", t)
        n = lit(t)
        if n is not None:
            return ("i", n)
        if t.startswith("%") and (t in SPECIAL or resolve(t) is None):
            return ("s", t)
        k = resolve(t)
        if k is not None:
            return ("r", k)
        m = re.fullmatch(r"([A-Za-z_$][\w$]*)\s*(?:\+\s*(\S+))?", t)
        if m and m.group(1) in shared:
            return ("m", m.group(1), lit(m.group(2) or "0") or 0)
        return ("x", t)

    def finish():
        nonlocal fn
        for idx, name, chain in fn.pending:
            for s in chain:
                if (s, name) in fn.labels:
                    fn.stmts[idx].target = fn.labels[(s, name)]
                    break
        fns.append(fn)
        fn = Fn()

    for kind, line, text in events(text.splitlines()):
        if kind == "open":
            sid += 1
            scopes.append((sid, {}, []))
            if header and body is None:
                body = len(scopes) - 1
            header = False
            continue
        if kind == "close":
            header = False
            if len(scopes) > 1:
                scopes.pop()
                if body is not None and len(scopes) - 1 < body:
                    finish()
                    scopes[:] = [(0, {}, [])]
                    body = None
            continue
        if kind == "label":
            fn.labels[(scopes[-1][0], text)] = len(fn.stmts)
            continue
        if text.startswith("."):
            words = text.split()
            if words[0] == ".reg":
                inner = len(scopes) - 1 > (body or 0)
                for t in split(re.sub(r"^\.reg\s+(?:\.\w+\s+)*", "", text)):
                    m = re.fullmatch(r"([%$]?[A-Za-z_$][\w$]*)\s*(?:<\s*(\d+)\s*>)?", t)
                    if not m:
                        continue
                    suf = f"@{scopes[-1][0]}" if inner else ""
                    if m.group(2):
                        scopes[-1][2].append((m.group(1), int(m.group(2)), suf))
                    else:
                        scopes[-1][1][m.group(1)] = m.group(1) + suf
            elif ".shared" in text.split("=")[0].split():
                head = text.split("=")[0]
                nm = re.search(r"([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\]\s*)*$", head.strip())
                al = re.search(r"\.align\s+(\d+)", head)
                sz = re.search(r"\.[bsuf](\d+)\b", head)
                if nm:
                    shared[nm.group(1)] = int(al.group(1)) if al else (int(sz.group(1)) // 8 if sz else 1)
            elif ".entry" in words or ".func" in words:
                if fn.stmts:
                    finish()
                header = True
            continue
        header = False
        guard = None
        if text.startswith("@"):
            g, _, text = text.partition(" ")
            neg = g.startswith("@!")
            gk = resolve(g.lstrip("@!"))
            guard = (gk or g, neg)
        op, _, rest = text.partition(" ")
        while rest.startswith("."):
            more, _, rest = rest.partition(" ")
            op += more
        base = op.split(".")[0]
        if base == "bra":
            fn.pending.append((len(fn.stmts), rest.strip(), tuple(s for s, _, _ in reversed(scopes))))
            fn.stmts.append(Stmt(line, guard, op, [], []))
            continue
        texts = split(rest)
        args = [operand(t) for t in texts]
        if base in _NO_DEST or (base == "tcgen05" and not op.startswith("tcgen05.ld")) or base == "wgmma":
            args = [("src",)] + args
        fn.stmts.append(Stmt(line, guard, op, texts, args))
    if fn.stmts:
        finish()
    return fns


def _width(op: str) -> int:
    m = re.findall(r"\.(?:[bsu]|pred)(\d*)\b", op)
    for x in m:
        if x:
            return int(x)
    return 1 if ".pred" in op else 32


def _types(op: str) -> list[tuple[str, int]]:
    return [(t[0], int(t[1])) for t in re.findall(r"\.([bsuf])(\d+)\b", op)]


def distances(fn: Fn) -> list[float]:
    """Per statement, how many statements a path needs at least to reach one of :data:`TARGETS`."""
    n = len(fn.stmts)
    preds: list[list[int]] = [[] for _ in range(n + 1)]
    for i, s in enumerate(fn.stmts):
        base = s.op.split(".")[0]
        nxt = []
        if base == "bra":
            if s.target is not None:
                nxt.append(s.target)
            if s.guard is not None or s.target is None:
                nxt.append(i + 1)
        elif base in ("ret", "exit", "trap"):
            if s.guard is not None:
                nxt.append(i + 1)
        else:
            nxt.append(i + 1)
        for j in nxt:
            preds[min(j, n)].append(i)
    dist = [float("inf")] * (n + 1)
    queue = [i for i, s in enumerate(fn.stmts) if s.op.startswith(TARGETS)]
    for i in queue:
        dist[i] = 0
    k = 0
    while k < len(queue):
        j = queue[k]
        k += 1
        for i in preds[j]:
            if dist[i] == float("inf"):
                dist[i] = dist[j] + 1
                queue.append(i)
    return dist


class Machine:
    """One thread over one function. Branches on a predicate go toward the nearest tcgen05
    instruction most of the time, whatever the predicate holds: the dataflow under test reads no
    branch condition (E42), so its facts must hold on every path of the control-flow graph, and
    steering the runs there tests more of them."""

    def __init__(self, fn: Fn, shared: dict[str, int], rng: random.Random):
        self.fn, self.shared, self.rng = fn, shared, rng
        self.dist = distances(fn)
        self.regs: dict[str, int] = {}
        self.symbols: dict[str, int] = {}
        self.seen: list[tuple[int, str, int]] = []  # (line, operand text index, value)

    def sym(self, name: str) -> int:
        if name not in self.symbols:
            align = max(1, self.shared[name])
            self.symbols[name] = self.rng.randrange(0, 1 << 18, align)
        return self.symbols[name]

    def val(self, a, width: int) -> int:
        kind = a[0]
        if kind == "i":
            return a[1] & M[width] if width in M else a[1] & ((1 << width) - 1)
        if kind == "r":
            if a[1] not in self.regs:
                self.regs[a[1]] = self.leaf(64)
            return self.regs[a[1]] & ((1 << width) - 1)
        if kind == "s":
            lo, hi = SPECIAL.get(a[1], (0, (1 << width) - 1))
            if self.rng.random() < 0.7:  # small values reach more code (warp roles, lane 0)
                hi = min(hi, lo + 255)
            return self.rng.randint(lo, hi) & ((1 << width) - 1)
        if kind == "m":
            return (self.sym(a[1]) + a[2]) & ((1 << width) - 1)
        return self.leaf(width)

    def leaf(self, width: int) -> int:
        """A run-time value: any value may occur; small ones half the time (loop bounds, flags)."""
        if self.rng.random() < 0.5:
            return self.rng.randint(0, 64)
        return self.rng.getrandbits(width)

    def set(self, a, value: int, width: int) -> None:
        if a[0] == "r":
            self.regs[a[1]] = value & ((1 << width) - 1)

    def run(self, steps: int, on_tcgen05) -> None:
        pc = 0
        stmts = self.fn.stmts
        while 0 <= pc < len(stmts) and steps > 0:
            steps -= 1
            s = stmts[pc]
            pc += 1
            base = s.op.split(".")[0]
            if s.guard is not None and base == "bra" and s.target is not None and self.rng.random() < 0.9:
                here, there = self.dist[pc], self.dist[s.target]
                if here != there:
                    if there < here:
                        pc = s.target
                    continue
            if s.guard is not None:
                g = s.guard[0]
                v = self.regs.get(g)
                if v is None:
                    v = self.regs[g] = self.rng.getrandbits(1)
                if bool(v & 1) == s.guard[1]:
                    continue
            if base == "bra":
                if s.target is None:
                    return
                pc = s.target
                continue
            if base in ("ret", "exit", "trap"):
                return
            if s.op.startswith(TARGETS):
                on_tcgen05(self, s)
                continue
            self.step(s, base)

    def step(self, s: Stmt, base: str) -> None:
        args = s.args
        if not args or args[0] == ("src",):
            return
        dest, src = args[0], args[1:]
        op = s.op
        w = _width(op)
        ts = _types(op)
        signed = bool(ts) and ts[0][0] == "s"
        rnd = self.leaf

        def sx(x: int, width: int) -> int:
            return x - (1 << width) if x >> (width - 1) & 1 else x

        def v(i: int, width: int = w) -> int:
            return self.val(src[i], width) if i < len(src) else rnd(width)

        out = None
        if dest[0] in ("v", "p"):  # vector / pair destinations
            elems = dest[1]
            if base == "mov" and dest[0] == "v":
                ew = w // len(elems)
                x = v(0)
                for k, e in enumerate(elems):
                    self.set(e, x >> (k * ew), ew)
                return
            if base == "shfl":
                self.set(elems[0], v(0, 32), 32)
                self.set(elems[1], rnd(1), 1)
                return
            for e in elems:
                self.set(e, rnd(64), 64)
            return
        if base == "mov":
            if src and src[0][0] == "v":
                parts = src[0][1]
                ew = w // len(parts)
                out = sum((self.val(p, ew) & ((1 << ew) - 1)) << (k * ew) for k, p in enumerate(parts))
            else:
                out = v(0)
        elif base == "cvt" and len(ts) >= 2 and not any(t[0] == "f" for t in ts) and ".sat" not in op:
            (_, dw), (st, sw) = ts[0], ts[1]
            x = v(0, sw)
            out = (sx(x, sw) if st == "s" else x) & ((1 << dw) - 1)
            w = dw
        elif (base in ("and", "or", "xor", "add", "sub", "min", "max") and ".cc" not in op
              and not (ts and ts[0][0] == "f")):
            a, b = v(0), v(1)
            if base in ("min", "max"):
                ka, kb = (sx(a, w), sx(b, w)) if signed else (a, b)
                pick = min if base == "min" else max
                out = a if pick(ka, kb) == ka else b
                if ".relu" in op:
                    out = rnd(w)
            else:
                out = {"and": a & b, "or": a | b, "xor": a ^ b, "add": a + b, "sub": a - b}[base]
        elif base == "shfl":  # one thread: its own lane's value (E42's claim is about every lane's)
            out, w = v(0, 32), 32
        elif base == "selp":
            p = self.val(src[2], 1) if len(src) > 2 else rnd(1)
            out = v(0) if p & 1 else v(1)
        elif base == "not" and not (ts and ts[0][0] == "f"):
            out = ~v(0)
        elif base == "neg" and not (ts and ts[0][0] == "f"):
            out = -v(0)
        elif base in ("shl", "shr"):
            a, n = v(0), v(1, 32)
            if base == "shl":
                out = a << n if n < w else 0
            else:
                out = (sx(a, w) if signed else a) >> min(n, w)
        elif base == "bfe":
            a, pos, ln = v(0), v(1, 32) & 0xFF, v(2, 32) & 0xFF
            if ln == 0:
                out = 0
            else:
                out = 0
                msb = min(pos + ln - 1, w - 1)
                for i in range(w):
                    if i < ln and pos + i < w:
                        bit = a >> (pos + i) & 1
                    elif signed:
                        bit = a >> msb & 1 if pos < w else a >> (w - 1) & 1
                    else:
                        bit = 0
                    out |= bit << i
        elif base == "bfi":
            a, b, pos, ln = v(0), v(1), v(2, 32) & 0xFF, v(3, 32) & 0xFF
            fm = (((1 << ln) - 1) << pos) & ((1 << w) - 1)
            out = (b & ~fm) | ((a << pos) & fm)
        elif base in ("mul", "mad") and not (ts and ts[0][0] == "f"):
            a, b = v(0), v(1)
            if signed:
                a, b = sx(a, w), sx(b, w)
            prod = a * b
            if ".wide" in op:
                w = 2 * w
                out = prod + (v(2, w) if base == "mad" else 0)
            elif ".hi" in op:
                out = (prod >> w) + (v(2) if base == "mad" else 0)
            elif ".lo" in op:
                out = prod + (v(2) if base == "mad" else 0)
            else:
                out = rnd(w)
        elif base in ("rem", "div") and ts and ts[0][0] in "us":
            a, b = v(0), v(1)
            if b == 0 or signed:
                out = rnd(w)
            else:
                out = a % b if base == "rem" else a // b
        elif base == "prmt" and op.count(".") == 1:
            a, b, sel = v(0, 32), v(1, 32), v(2, 32)
            src8 = a | b << 32
            out = 0
            for i in range(4):
                nib = sel >> (4 * i) & 0xF
                byte = src8 >> (8 * (nib & 7)) & 0xFF
                if nib & 8:
                    byte = 0xFF if byte & 0x80 else 0
                out |= byte << (8 * i)
            w = 32
        elif base == "setp" and ts:
            t, tw = ts[0]
            a, b = v(0, tw), v(1, tw)
            cmp = op.split(".")[1]
            if t == "f":
                out = rnd(1)
            else:
                if t == "s":
                    a, b = sx(a, tw), sx(b, tw)
                out = int({"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
                           "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}.get(cmp, rnd(1)))
                if len(src) > 2:
                    out = rnd(1)
            w = 1
        else:
            out = rnd(64)
        self.set(dest, out, w)


def run_function(fn: Fn, shared: dict[str, int], seed: int, steps: int, on_tcgen05) -> None:
    Machine(fn, shared, random.Random(seed)).run(steps, on_tcgen05)
