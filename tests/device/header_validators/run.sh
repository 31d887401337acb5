#!/usr/bin/env bash
# The header's validators on a GPU: builds validators_kernel.cu (beside this script) for sm_90a with the
# header descgen generates now, runs it over the differential's records (tests/cpp/differential.py,
# the same million the host test uses), compares the device with the host run of the same
# validators and, through a file, with the Python API's verdicts. Needs nvcc, a GPU and python3
# (stdlib only: the library is importable with PYTHONPATH=. from the repository root).
#
#   tests/device/header_validators/run.sh OUTDIR
#
# OUTDIR gets summary.txt (a few lines: the device, the counts, the hashes) and device_digests.bin
# (one 32-bit digest per record, 4 MB); commit both to tests/device/header_validators/recorded/ so that
# tests/test_cpp_header.py checks them against what the generator makes now.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cd "$root"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "from descgen.backends.cpp_header import header; open('$build/descgen_tcgen05.hpp', 'w').write(header())"
python3 tests/cpp/differential.py records "$build/records.bin"
nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -I"$build" -I"$root/tests/cpp" \
    "$here/validators_kernel.cu" -o "$build/validators_kernel"
set +e
"$build/validators_kernel" "$build/records.bin" "$out/device_digests.bin" "$build/host_digests.bin" > "$build/kernel.txt"
kernel_rc=$?
set -e
python3 tests/cpp/differential.py digests "$build/records.bin" "$build/python_digests.bin"
python3 - "$build" "$out" "$kernel_rc" <<'PY'
import hashlib, sys
from array import array
build, out, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(path):
    a = array("I")
    with open(path, "rb") as fh:
        a.frombytes(fh.read())
    return a
device, host, python = load(f"{out}/device_digests.bin"), load(f"{build}/host_digests.bin"), load(f"{build}/python_digests.bin")
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
lines = open(f"{build}/kernel.txt").read().splitlines()
lines += [
    f"kernel_rc={rc}",
    f"records_sha256={sha(f'{build}/records.bin')}",
    f"header_sha256={sha(f'{build}/descgen_tcgen05.hpp')}",
    f"device_python_agree={sum(d == p for d, p in zip(device, python))}",
    f"host_python_agree={sum(h == p for h, p in zip(host, python))}",
    f"device_digests_sha256={sha(f'{out}/device_digests.bin')}",
]
ok = rc == 0 and len(device) == len(python) and all(d == p for d, p in zip(device, python))
lines.append(f"agreement={'yes' if ok else 'no'}")
open(f"{out}/summary.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(0 if ok else 1)
PY
