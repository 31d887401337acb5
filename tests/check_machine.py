"""A concrete interpreter for the run-time check blocks ``descgen instrument`` writes
(tests/test_instrument.py): it runs one block's statements for one thread, with the descriptor
registers set to given words, the module's constant tables, and a report buffer in a dict of
bytes, and returns what the block wrote and whether it trapped.

Independent of descgen on purpose: its own operand parsing and its own arithmetic (PTX ISA §9.7:
two's complement 64-bit registers, ``div``/``rem`` truncating, ``shr.s64`` arithmetic, shift amounts
clamped to the width), so that a test compares the PTX's meaning with the Python engine's.
"""

from __future__ import annotations

import re
import struct

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
REPORT = 0x1000  # where the interpreter puts the report buffer


def signed(x: int, width: int = 64) -> int:
    x &= (1 << width) - 1
    return x - (1 << width) if x >> (width - 1) else x


def const_tables(ptx: str) -> dict[str, list[int]]:
    out = {}
    for m in re.finditer(r"\.const \.align 8 \.b64 (\w+)\[(\d+)\] = \{([^}]*)\};", ptx):
        out[m.group(1)] = [int(v, 0) for v in m.group(3).split(",")]
    return out


def entry(lines: list[str]) -> list[str]:
    """The function entry's statements the checks read: the special registers read into
    ``%dgz_...`` registers and what is derived from them (thresholds)."""
    return [ln.strip() for ln in lines if re.fullmatch(r"\s*[a-z]+\.[us]32 %dgz\w+, [^;]+;", ln)]


def blocks(ptx: str, sites: list | None = None) -> dict[int, list[str]]:
    """Each site's checks as one straight run of statements, by site number, after the function
    entry's reads of special registers (``mov.u32 %dgz_..., %aggr_smem_size``) and what it derives from them.

    A tcgen05 site's block records and stops by itself. A wgmma site's block is one of its group's
    (docs/sanitizer.md): it is run as the group would with only this site in it: its checks or-ed
    into the group's flags, the branch to the group's out-of-line record, and that record with
    only this site's checks again in it. The words it reads are the registers ``CheckedSite.reads``
    names (the group's replay, which computes them from the kernel's registers, is not run, nor
    the record's computing them again from the registers saved: it reads them as they are).

    Sites with one check code run it once for all of them, on two words of each operand
    (descgen.sanitizer.shared_checks): each such site's block is that code on its own words, which
    ``sites`` (the instrumented file's ``CheckedSite`` list, by index) names."""
    text = ptx.split("\n")
    at_entry = entry(text)
    saved: dict[str, dict[str, str]] = {}  # (a group's saved registers: what each is saved from)
    for g, reg, root in re.findall(r"@%dgf(\d+) mov\.\w+ (%dgv\d+_\d+), (%[\w$]+);", ptx):
        saved.setdefault(g, {})[reg] = root
    hot: dict[int, list[str]] = {}
    again: dict[int, list[str]] = {}
    record: dict[str, tuple[list[str], list[str]]] = {}  # a group's flags -> its record's first and last lines
    i = 0
    while i < len(text):
        m = re.match(r"\s*\{ // descgen: (site (\d+),|group (\d+)'s finding|group \d+'s words)", text[i])
        if m is None:
            i += 1
            continue
        header, depth, body = text[i], 1, []
        i += 1
        while depth:
            line = text[i].strip()
            depth += line.startswith("{") - (line == "}")
            if depth:
                body.append(line)
            i += 1
        shared = re.search(r", for sites ([\d, ]+) on (.*)$", header)
        if m.group(2) and shared:
            assert sites is not None, "a block shared by several sites: pass the sites"
            on = dict(pair.split() for pair in shared.group(2).split(", "))
            for k in (int(x) for x in shared.group(1).split(", ")):
                own = dict(sites[k].reads)
                hot[k] = [re.sub(r"%[\w$]+", lambda r: own[role] if (role := _role(on, r.group(0))) else r.group(0), ln)
                          for ln in body]
        elif m.group(2):
            hot[int(m.group(2))] = body
        elif m.group(3):
            g = m.group(3)  # (its words again from the registers saved: the words as they were, read as they are)
            body = [re.sub(r"%dgv\d+_\d+\b", lambda r: saved[g][r.group(0)], ln) for ln in _without_words_again(body)]
            first = next(k for k, ln in enumerate(body) if ln.startswith("{ // descgen: again"))
            rest, inside = [], None  # (the lines after its sites' "again" blocks, which go to again[])
            for ln in body[first:]:
                started = re.match(r"\{ // descgen: again site (\d+)", ln)
                if started:
                    inside = again[int(started.group(1))] = []
                elif inside is not None and ln == "}":
                    inside = None
                elif inside is not None:
                    inside.append(ln)
                else:
                    rest.append(ln)
            record[m.group(3)] = (body[:first], rest)
    out = {}
    for site, body in hot.items():
        flags = next((re.search(r"%dgfw(\d+)", ln) for ln in body if "%dgfw" in ln), None)
        if flags is None:  # (tcgen05: the block records and stops)
            out[site] = at_entry + body
            continue
        g = flags.group(1)
        head, tail = record[g]
        out[site] = (at_entry + [f"mov.b32 %dgfw{g}, 0;"] + body + [f"setp.ne.b32 %dgf{g}, %dgfw{g}, 0;",
                     f"@%dgf{g} bra descgen_fail{g};", f"bra.uni descgen_back{g};", f"descgen_fail{g}:"]
                     + head + again[site] + tail + [f"descgen_back{g}:"])
    return out


def _without_words_again(body: list[str]) -> list[str]:
    """A group's record without its block computing the words again from the registers saved."""
    out, inside = [], False
    for ln in body:
        if ln.startswith("{ // descgen: group") and "words again" in ln:
            inside = True
        elif inside and ln == "}":
            inside = False
        elif not inside:
            out.append(ln)
    return out


def _role(on: dict[str, str], reg: str) -> str | None:
    return next((role for role, r in on.items() if r == reg), None)


def function_statements(ptx: str) -> list[str]:
    """The statements of a file's one function body, one a line (the labels too; declarations,
    ``.loc`` and braces dropped): what :meth:`Machine.run` runs for a whole function."""
    body = ptx[ptx.index("{", ptx.index(".entry" if ".entry" in ptx else ".func")) + 1:ptx.rindex("}")]
    out = []
    for line in body.split("\n"):
        for part in line.split("//")[0].split(";"):
            part = part.strip().strip("{}").strip()
            if part and not part.startswith("."):
                out.append(part)
    return out


class Machine:
    def __init__(self, tables: dict[str, list[int]], regs: dict[str, int], capacity: int = 4,
                 smem_size: int = 0x30000, tid: int = 0):
        self.tables = tables
        self.smem_size = smem_size
        self.tid = tid
        self.r: dict[str, int] = dict(regs)
        self.mem: dict[int, int] = {}  # byte address -> byte
        self.trapped = False
        self.left: str | None = None  # (how a whole function's run left: "ret" or "exit")
        self.wgmma: list[tuple[int, int]] = []  # (each wgmma.mma_async run: the A and B words it read)
        self.addresses = {name: 0x100000 * (i + 1) for i, name in enumerate(tables)}
        self._store(REPORT + 4, capacity, 4)

    def _store(self, addr: int, value: int, size: int) -> None:
        for i in range(size):
            self.mem[addr + i] = (value >> (8 * i)) & 0xFF

    def _load(self, addr: int, size: int) -> int:
        return sum(self.mem.get(addr + i, 0) << (8 * i) for i in range(size))

    def val(self, t: str) -> int:
        t = t.strip()
        if t.startswith("%"):
            if t in ("%ctaid.x", "%ctaid.y", "%ctaid.z", "%tid.x", "%tid.y", "%tid.z", "%smid", "%laneid", "%ntid.x",
                     "%ntid.y"):
                return {"%ctaid.x": 3, "%tid.x": self.tid, "%smid": 7, "%ntid.x": 128, "%ntid.y": 1}.get(t, 0)
            if t == "%aggr_smem_size":
                return self.smem_size
            return self.r[t]
        if t in self.addresses:
            return self.addresses[t]
        return int(t, 0) & M64

    def addr(self, t: str) -> int:
        m = re.fullmatch(r"\[(\S+?)(?:\+(\d+))?\]", t.strip())
        assert m, t
        base = REPORT if m.group(1) == "descgen_report_symbol" else self.val(m.group(1))
        return base + int(m.group(2) or 0)

    def run(self, lines: list[str]) -> None:
        labels = {ln[:-1]: i for i, ln in enumerate(lines) if ln.endswith(":")}
        pc = 0
        while pc < len(lines):
            ln = lines[pc].split("//")[0].strip().rstrip(";")
            pc += 1
            if not ln or ln.endswith(":") or ln.startswith(".reg"):
                continue
            m = re.match(r"@(!?)(%\w+)\s+(.*)", ln)
            if m:
                if bool(self.r[m.group(2)]) == (m.group(1) == "!"):
                    continue
                ln = m.group(3)
            op, _, rest = ln.partition(" ")
            a = [x.strip() for x in re.split(r",(?![^\[]*\])", rest)] if rest else []
            if op.startswith("bra"):
                pc = labels[a[0]] + 1
                continue
            if op == "trap":
                self.trapped = True
                return
            if op in ("exit", "ret"):
                self.left = op
                return
            if op in ("membar.sys", "wgmma.wait_group.sync.aligned") or op.startswith(("ld.param", "wgmma.fence",
                                                                                        "wgmma.commit")):
                continue  # (nothing to do here; a kernel's parameters: the registers given)
            if op.startswith("wgmma.mma_async"):
                desc_a, desc_b = (x.strip() for x in rest[rest.index("}") + 1:].split(",")[1:3])
                self.wgmma.append((self.val(desc_a), self.val(desc_b)))
                continue
            if op in ("mov.b64", "mov.b32") and "{" in rest:  # (a vector: halves of a register)
                half = 32 if op == "mov.b64" else 16
                vec = [x.strip(" {}") for x in re.search(r"\{([^}]*)\}", rest)[1].split(",")]
                if rest.startswith("{"):
                    whole = self.val(a[-1])
                    for i, x in enumerate(vec):
                        self.r[x] = whole >> (half * i) & ((1 << half) - 1)
                else:
                    self.r[a[0]] = sum((self.val(x) & ((1 << half) - 1)) << (half * i) for i, x in enumerate(vec))
                continue
            self.step(op, a)

    def pred(self, t: str) -> bool:
        return not self.r[t[1:]] if t.startswith("!") else bool(self.r[t])

    def step(self, op: str, a: list[str]) -> None:
        base = op.split(".")[0]
        typ = op.split(".")[-1]  # (the instruction's type: u32, s64, b32, pred...)
        kind, width = typ[0], int(typ[1:]) if typ[1:].isdigit() else 64
        mask = (1 << width) - 1
        r = self.r
        if base == "mov":
            if a[1] == "descgen_report":
                r[a[0]] = REPORT
            else:
                r[a[0]] = self.val(a[1]) & (0xFFFFFFFF if op.endswith(("u32", "b32")) else M64)
        elif op == "cvt.u64.u32":
            r[a[0]] = self.val(a[1]) & M32
        elif op == "cvt.u32.u64":
            r[a[0]] = self.val(a[1]) & M32
        elif op == "cvt.s64.s32":
            r[a[0]] = signed(self.val(a[1]) & M32, 32) & M64
        elif base == "bfe":
            pos, ln = self.val(a[2]), self.val(a[3])
            r[a[0]] = ((self.val(a[1]) & mask) >> pos) & ((1 << ln) - 1)
        elif base in ("shl", "shr"):
            x, n = self.val(a[1]) & mask, min(self.val(a[2]), width)
            if base == "shl":
                r[a[0]] = (x << n) & mask
            elif kind == "s":
                r[a[0]] = (signed(x, width) >> n) & mask
            else:
                r[a[0]] = x >> n
        elif base in ("and", "or", "xor") and op.endswith(".pred"):
            x, y = (self.pred(t) for t in a[1:3])
            r[a[0]] = int(x and y if base == "and" else x or y if base == "or" else x != y)
        elif base in ("and", "or", "xor"):
            x, y = self.val(a[1]), self.val(a[2])
            r[a[0]] = {"and": x & y, "or": x | y, "xor": x ^ y}[base] & mask
        elif base in ("add", "sub"):
            x, y = self.val(a[1]), self.val(a[2])
            r[a[0]] = (x + y if base == "add" else x - y) & mask
        elif op in ("mul.lo.s64", "mul.lo.s32"):
            r[a[0]] = (signed(self.val(a[1]) & mask, width) * signed(self.val(a[2]) & mask, width)) & mask
        elif op == "mul.wide.u32":
            r[a[0]] = (self.val(a[1]) & M32) * (self.val(a[2]) & M32)
        elif op == "mad.wide.u32":
            r[a[0]] = ((self.val(a[1]) & M32) * (self.val(a[2]) & M32) + self.val(a[3])) & M64
        elif op == "mad.lo.u32":
            r[a[0]] = (self.val(a[1]) * self.val(a[2]) + self.val(a[3])) & M32
        elif op == "mad.lo.u64":
            r[a[0]] = (self.val(a[1]) * self.val(a[2]) + self.val(a[3])) & M64
        elif base == "neg":
            r[a[0]] = (-signed(self.val(a[1]) & mask, width)) & mask
        elif op in ("div.s64", "rem.s64"):
            x, y = signed(self.val(a[1])), signed(self.val(a[2]))
            q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
            r[a[0]] = (q if base == "div" else x - q * y) & M64
        elif base in ("min", "max"):
            x, y = self.val(a[1]) & mask, self.val(a[2]) & mask
            if kind == "s":
                x, y = signed(x, width), signed(y, width)
            r[a[0]] = (min(x, y) if base == "min" else max(x, y)) & mask
        elif base == "selp":  # (its predicate may be negated: !%p)
            r[a[0]] = (self.val(a[1]) if self.pred(a[3]) else self.val(a[2])) & mask
        elif base == "setp":
            parts = op.split(".")
            cmp, typ = parts[1], parts[-1]
            width = int(typ[1:])
            x, y = self.val(a[1]) & ((1 << width) - 1), self.val(a[2]) & ((1 << width) - 1)
            if typ[0] == "s":
                x, y = signed(x, width), signed(y, width)
            out = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp]
            if len(parts) == 4:  # setp.cmp.and|or.type d, a, b, c
                c = self.pred(a[3])
                out = (out and c) if parts[2] == "and" else (out or c)
            r[a[0]] = int(out)
        elif op == "not.pred":
            r[a[0]] = int(not r[a[1]])
        elif op == "ld.const.u64":
            address = self.val(a[1].strip("[]"))
            name = next(n for n, base in self.addresses.items() if base <= address < base + 0x100000)
            r[a[0]] = self.tables[name][(address - self.addresses[name]) // 8] & M64
        elif op == "ld.global.u64":  # [descgen_report]: the buffer's address
            r[a[0]] = REPORT
        elif op.startswith("ld.relaxed.sys.global"):
            r[a[0]] = self._load(self.addr(a[1]), 4)
        elif op.startswith("atom.relaxed.sys.global.add"):
            address = self.addr(a[1])
            r[a[0]] = self._load(address, 4)
            self._store(address, r[a[0]] + self.val(a[2]), 4)
        elif op.startswith("st.relaxed.sys.global"):
            size = 8 if op.endswith("64") else 4
            self._store(self.addr(a[0]), self.val(a[1]), size)
        else:
            raise NotImplementedError(op)

    def records(self) -> list[dict[str, int]]:
        count = self._load(REPORT, 4)
        out = []
        for i in range(min(count, self._load(REPORT + 4, 4))):
            raw = bytes(self.mem.get(REPORT + 64 + 64 * i + j, 0) for j in range(64))
            site, code, operand, flags, word = struct.unpack_from("<IIIIQ", raw)
            value = struct.unpack_from("<q", raw, 48)[0]
            out.append({"site": site, "code": code, "operand": operand, "flags": flags, "word": word, "value": value})
        return out
