#!/usr/bin/env python3
"""Concatenate real PTX files into one large PTX module for benchmarks (not committed).

    python tests/corpus/make_triton.py --big bench/data/triton
    python tests/corpus/make_big.py bench/data/triton -o bench/data/triton_all.ptx

The output has one header (.version/.target/.address_size of the first file;
every input must have the same .target and .address_size, and the highest
.version is kept), every distinct module-level declaration once (e.g.
`.extern .shared .align 16 .b8 global_smem[];`), the first file's .file
directives (so .loc lines stay valid), and every function definition of every
input, renamed f<N>_<name> (with its parameters <name>_param_<i>) so that names
are unique.  DWARF .section blocks are dropped but for .debug_str, which .loc
lines refer to (`function_name $L__info_string0`): its labels are renamed
$L__f<N>_info_string<i>, in it and in the .loc lines.  Function bodies are
otherwise byte for byte as the compiler wrote them.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trim  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="PTX files or directories (*.ptx, sorted)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--max-bytes", type=int, default=0, help="stop adding files past this size")
    a = ap.parse_args(argv)
    files = []
    for p in a.inputs:
        pp = Path(p)
        files += sorted(pp.rglob("*.ptx")) if pp.is_dir() else [pp]
    header = {}
    decls, seen_decls, file_dirs, bodies, strs = [], set(), [], [], []
    versions = []
    size = 0
    for n, f in enumerate(files):
        text = f.read_text()
        chunks = trim.split_top_level(text)
        names = [trim.classify(c)[1] for c in chunks if trim.classify(c)[0] == "def"]
        pat = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, names)) + r")(?=(_param_\d+)?(?![\w$]))") \
            if names else None
        for c in chunks:
            code = re.sub(r"//[^\n]*", "", c).strip()
            if not code:
                continue
            m = re.match(r"\.(version|target|address_size)\s+(.+)", code)
            if m:
                if m.group(1) == "version":
                    versions.append(m.group(2).strip())
                elif header.setdefault(m.group(1), m.group(2).strip()) != m.group(2).strip():
                    raise SystemExit(f"{f}: .{m.group(1)} {m.group(2)} differs from {header[m.group(1)]}")
                continue
            if code.startswith(".file"):
                if n == 0:
                    file_dirs.append(code + "\n")
                continue
            if code.startswith(".section"):
                # .loc lines name inlined functions by labels in .debug_str: keep that section,
                # with its labels renamed per file; drop .debug_info/.debug_abbrev/... (they
                # refer to function-local labels)
                if re.match(r"\.section\s+\.debug_str\b", code):
                    strs.append(re.sub(r"\$L__info_string(\d+)", rf"$L__f{n}_info_string\1", c))
                continue
            kind, name = trim.classify(c)
            if kind == "def":
                body = pat.sub(lambda mm: f"f{n}_{mm.group(1)}", c)
                body = re.sub(r"\$L__info_string(\d+)", rf"$L__f{n}_info_string\1", body)
                bodies.append(body if body.endswith("\n") else body + "\n")
                size += len(body)
            elif code not in seen_decls:
                seen_decls.add(code)
                decls.append(code + "\n")
        if a.max_bytes and size >= a.max_bytes:
            break
    version = max(versions, key=lambda v: tuple(int(x) for x in v.split(".")))
    out = [f"//\n// {len(bodies)} functions from {n + 1} files, concatenated by tests/corpus/make_big.py\n//\n\n",
           f".version {version}\n.target {header['target']}\n.address_size {header['address_size']}\n\n"]
    out += decls + ["\n"] + bodies + ["\n"] + file_dirs + strs
    Path(a.output).write_text("".join(out))
    total = sum(len(x) for x in out)
    print(f"{a.output}: {total} bytes, {len(bodies)} functions from {n + 1} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
