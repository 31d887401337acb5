#!/usr/bin/env python3
"""Trim a large PTX file to the functions that matter for descriptor scanning.

A file at most LIMIT bytes long is left as it is.  A larger one keeps, in the
original order and byte for byte:
  * the header directives (.version, .target, .address_size, .file),
  * every module-level declaration that is not a function definition
    (.global/.shared/.const variables, .extern declarations, comments),
  * every entry or function definition that contains tcgen05.mma,
    tcgen05.cp or wgmma.mma_async, and every .func definition such a function calls
    (transitively), with the prototypes of the kept functions;
and drops the other function definitions (and the prototypes of dropped
functions).  Kept functions are never edited inside.  A one-line comment at the
top says that the file was trimmed and from how many bytes.

    python tests/corpus/trim.py IN.ptx [OUT.ptx] [--limit BYTES] [--force]

Used by make_triton.py and make_cutlass.py; deterministic (a pure function of
the input text).
"""
from __future__ import annotations

import argparse
import re
import sys

DEFAULT_LIMIT = 300 * 1024

_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file")
_IDENT = re.compile(r"[A-Za-z_$%][A-Za-z0-9_$]*")
#: A ``.file N "PATH"`` directive (nvcc adds ``, timestamp, size`` after the path).
_FILE = re.compile(r'^([ \t]*\.file[ \t]+\d+[ \t]+")([^"]*)(")', re.M)


def portable_paths(text):
    """The text with each ``.file`` directive's absolute path made the same on every machine
    (no path of the machine that compiled it in the repository): a path under ``tests/corpus/``
    from ``tests/`` on, one in a ``site-packages`` from ``site-packages/`` on, any other its file
    name. Line numbers and everything else are unchanged."""
    def fix(m):
        path = m.group(2).replace("\\", "/")
        if not (path.startswith("/") or re.match(r"[A-Za-z]:/", path)):
            return m.group(0)
        for marker in ("/tests/corpus/", "/site-packages/"):
            k = path.rfind(marker)
            if k >= 0:
                return m.group(1) + path[k + 1:] + m.group(3)
        return m.group(1) + path.rsplit("/", 1)[-1] + m.group(3)
    return _comp_dir(_FILE.sub(fix, text))


_B8 = re.compile(r"\.b8 (\d+)")


def _comp_dir(text):
    """DWARF's ``DW_AT_comp_dir`` (the compiling directory, as ``.b8`` bytes one per line) made
    relative at the same length, so that no offset or line moves: ``/ab/c/tests/corpus`` ->
    ``./././tests/corpus`` (``./`` repeated, a trailing ``/`` for an odd count)."""
    if "DW_AT_comp_dir" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not (line.startswith(".b8 ") and "// DW_AT_comp_dir" in line):
            continue
        values = []
        for j in range(i, len(lines)):
            m = _B8.match(lines[j])
            if m is None:
                break
            values.append(int(m.group(1)))
            if values[-1] == 0:
                break
        path = bytes(values[:-1]).decode("latin-1")
        if not path.startswith("/"):
            continue
        k = path.rfind("/tests/")
        tail = path[k + 1:] if k >= 0 else path.rsplit("/", 1)[-1]
        pad = len(path) - len(tail)
        new = ("./" * (pad // 2) + tail + "/" * (pad % 2)).encode("latin-1")
        for k, byte in enumerate(new):
            old = lines[i + k]
            m = _B8.match(old)
            assert m is not None
            rest = old[m.end():]
            if rest.strip():  # keep a comment in its column
                rest = (" " * max(1, len(m.group(0)) + len(rest) - len(rest.lstrip()) - len(f".b8 {byte}"))
                        + rest.lstrip())
            lines[i + k] = f".b8 {byte}{rest}"
    return "\n".join(lines)


def split_top_level(text):
    """Split PTX into top-level chunks (each chunk: leading whitespace/comments plus one statement).

    A statement ends at ';' at brace depth 0, at the '}' that closes a body, or at the end of
    the line for the line directives (.version, .target, .address_size, .file).
    Returns a list of strings whose concatenation is the text."""
    chunks = []
    n = len(text)
    i = 0
    start = 0
    depth = 0
    stmt_started = False  # seen a non-comment, non-space character of the current statement
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c.isspace():
            i += 1
            continue
        if not stmt_started:
            stmt_started = True
            if depth == 0 and text.startswith(_LINE_DIRECTIVES, i):
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
                chunks.append(text[start:i])
                start = i
                stmt_started = False
                continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                i += 1
                # an initializer `= {...};` ends at its ';'
                m = re.compile(r"\s*;").match(text, i)
                if m:
                    i = m.end()
                # keep the rest of the line (a trailing comment, the newline) with this chunk
                m = re.compile(r"[ \t]*(//[^\n]*)?\n?").match(text, i)
                i = m.end()
                chunks.append(text[start:i])
                start = i
                stmt_started = False
                continue
        elif c == ";" and depth == 0:
            i += 1
            m = re.compile(r"[ \t]*(//[^\n]*)?\n?").match(text, i)
            i = m.end()
            chunks.append(text[start:i])
            start = i
            stmt_started = False
            continue
        i += 1
    if start < n:
        chunks.append(text[start:])
    return chunks


def _strip_comments(s):
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    return re.sub(r"//[^\n]*", "", s)


def classify(chunk):
    """Return (kind, name): kind is 'def' (function with body), 'decl' (function prototype),
    or 'other'; name is the function name or None."""
    code = _strip_comments(chunk)
    m = re.search(r"(?<![\w.])\.(entry|func)\b", code)
    if not m:
        return "other", None
    rest = code[m.end():].lstrip()
    if rest.startswith("("):  # .func (.param ...) name(
        depth = 0
        for k, ch in enumerate(rest):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    rest = rest[k + 1:].lstrip()
                    break
    nm = _IDENT.match(rest)
    name = nm.group(0) if nm else None
    brace = code.find("{")
    return ("def" if brace >= 0 else "decl"), name


def _variable_name(chunk):
    """The name a module-level .global/.const/.shared variable declaration declares, else None."""
    code = _strip_comments(chunk).strip()
    if not re.match(r"(\.(visible|extern|weak|common)\s+)*\.(global|const|shared)\b", code):
        return None
    if code.startswith(".extern"):
        return None
    head = code.split("=", 1)[0]
    names = re.findall(r"([A-Za-z_$][A-Za-z0-9_$]*)\s*(?:\[[^\]]*\]\s*)*(?:;|$)", head.strip())
    return names[-1] if names else None


def trim_text(text, limit=DEFAULT_LIMIT, force=False):
    """Return (new_text, trimmed?)."""
    if len(text.encode()) <= limit and not force:
        return text, False
    chunks = split_top_level(text)
    info = [classify(c) for c in chunks]
    defs = {name: idx for idx, (kind, name) in enumerate(info) if kind == "def" and name}
    keep_defs = set()
    work = []
    for idx, (kind, name) in enumerate(info):
        if kind == "def" and re.search(r"\btcgen05\.(mma|cp)\b|\bwgmma\.mma_async\b", _strip_comments(chunks[idx])):
            keep_defs.add(idx)
            work.append(idx)
    # functions called (or whose address is taken) by kept functions, transitively
    while work:
        idx = work.pop()
        body = _strip_comments(chunks[idx])
        for ident in set(re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", body)):
            j = defs.get(ident)
            if j is not None and j not in keep_defs:
                keep_defs.add(j)
                work.append(j)
    kept_names = {info[i][1] for i in keep_defs}
    used = set()
    for i in keep_defs:
        used.update(re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", _strip_comments(chunks[i])))
    out = []
    dropped_vars = 0
    for idx, (chunk, (kind, name)) in enumerate(zip(chunks, info)):
        if kind == "def" and idx not in keep_defs:
            continue
        if kind == "decl" and name in defs and name not in kept_names:
            continue
        var = _variable_name(chunk) if kind == "other" else None
        if var and var not in used:
            dropped_vars += 1
            continue
        out.append(chunk)
    body = "".join(out)
    what = "wgmma MMAs" if "wgmma.mma_async" in text else "tcgen05 MMAs or copies"
    note = (f"// trimmed by tests/corpus/trim.py from {len(text.encode())} bytes: kept {len(keep_defs)} of "
            f"{len(defs)} function definitions (those with {what}, and their callees), dropped "
            f"{dropped_vars} module-level variables they do not use\n")
    return note + body, True


def tc_lines(text):
    """The line numbers of every tcgen05.mma, tcgen05.cp and wgmma.mma_async in ``text`` (for the manifests)."""
    out = {"tcgen05.mma": [], "tcgen05.cp": [], "wgmma.mma_async": []}
    for i, line in enumerate(text.splitlines(), 1):
        line = line.split("//", 1)[0]
        for key in out:
            if re.search(re.escape(key) + r"[.\s]", line):
                out[key].append(i)
    return out


def toml_value(x):
    """``x`` as a TOML value (the manifests are written by hand, without a TOML writer)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, list):
        return "[" + ", ".join(toml_value(i) for i in x) + "]"
    return '"' + str(x).replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output", nargs="?")
    ap.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    ap.add_argument("--force", action="store_true", help="trim even if the file is under the limit")
    a = ap.parse_args(argv)
    with open(a.input, encoding="utf-8", newline="") as f:
        text = f.read()
    new, trimmed = trim_text(text, a.limit, a.force)
    if a.output:
        with open(a.output, "w", encoding="utf-8", newline="") as f:
            f.write(new)
    else:
        sys.stdout.write(new)
    print(f"{a.input}: {len(text.encode())} -> {len(new.encode())} bytes{' (trimmed)' if trimmed else ''}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
