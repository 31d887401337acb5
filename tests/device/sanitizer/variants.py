"""Where the sanitizer's cost in a Triton matmul comes from: each kernel of triton_gemms.py built
several ways and timed interleaved at 4096^3 (a measurement for the next step, docs/sanitizer.md):

- ``plain``: Triton's PTX;
- ``inst``: ``descgen instrument``'s (what run.py times);
- ``no_stand_ins``: the same, each wgmma reading its own words (the checks and the finding noted
  kept; the first wgmma no longer waits for the checks);
- ``stand_ins_only``: the same as ``inst``, the group's flag read from a register that is never
  set (``%aggr_smem_size == 0``) and no finding noted: the stand-ins' selects kept, the checks dead
  (ptxas drops them);
- ``no_save``: ``inst`` without saving the registers a finding's words are computed from (the
  record would read registers never written: a measurement only);
- ``report``: ``descgen instrument --on-error report``'s.

    python3 tests/device/sanitizer/variants.py OUT [VARIANT...]   (torch, triton 3.6, an sm_90a GPU)

Writes OUT/variants.json and prints one line per kernel and variant (all of them, or those named:
``plain inst`` times the instrumentation alone, as run.py does, in a process of its own).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

import torch
import triton

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[2])]
import triton_gemms as tg  # noqa: E402

from descgen.sanitizer.instrument import instrument_ptx  # noqa: E402

SIZE = 4096
VARIANTS = ("plain", "inst", "no_stand_ins", "stand_ins_only", "no_save", "report")


def variant(ptx: str, how: str) -> str:
    """The PTX ``how`` names (module docstring)."""
    if how == "plain":
        return ptx
    out = instrument_ptx(ptx, on_error="report" if how == "report" else "trap").ptx
    if how == "no_stand_ins":  # (each stand-in register back to the word it selects)
        words = dict(re.findall(r"selp\.b64 (%dgs\d+_\d+), \S+, (%\w+), %dgf\d+;", out))
        words.update((s, w) for w, s in re.findall(
            r"mov\.b64 \{%dgl, %dgh\}, (%\w+); selp\.b32 %dgl, \S+, %dgl, %dgf\d+; mov\.b64 (%dgs\d+_\d+),", out))
        out = "\n".join(re.sub(r"%dgs\d+_\d+\b", lambda m: words[m.group(0)], ln) if "wgmma.mma_async" in ln else ln
                        for ln in out.split("\n"))
    elif how == "no_save":
        out = re.sub(r"\n\t@%dgf\d+ mov\.\w+ %dgv\d+_\d+, %[\w$]+;", "", out)
    elif how == "stand_ins_only":
        out = re.sub(r"setp\.ne\.b32 (%dgf\d+), %dgfw\d+, 0;", r"setp.eq.u32 \1, %dgz_smem_size, 0;", out)
        out = re.sub(r"\n\tor\.b32 (%dgst\d+), %dgst\d+, %dgfw\d+;", "", out)
    return out


def build(name: str, how: str):
    """The kernel compiled with its PTX stage's output replaced by the variant."""
    def hook(*args):
        if not args:
            return f"-variant-{how}", how
        stages = args[1]
        make_ptx = stages["ptx"]
        stages["ptx"] = lambda src, metadata: variant(make_ptx(src, metadata), how)

    triton.knobs.runtime.add_stages_inspection_hook = hook
    try:
        g = tg.BUILDERS[name](fresh=True)
        a, b = g.make_inputs(SIZE, SIZE, SIZE, seed=7)
        c, k = g.launch(a, b)
        torch.cuda.synchronize()
    finally:
        triton.knobs.runtime.add_stages_inspection_hook = None
    return g, a, b, c, k


def main(out: Path, variants: tuple[str, ...] = VARIANTS) -> int:
    # (Triton 3.6's cache key does not see the stages hook: a cache of its own, so that no variant
    # comes back as another program's plain kernel; and each variant compiled anew)
    triton.knobs.cache.dir = tempfile.mkdtemp(prefix="descgen-variants-")
    triton.knobs.compilation.always_compile = True
    result: dict = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__, "size": SIZE, "kernels": {}}
    for name in ("bf16", "fp8", "persistent", "tma"):
        built = {how: build(name, how) for how in variants}
        plain_c = built["plain"][3]
        bits = torch.int16 if plain_c.element_size() == 2 else torch.int32
        same = {how: bool(torch.equal(plain_c.view(bits), built[how][3].view(bits))) for how in variants}
        times: dict = {how: [] for how in variants}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        order = list(variants)
        for r in range(24):
            for how in (order if r % 2 == 0 else order[::-1]):
                g, a, b, _, _ = built[how]
                start.record()
                for _ in range(5):
                    g.launch(a, b)
                end.record()
                end.synchronize()
                times[how].append(start.elapsed_time(end) / 5)
        med = {how: statistics.median(v) for how, v in times.items()}
        result["kernels"][name] = {"median_ms": med, "bit_identical": same,
                                   "overhead_percent": {h: (med[h] / med["plain"] - 1) * 100 for h in variants}}
        for how in variants:
            print(f"{name:10s} {how:15s} {med[how]:.4f} ms  {result['kernels'][name]['overhead_percent'][how]:+6.2f} %"
                  f"  bit-identical {same[how]}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "variants.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), tuple(sys.argv[2:]) or VARIANTS))
