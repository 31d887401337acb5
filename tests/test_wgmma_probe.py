"""What Hopper tensor cores read, measured, against what descgen predicts.

``tests/device/wgmma_probe/`` holds a CUDA probe (``probe.cu``, written by ``make_probe.py``) that
ran ``wgmma.mma_async`` on a Hopper GPU with the descriptors of ``jobs.txt`` and recorded, for
every element (i along M/N, j along K) of the probed operand, the shared memory byte it was read
from (``recorded/maps.txt.gz``; the GPU and toolkit in ``recorded/gpu.txt``). CI has no GPU: these
tests read the recorded maps. They pin errata E8 (K-major swizzled LBO ignored), E9 (the address
model and the base offset) and E28 (MN-major LBO/SBO roles) to the hardware.
"""

from __future__ import annotations

import gzip
import importlib.util
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import descgen

PROBE = Path(__file__).resolve().parent / "device" / "wgmma_probe"
TYPES = ("f16", "tf32", "e4m3")


@dataclass(frozen=True)
class Map:
    name: str
    inst: str
    operand: str
    word: int
    mn: int
    k: int
    addresses: tuple[tuple[int, ...], ...]

    @property
    def dtype(self) -> str:
        return self.inst.split("_")[0]

    @property
    def major(self) -> str:
        return "mn" if "_mn_" in self.name else "k"

    def predicted(self) -> list[list[int]]:
        # the word as the probe wrote it, read as the wgmma descriptor (§9.7.15.5.1.2)
        layout = descgen.smem_layout(self.word, dtype=self.dtype, major=self.major, mn=self.mn, k=self.k, arch="sm_90a")
        assert layout.descriptor == "wgmma_smem"
        return layout.addresses()


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_probe", PROBE / "make_probe.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def recorded() -> tuple[str, tuple[Map, ...]]:
    lines = gzip.open(PROBE / "recorded" / "maps.txt.gz", "rt").read().splitlines()
    header, maps, i = lines[0], [], 1
    while i < len(lines):
        _, name, inst, op, word, mn, k, _base = lines[i].split()
        rows = tuple(tuple(int(x) for x in lines[i + 1 + r].split()) for r in range(int(mn)))
        maps.append(Map(name, inst, op, int(word, 16), int(mn), int(k), rows))
        i += 1 + int(mn)
    return header, tuple(maps)


def test_the_probe_sources_are_what_the_generator_writes():
    gen = _generator()
    assert (PROBE / "probe.cu").read_text() == gen.probe_cu()
    jobs = [line for line in (PROBE / "jobs.txt").read_text().splitlines() if not line.startswith("#")]
    assert jobs == gen.jobs()


def test_every_job_ran_on_hopper_and_every_element_was_read():
    header, maps = recorded()
    assert header.startswith("# device NVIDIA H") and "sm_90" in header
    gen = _generator()
    # the probe answers per instantiation: same jobs, grouped
    assert sorted((m.name, m.word) for m in maps) == sorted((j.split()[0], int(j.split()[3], 16)) for j in gen.jobs())
    assert len(maps) == 596
    # no element unreadable (-1: read outside the probed region, or not a 0/1 per bit plane)
    assert all(a >= 0 for m in maps for row in m.addresses for a in row)
    # the maps cover every probed operand, type and major-ness
    assert {(m.operand, m.dtype, m.major) for m in maps} == {
        (op, t, "k") for op in "AB" for t in TYPES} | {("A", "f16", "mn"), ("B", "f16", "mn")}


@pytest.mark.parametrize("group", ["f16_kk", "f16_kt", "f16_tk", "tf32_kk", "e4m3_kk"])
def test_smem_layout_predicts_every_recorded_map(group):
    _, maps = recorded()
    wrong = [m.name for m in maps if m.inst == group and m.predicted() != [list(r) for r in m.addresses]]
    assert wrong == []


def _by(key) -> dict:  # type: ignore[no-untyped-def]
    out = defaultdict(set)
    _, maps = recorded()
    for m in maps:
        k = key(m)
        if k is not None:
            out[k].add(m.addresses)
    return out


def test_e8_k_major_swizzled_lbo_is_ignored_by_the_hardware():
    # LBO 0, 16 B and the largest value (0x3FFF0) read the same elements for the same SBO
    groups = _by(lambda m: (m.operand, m.dtype, m.name.split("_l")[0], m.word & ~(0x3FFF << 16))
                 if m.major == "k" and "_k_none" not in m.name and "_l" in m.name else None)
    assert len(groups) == 2 * 3 * 3 * 2  # operands x types x swizzles x SBOs
    assert all(len(v) == 1 for v in groups.values())


def test_e9_base_offset_moves_swizzled_reads_and_is_ignored_without_swizzle():
    sweeps = _by(lambda m: (m.operand, m.dtype, m.major, m.name.split("_bo")[0]) if m.name.endswith("_sweep") else None)
    # base offsets 0-7: only (row - base offset) & mask matters, mask 7 / 3 / 1 for 128B / 64B / 32B
    assert len(sweeps) == 2 * 3 * 3 + 2 * 3  # K-major: operands x types x swizzles; MN-major: f16 A/B
    assert all(len(v) == {"128B": 8, "64B": 4, "32B": 2}[key[3].split("_")[3]] for key, v in sweeps.items())
    _, maps = recorded()
    plain = {m.name: m.addresses for m in maps if "_k_none" in m.name}
    for t in TYPES:
        for op in "AB":
            # base offset 3 / 5 without swizzle reads what base offset 0 reads at the same start
            bo3 = plain[f"{op}_{t}_k_none_bo3_a180"]
            shifted = tuple(tuple(a - 0x180 for a in row) for row in bo3)
            assert shifted == plain[f"{op}_{t}_k_none_l128_s256_a0"]
            assert plain[f"{op}_{t}_k_none_bo5_a0"] == plain[f"{op}_{t}_k_none_l128_s256_a0"]


def test_e28_mn_major_interleave_sbo_steps_along_mn_and_lbo_along_k():
    _, maps = recorded()
    m = next(m for m in maps if m.name == "B_f16_mn_none_l4096_s128_a0")
    # f16, 8 elements per 16-byte chunk: MN neighbours 8 apart are one SBO (128 B) apart,
    # K neighbours 8 apart one LBO (4096 B) apart; inside a chunk, 2 bytes per MN element
    assert m.addresses[8][0] - m.addresses[0][0] == 128
    assert m.addresses[0][8] - m.addresses[0][0] == 4096
    assert m.addresses[1][0] - m.addresses[0][0] == 2
    assert m.addresses[0][1] - m.addresses[0][0] == 16
