// Hand-written Hopper wgmma.mma_async kernels (sm_90a) for descgen's scanner corpus:
// every form of PTX ISA 9.1 section 9.7.15.5.2, descriptors built from shared memory addresses
// as CUTLASS's GmmaDescriptor builds them (section 9.7.15.5.1.2.2: start address >> 4 in bits
// 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, swizzle in 62-63: 1 = 128B, 2 = 64B, 3 = 32B).
// Compiled by tests/corpus/make_handwritten_sm90.py; never run (no GPU needed).
#include <cstdint>

__device__ __forceinline__ uint64_t make_desc(const void* p, uint32_t lbo, uint32_t sbo, uint32_t swizzle) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return uint64_t((a & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) |
         (uint64_t(swizzle) << 62);
}

extern "C" __global__ void wgmma_forms(float* out, int* iout, const uint32_t* areg, int scale_d) {
  __shared__ __align__(1024) uint8_t smem[49152];
  const uint8_t* sa = smem;          // A tiles
  const uint8_t* sb = smem + 16384;  // B tiles
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");

  float dh[32] = {};
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
               : "+f"(dh[0]), "+f"(dh[1]), "+f"(dh[2]), "+f"(dh[3]), "+f"(dh[4]), "+f"(dh[5]), "+f"(dh[6]), "+f"(dh[7]), "+f"(dh[8]), "+f"(dh[9]), "+f"(dh[10]), "+f"(dh[11]), "+f"(dh[12]), "+f"(dh[13]), "+f"(dh[14]), "+f"(dh[15]), "+f"(dh[16]), "+f"(dh[17]), "+f"(dh[18]), "+f"(dh[19]), "+f"(dh[20]), "+f"(dh[21]), "+f"(dh[22]), "+f"(dh[23]), "+f"(dh[24]), "+f"(dh[25]), "+f"(dh[26]), "+f"(dh[27]), "+f"(dh[28]), "+f"(dh[29]), "+f"(dh[30]), "+f"(dh[31])
               : "l"(make_desc(sa, 16, 1024, 1)), "l"(make_desc(sb, 8192, 1024, 1)), "r"(scale_d));
  float db[16] = {};
  uint32_t ab[4] = {areg[0], areg[1], areg[2], areg[3]};
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, -1, 0;\n}\n"
               : "+f"(db[0]), "+f"(db[1]), "+f"(db[2]), "+f"(db[3]), "+f"(db[4]), "+f"(db[5]), "+f"(db[6]), "+f"(db[7]), "+f"(db[8]), "+f"(db[9]), "+f"(db[10]), "+f"(db[11]), "+f"(db[12]), "+f"(db[13]), "+f"(db[14]), "+f"(db[15])
               : "r"(ab[0]), "r"(ab[1]), "r"(ab[2]), "r"(ab[3]), "l"(make_desc(sb + 4096, 16, 512, 2)), "r"(scale_d));
  float dt[8] = {};
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, -1, 1;\n}\n"
               : "+f"(dt[0]), "+f"(dt[1]), "+f"(dt[2]), "+f"(dt[3]), "+f"(dt[4]), "+f"(dt[5]), "+f"(dt[6]), "+f"(dt[7])
               : "l"(make_desc(sa + 8192, 16, 512, 2)), "l"(make_desc(sb + 8192, 16, 512, 2)), "r"(scale_d));
  uint32_t d8[8] = {};
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e5m2 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1;\n}\n"
               : "+r"(d8[0]), "+r"(d8[1]), "+r"(d8[2]), "+r"(d8[3]), "+r"(d8[4]), "+r"(d8[5]), "+r"(d8[6]), "+r"(d8[7])
               : "l"(make_desc(sa + 12288, 16, 256, 3)), "l"(make_desc(sb + 12288, 16, 256, 3)), "r"(scale_d));
  uint32_t di[24] = {};
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %26, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n48k32.s32.s8.u8.satfinite {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, %24, %25, p;\n}\n"
               : "+r"(di[0]), "+r"(di[1]), "+r"(di[2]), "+r"(di[3]), "+r"(di[4]), "+r"(di[5]), "+r"(di[6]), "+r"(di[7]), "+r"(di[8]), "+r"(di[9]), "+r"(di[10]), "+r"(di[11]), "+r"(di[12]), "+r"(di[13]), "+r"(di[14]), "+r"(di[15]), "+r"(di[16]), "+r"(di[17]), "+r"(di[18]), "+r"(di[19]), "+r"(di[20]), "+r"(di[21]), "+r"(di[22]), "+r"(di[23])
               : "l"(make_desc(sa + 1024, 16, 1024, 1)), "l"(make_desc(sb + 16384, 16, 1024, 1)), "r"(scale_d));
  uint32_t d1[4] = {};
  uint32_t a1[4] = {areg[4], areg[5], areg[6], areg[7]};
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p;\n}\n"
               : "+r"(d1[0]), "+r"(d1[1]), "+r"(d1[2]), "+r"(d1[3])
               : "r"(a1[0]), "r"(a1[1]), "r"(a1[2]), "r"(a1[3]), "l"(make_desc(sb + 20480, 128, 256, 0)), "r"(scale_d));
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  int t = threadIdx.x;
  for (int i = 0; i < 32; ++i) out[t * 64 + i] = dh[i];
  for (int i = 0; i < 16; ++i) out[t * 64 + 32 + i] = db[i];
  for (int i = 0; i < 8; ++i) out[t * 64 + 48 + i] = dt[i] + __uint_as_float(d8[i]);
  for (int i = 0; i < 24; ++i) iout[t * 32 + i] = di[i];
  for (int i = 0; i < 4; ++i) iout[t * 32 + 24 + i] = d1[i];
}
