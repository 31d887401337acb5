"""Known bits and ranges never lie (E42): a concrete interpreter (tests/soundness.py, independent of
descgen's dataflow) runs every function of every corpus file and of every reproduction, with random
run-time leaves, and each time a tcgen05.mma / tcgen05.cp / wgmma.mma_async executes, every register operand's
concrete value must have the bits and lie in the range the scanner reports for it."""

from __future__ import annotations

import functools

from pathlib import Path

import pytest

from descgen.ptx.scan import scan_ptx

from conftest import REPO
from soundness import TARGETS, parse, run_function

ROOT = Path(REPO) / "tests"
FILES = sorted((ROOT / "corpus").glob("*/*.ptx")) + sorted((ROOT / "ptx").glob("*.ptx")) + \
    sorted((ROOT / "ptx" / "repro").glob("*.ptx")) + sorted((ROOT / "device" / "sanitizer" / "ptx").glob("*.ptx"))
SEEDS = 10
STEPS = 20000


def check_file(path: Path) -> tuple[int, list[str]]:
    return check_text(path.read_text(errors="replace"), path.name)


def check_text(text: str, name: str, seeds: int = SEEDS) -> tuple[int, list[str]]:
    """(operand values checked, the ones the scan got wrong) over ``seeds`` concrete runs of every
    function of ``text`` with a descriptor instruction."""
    result = scan_ptx(text)
    by_line: dict[int, list] = {}
    for ins in result.instructions:
        by_line.setdefault(ins.line, []).append(ins)
    shared: dict[str, int] = {}
    checked = 0
    wrong: list[str] = []

    def on(machine, stmt) -> None:
        nonlocal checked
        for ins in by_line.get(stmt.line, ()):
            for o in ins.operands:
                if o.text not in stmt.texts or o.text[:1].isdigit() or o.text[:1] == "-":
                    continue
                arg = stmt.args[stmt.texts.index(o.text) + 1]
                if arg[0] != "r":
                    continue
                value = machine.val(arg, o.width)
                k = o.known
                checked += 1
                if value & k.mask != k.value & k.mask:
                    wrong.append(f"{name}:{ins.line} {o.name} {o.text} = {value:#x}, known {k.value:#x}/{k.mask:#x}")
                if o.range is not None and not o.range[0] <= value <= o.range[1]:
                    wrong.append(f"{name}:{ins.line} {o.name} {o.text} = {value:#x} outside {o.range}")

    for fn in parse(text, shared):
        if not any(s.op.startswith(TARGETS) for s in fn.stmts):
            continue
        for seed in range(seeds):
            run_function(fn, shared, seed, STEPS, on)
    return checked, wrong


@functools.cache
def _checked(path: Path) -> tuple[int, list[str]]:
    """:func:`check_file` once per file, whichever test asks first (run alone or in any order)."""
    return check_file(path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_known_bits_and_ranges_hold_on_concrete_runs(path):
    checked, wrong = _checked(path)
    assert wrong == []


def test_the_runs_reach_the_instructions():
    """Random leaves steer the runs; most files must have their descriptors checked this way."""
    REACHED = {f"{path.parent.name}/{path.name}": _checked(path)[0] for path in FILES}
    reached = [name for name, n in REACHED.items() if n]
    assert len(reached) >= 0.8 * len(REACHED), sorted(set(REACHED) - set(reached))
    assert sum(REACHED.values()) > 5000
