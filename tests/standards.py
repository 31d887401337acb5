"""The language standard a C or C++ file descgen writes says it needs, and compiling it there.

Each C/C++ form descgen writes says, in a comment line ``needs C99 or later ...`` / ``needs C++14
or later ...`` (the header: ``Needs C++17 or later``), the oldest standard it compiles at
(``descgen.backends.emitters.NEEDS``). tests/test_emit.py, tests/test_descriptor_functions.py and
tests/test_cpp_header.py read that line, compile the file at the standard it names (g++/gcc, and
nvcc for the C++ forms, which are CUDA) and at the standard below, which must refuse it: the claim
is the minimum, not just a standard that works.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

#: The standards in order (gcc's and nvcc's -std= spellings).
C_STANDARDS = ("c89", "c99", "c11", "c17")
CPP_STANDARDS = ("c++03", "c++11", "c++14", "c++17", "c++20")

#: Warnings as errors, pedantic: a feature of a later standard is refused, not accepted as an extension.
STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic"]

_NEEDS = re.compile(r"[Nn]eeds (C\+\+\d\d|C\d\d) or later(?: \(C\+\+(\d\d) or later compiled as C\+\+\))?")


def stated(text: str) -> tuple[str, str | None]:
    """The standard the text's leading comment says it needs, as a -std= value (``c99``,
    ``c++14``), and for a C file the C++ standard it needs compiled as C++ (else None)."""
    head = "\n".join(text.splitlines()[:6])
    m = _NEEDS.search(head)
    assert m, f"no 'needs C.. or later' line at the top:\n{head}"
    return m.group(1).lower(), (f"c++{m.group(2)}" if m.group(2) else None)


def below(std: str) -> str:
    """The standard before ``std``."""
    ladder = CPP_STANDARDS if std.startswith("c++") else C_STANDARDS
    assert ladder.index(std) > 0, std
    return ladder[ladder.index(std) - 1]


def need(tool: str) -> str:
    import pytest

    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not on PATH: this test compiles the emitted code with it (CI has it)")
    return path


def compile_at(tool: str, std: str, source: str, name: str, where: Path,
               *flags: str) -> subprocess.CompletedProcess[str]:
    """``source`` written to ``where/name`` and compiled (syntax only; nvcc: an object for the
    ``-gencode`` in ``flags``) with ``tool`` at ``-std=std``."""
    path = where / name
    path.write_text(source)
    if tool == "nvcc":
        args = [need("nvcc"), f"-std={std}", "-Werror", "all-warnings", *flags, "-c", str(path), "-o",
                str(path.with_suffix(".o"))]
    else:
        args = [need(tool), f"-std={std}", *STRICT, *flags, "-fsyntax-only", str(path)]
    return subprocess.run(args, capture_output=True, text=True, cwd=where)


def ilp32_freestanding() -> bool:
    """Whether gcc compiles for a 32-bit target against its own <stdint.h> (``-m32
    -ffreestanding``): there ``uint64_t`` is ``unsigned long long``, so ``UINT64_C`` writes a
    ``ULL`` literal, which C89 and C++03 refuse (on LP64 it is ``UL``, which they accept)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return False
    r = subprocess.run([gcc, "-m32", "-ffreestanding", "-std=c99", "-fsyntax-only", "-x", "c", "-"],
                       input="#include <stdint.h>\nuint64_t x = UINT64_C(1);\n", capture_output=True, text=True)
    return r.returncode == 0
