#!/usr/bin/env bash
# Build and run the wgmma layout probe on a Hopper GPU; write the maps (gzipped) and the device
# name into OUTDIR. Usage: run.sh OUTDIR   (from anywhere; needs nvcc 12.3+ and an sm_90 GPU)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out"
bin=$(mktemp -d)/wgmma_probe   # a temporary directory, never a fixed path
nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a "$here/probe.cu" -o "$bin"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
nvcc --version | tail -2 >> "$out/gpu.txt"
"$bin" "$here/jobs.txt" "$out/maps.txt"
gzip -9 -f "$out/maps.txt"
