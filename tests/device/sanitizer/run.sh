#!/usr/bin/env bash
# The descriptor sanitizer on a Hopper GPU (README.md beside this script): builds gemm_sm90.cu,
# instruments it with descgen, runs (a) bit-identical outputs and (b) timing on 4096^3, (c) each
# planted bug in a process of its own, and the Triton kernels with and without descgen's hook.
# Needs nvcc/ptxas, a GPU (sm_90a), python3 (standard library; torch and triton for the Triton
# part); descgen is imported from this checkout (PYTHONPATH).
#
#   bash tests/device/sanitizer/run.sh OUTDIR        (OUTDIR defaults to $OUT)
#
# OUTDIR/recorded/ gets summary.txt and summary.json (and a JSON per part, the logs, the PTX built
# on the machine and its site table); commit it to tests/device/sanitizer/recorded/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-${OUT:?usage: run.sh OUTDIR}}
mkdir -p "$out/recorded"
out=$(cd "$out" && pwd)
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
py=${PYTHON:-}
if [ -z "$py" ]; then
    for c in python3 python; do
        if command -v "$c" >/dev/null 2>&1 && "$c" -c "import torch, triton" >/dev/null 2>&1; then py=$c; break; fi
    done
fi
py=${py:-python3}
{
    echo "python: $("$py" --version 2>&1)"
    "$py" -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, '| triton', triton.__version__)" 2>&1 | tail -1
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -2
    (nvcc --version 2>&1 || echo "nvcc: not on PATH") | tail -1
} > "$out/recorded/machine.txt"
cat "$out/recorded/machine.txt"
cd "$root"
"$py" "$here/run.py" all "$out" 2>&1 | tee "$out/run.log"
