"""What the scanner does not read: text that is not PTX (:func:`not_ptx`), files other than
``*.ptx`` under a directory (:func:`ptx_files`), and, inside a file, whole functions with nothing
it reads (:func:`unread`) and what follows a function's body (:func:`trailer_unread`), text being
cut at function headers first (:func:`functions`). Skipping text changes no answer: what is
skipped would only end the function before it (tests/test_scan_slicing.py reads every line and
compares).
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

__all__ = ["functions", "inert", "unread", "trailer_unread", "not_ptx", "ptx_files"]

#: A function header's line up to its ``.entry`` / ``.func`` (``.visible``, ``.weak``, ``.extern``).
_HEADER_PREFIX = re.compile(r"[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*")
#: What a function's text (header to the next header) must not contain to be skipped unread: an
#: instruction the scanner reads (tcgen05.*, wgmma.*), a directive it keeps (.target, .version,
#: and a .shared declaration: :data:`_SHARED_DECLARATION`), a block comment that could hide where
#: statements end (a string could too, unless it is plain: :data:`_PLAIN_STRING`).
_READ = ("tcgen05", "wgmma", ".target", ".version", "/*")
#: A string that cannot hide a statement's end or a comment (``.pragma "nounroll";``, ``.file 1
#: "kernel.py"``).
_PLAIN_STRING = re.compile(r'"(?:[^"\n;{}/\\]|/(?![/*]))*"')
#: A ``.shared`` declaration's state space (a word of its own, as the scanner's ``.shared``
#: directive reads one), not an instruction's qualifier (``ld.shared``, ``mbarrier.arrive.shared::cta``).
_SHARED_DECLARATION = re.compile(r"(?<![^\s;{}])\.shared")
_LINE_COMMENT = re.compile(r"//[^\n]*")
#: What may follow a function's last ';' for it to end between statements: blanks, closing braces,
#: labels, the line directives (.file, .loc) and the DWARF sections (``.section .debug_abbrev
#: { .b8 1 ... }``, data the scanner does not read) compilers write after a body.
_CLOSING = re.compile(r"(?:\s|\}|[A-Za-z_$%][\w$]*[ \t]*:(?!:)|\.(?:file|loc)\b[^\n]*"
                      r"|\.section[^;{}]*\{[^{};]*\})*")


def functions(text: str) -> Iterator[str]:
    """``text`` cut before each function header's line (each part but the last ends with a line
    break): where ``.entry`` / ``.func`` follows only blanks and ``.visible`` / ``.weak`` /
    ``.extern`` on its line."""
    starts = []
    for word in (".entry", ".func"):
        k = text.find(word)
        while k >= 0:
            line = text.rfind("\n", 0, k) + 1
            after = text[k + len(word):k + len(word) + 1]
            if line and not (after.isalnum() or after in "_$") and _HEADER_PREFIX.fullmatch(text, line, k):
                starts.append(line)
            k = text.find(word, k + 1)
    at = 0
    for start in sorted(starts):
        yield text[at:start]
        at = start
    yield text[at:]


def inert(text: str) -> bool:
    """Whether ``text`` holds nothing the scanner reads or keeps: none of :data:`_READ`, no
    ``.shared`` declaration, no string but plain ones."""
    return not (any(w in text for w in _READ) or _SHARED_DECLARATION.search(text)
                or ('"' in text and text.count('"') != 2 * len(_PLAIN_STRING.findall(text))))


def unread(part: str) -> bool:
    """Whether a function's text (a part of :func:`functions`) can be skipped: reading it would
    change nothing but end the function before it (its header does) and reset the per-function
    state. It is :func:`inert` and ends between statements: after its last ``;`` (line comments
    aside) only what :data:`_CLOSING` allows, so the lexer is clean where the next header starts
    (in PTX that ptxas accepts, a statement's braces close before its ``;``)."""
    if not part or not inert(part):
        return False
    code = _LINE_COMMENT.sub("", part)
    end = code.rfind(";")
    return end >= 0 and _CLOSING.fullmatch(code, end + 1) is not None


def trailer_unread(text: str) -> bool:
    """Whether what follows a function's body up to the next header (labels, ``.file`` lines,
    DWARF sections) can be skipped: :func:`inert`, and only what :data:`_CLOSING` allows."""
    return inert(text) and _CLOSING.fullmatch(_LINE_COMMENT.sub("", text)) is not None


#: Characters no PTX text holds: control characters other than blanks, what UTF-8 decoding
#: replaced (U+FFFD) or escaped (lone surrogates), DEL.
_UNPRINTABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f\ufffd\udc80-\udcff]")
#: not_ptx reads this much of the text for its share of unprintable characters.
_SNIFF = 1 << 16


def not_ptx(text: str) -> str | None:
    """Why ``text`` is not PTX to scan, or None (the one test for files, standard input and every
    caller, so that each is reported alike):

    - ``"the file is empty"``: nothing but blanks;
    - ``"the file is binary"``: a NUL byte, or more than 1 in 100 of its first 64 KiB characters
      unprintable (control characters other than blanks, bytes that are not UTF-8);
    - ``"no .version directive and no tcgen05 or wgmma instruction"``: every PTX module opens with
      ``.version`` (PTX ISA §11.1); text without it is still scanned as a fragment when it holds
      an instruction the scan checks (``printf '...tcgen05.mma...' | descgen scan -``).
    """
    if not text.strip(" \t\n\r\f\v"):  # blanks only (str.strip would take \x1c-\x1f for blanks too)
        return "the file is empty"
    head = text[:_SNIFF]
    if "\x00" in text or len(_UNPRINTABLE.findall(head)) * 100 > len(head):
        return "the file is binary"
    if re.search(r"^\s*\.version\b", text, flags=re.M) is None and "tcgen05" not in text and "wgmma" not in text:
        return "no .version directive and no tcgen05 or wgmma instruction"
    return None


def ptx_files(paths: Iterable[str]) -> Iterator[str]:
    """Each path as given, or for a directory every ``*.ptx`` file under it (recursively, sorted);
    ``-`` (standard input) passes through."""
    import os

    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, f) for f in files if f.endswith(".ptx")]
            yield from sorted(found)
        else:
            yield p
