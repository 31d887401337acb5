#!/usr/bin/env python3
"""Probe which tcgen05.mma / tcgen05.cp spellings ptxas accepts, per .version (hand-written PTX).

Not corpus data: each probe is a one-instruction kernel written here; the output
(a table of OK/ERR with ptxas's message) is quoted in PATTERNS.md.

    python tests/corpus/probe_ptxas.py [--ptxas PATH] [--versions 8.6,8.7,8.8,9.0]
"""
import argparse
import os
import subprocess
import tempfile
forms = {
 "mma cta_group.kind": "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;",
 "mma kind.cta_group": "tcgen05.mma.kind::f16.cta_group::1 [%r1], %rd1, %rd2, %r2, %p1;",
 "mma no cta_group": "tcgen05.mma.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;",
 "mma .ws cta_group.kind": "tcgen05.mma.ws.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;",
 "mma cta_group.ws.kind": "tcgen05.mma.cta_group::1.ws.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;",
 "mma kind.ws": "tcgen05.mma.ws.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;",
 "mma A tmem": "tcgen05.mma.cta_group::1.kind::f16 [%r1], [%r3], %rd2, %r2, %p1;",
 "mma bs block_scale.scale_vec::1X": "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X "
                                     "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma bs block_scale.block32": "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 "
                               "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma bs block_scale (no vec)": "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale "
                                "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma bs scale_vec before block_scale": "tcgen05.mma.cta_group::1.kind::mxf8f6f4.scale_vec::1X.block_scale "
                                        "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma bs block_scale before kind": "tcgen05.mma.cta_group::1.block_scale.kind::mxf8f6f4.scale_vec::1X "
                                   "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma mxf4nvf4 block16": "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 "
                         "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma mxf4nvf4 scale_vec::4X": "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X "
                               "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma mxf4 block32": "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 "
                     "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma mxf4 scale_vec::2X": "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X "
                           "[%r1], %rd1, %rd2, %r2, [%r4], [%r5], %p1;",
 "mma disable-output-lane": "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%r6, %r6, %r6, %r6}, %p1;",
 "mma imm idesc": "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, 136380432, %p1;",
 "mma imm adesc": "tcgen05.mma.cta_group::1.kind::f16 [%r1], 4611756662049538048, %rd2, %r2, %p1;",
 "mma imm enable-input-d": "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, 1;",
 "mma [%r+8] addr": "tcgen05.mma.cta_group::1.kind::f16 [%r1+8], %rd1, %rd2, %r2, %p1;",
 "mma 32-bit adesc reg": "tcgen05.mma.cta_group::1.kind::f16 [%r1], %r7, %rd2, %r2, %p1;",
 "mma 64-bit idesc reg": "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %rd3, %p1;",
 "cp shape.warpx4": "tcgen05.cp.cta_group::1.32x128b.warpx4 [%r1], %rd1;",
 "cp warpx4.shape": "tcgen05.cp.cta_group::1.warpx4.32x128b [%r1], %rd1;",
 "cp shape.cta_group": "tcgen05.cp.32x128b.warpx4.cta_group::1 [%r1], %rd1;",
 "cp 128x256b": "tcgen05.cp.cta_group::1.128x256b [%r1], %rd1;",
 "cp 4x256b": "tcgen05.cp.cta_group::1.4x256b [%r1], %rd1;",
 "cp 64x128b.warpx2::02_13": "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r1], %rd1;",
 "cp decompress b8x16.b6x16_p32": "tcgen05.cp.cta_group::1.128x128b.b8x16.b6x16_p32 [%r1], %rd1;",
 "cp 32-bit desc reg": "tcgen05.cp.cta_group::1.128x256b [%r1], %r7;",
 "cp imm desc": "tcgen05.cp.cta_group::1.128x256b [%r1], 4611756662049538048;",
 "regs without % (.reg .b32 r<10>; ... [r1], rd1, rd2, r2, p1)": None,
}
tmpl = """.version {ver}
.target sm_100a
.address_size 64
.visible .entry k()
{{
.reg .b32 %r<10>;
.reg .b64 %rd<10>;
.reg .pred %p<3>;
mov.b32 %r1, 0; mov.b32 %r2, 0; mov.b32 %r3, 0; mov.b32 %r4, 0; mov.b32 %r5, 0; mov.b32 %r6, 0; mov.b32 %r7, 0;
mov.b64 %rd1, 0; mov.b64 %rd2, 0; mov.b64 %rd3, 0;
setp.ne.b32 %p1, %r1, 0;
{body}
ret;
}}
"""
nopct = """.version {ver}
.target sm_100a
.address_size 64
.visible .entry k()
{{
.reg .b32 r<10>;
.reg .b64 rd<10>;
.reg .pred p<3>;
mov.b32 r1, 0; mov.b32 r2, 0;
mov.b64 rd1, 0; mov.b64 rd2, 0;
setp.ne.b32 p1, r1, 0;
tcgen05.mma.cta_group::1.kind::f16 [r1], rd1, rd2, r2, p1;
ret;
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--versions", default="8.6,8.7,8.8,9.0")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.ptx")
        for ver in a.versions.split(","):
            print("== .version", ver)
            for name, body in forms.items():
                src = (nopct if body is None else tmpl).format(ver=ver, body=body)
                with open(path, "w") as f:
                    f.write(src)
                r = subprocess.run([a.ptxas, "-arch=sm_100a", path, "-o", os.devnull], capture_output=True,
                                   text=True)
                msg = "" if r.returncode == 0 else " | ".join(
                    ln.split(":", 2)[-1].strip() for ln in r.stderr.strip().splitlines()[:2])
                print(f"  {'OK ' if r.returncode == 0 else 'ERR'} {name:40} {msg[:150]}")


if __name__ == "__main__":
    main()
