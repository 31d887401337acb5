"""descgen's wgmma (sm_90a) descriptor against CUTLASS's ``GmmaDescriptor``
(``cute/arch/mma_sm90_desc.hpp``) and ``SM90::GMMA::make_gmma_desc``
(``cute/atom/mma_traits_sm90_gmma.hpp``), bit for bit.

``tests/cutlass/gmma_desc_check.cpp`` builds CuTe's canonical tiles (``tile_to_shape`` of the
``Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom``) at several shared memory addresses, asks
``make_gmma_desc`` for the descriptor of every MMA K block, and prints the words with
``GmmaDescriptor``'s raw bit fields; its output is committed as
``tests/cutlass/gmma_desc_words.txt`` (CI has no CUTLASS). The first test compares descgen's
encoder (``smem_for_tile(..., arch="sm_90a")`` then the K block's offset) and decoder with every
line; the second rebuilds the program and checks that it still prints the file, where CUTLASS's
headers (``import cutlass_library``, from the ``nvidia-cutlass`` package, or
``$DESCGEN_CUTLASS_DIR``), the CUDA headers and g++ are present (skipped otherwise: a build takes
1-2 minutes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import descgen

HERE = Path(__file__).resolve().parent / "cutlass"
WORDS = HERE / "gmma_desc_words.txt"
K_MMA = {"f16": 16, "tf32": 8, "e4m3": 32}  # one dense wgmma's K (§9.7.15.2): 256 bits of K


def _lines() -> list[list[str]]:
    return [line.split() for line in WORDS.read_text().splitlines() if line and not line.startswith("#")]


def test_the_file_covers_every_mode():
    rows = _lines()
    assert len(rows) == 448
    seen = {(r[0], r[1], r[2]) for r in rows}
    assert {(d, "k", s) for d in K_MMA for s in ("none", "32B", "64B", "128B")} <= seen
    assert {("f16", "mn", s) for s in ("none", "32B", "64B", "128B")} <= seen
    assert {int(r[6]) for r in rows} == {0, 0x400, 0x8000, 0x2C000} and {int(r[5]) for r in rows} == set(range(8))


def test_descgen_encodes_and_decodes_as_cutlass():
    for dtype, major, swizzle, mn, k_tile, block, start, word, *raw in _lines():
        td = descgen.smem_for_tile(dtype=dtype, major=major, swizzle=swizzle, mn=int(mn), k=int(k_tile),
                                   start_address=int(start), arch="sm_90a")
        assert td.descriptor == "wgmma_smem"
        ours = descgen.advance_smem(td.word, td.k_offset(int(block) * K_MMA[dtype]))
        assert ours == int(word, 16), (dtype, major, swizzle, mn, k_tile, block, start, word, hex(ours))
        d = descgen.decode_wgmma_smem(int(word, 16))
        start_f, lbo_f, sbo_f, base, layout_type = map(int, raw)
        assert (d["start_address"].raw, d["lbo"].raw, d["sbo"].raw, d["base_offset"].raw, d["swizzle"].raw) == \
            (start_f, lbo_f, sbo_f, base, layout_type)
        assert d.ok and not d.findings


def _cutlass_include() -> Path | None:
    given = os.environ.get("DESCGEN_CUTLASS_DIR")
    if given:
        root = Path(given)
    else:
        try:
            import cutlass_library  # type: ignore[import-not-found]  # the nvidia-cutlass package
        except ImportError:
            return None
        root = Path(cutlass_library.__file__).resolve().parent / "source"
    include = root / "include" if (root / "include").is_dir() else root
    return include if (include / "cute" / "arch" / "mma_sm90_desc.hpp").is_file() else None


def _cuda_includes() -> list[Path]:
    nvcc = shutil.which("nvcc")
    roots = [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))]
    if nvcc:
        roots.append(Path(os.path.realpath(nvcc)).parent.parent)
    for root in roots:
        inc = root / "include"
        if (inc / "cuda_runtime_api.h").is_file():
            return [inc, inc / "cccl"] if (inc / "cccl").is_dir() else [inc]
    return []


def test_the_cutlass_program_prints_this_file(tmp_path):
    include, cuda, gxx = _cutlass_include(), _cuda_includes(), shutil.which("g++")
    if include is None or not cuda or gxx is None:
        pytest.skip("needs CUTLASS's headers (nvidia-cutlass or $DESCGEN_CUTLASS_DIR), the CUDA headers and g++")
    exe = tmp_path / "gmma_desc_check"
    subprocess.run([gxx, "-std=c++17", "-O0", f"-I{include}", *(f"-I{p}" for p in cuda),
                    str(HERE / "gmma_desc_check.cpp"), "-o", str(exe)], check=True, capture_output=True)
    printed = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    assert [line.split() for line in printed if line] == _lines()
