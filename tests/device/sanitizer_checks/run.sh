#!/usr/bin/env bash
# The sanitizer's tcgen05 checks on a GPU (harness.py says what and how): builds the harness from
# the corpus with the instrumenter as it is now, runs it over a million words, computes the Python
# engine's answer for every word and compares. Needs ptxas, a GPU (any sm_90a) and python3 with the
# library importable (PYTHONPATH=. from the repository root).
#
#   tests/device/sanitizer_checks/run.sh OUTDIR
#
# OUTDIR gets summary.txt, sites.json, smem.txt, device.bin (one u32 per word, 4 MB) and loader.txt
# (the generated header's loader, loader_demo.cpp, printing the records of site0's first 256 words); commit
# them to tests/device/sanitizer_checks/recorded/ (not words.bin: the build makes it again).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
python3 "$here/harness.py" build "$out"
python3 "$here/harness.py" run "$out"
python3 "$here/harness.py" compare "$out"
# the generated header's report-buffer loader (DESCGEN_SANITIZER) over the same module: loader.txt
python3 -c "from descgen.backends.cpp_header import header; open('$out/descgen_tcgen05.hpp', 'w').write(header())"
nvcc -std=c++17 -I"$out" "$here/loader_demo.cpp" -lcuda -o "$out/loader_demo"
"$out/loader_demo" "$out/harness.cubin" "$out/words.bin" > "$out/loader.txt" 2>&1 || echo "loader_demo failed: $?" >> "$out/loader.txt"
rm -f "$out/words.bin" "$out/harness.cubin" "$out/harness.ptx" "$out/loader_demo" "$out/descgen_tcgen05.hpp"
