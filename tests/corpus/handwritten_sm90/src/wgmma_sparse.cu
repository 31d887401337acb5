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


extern "C" __global__ void wgmma_sparse(float* out, int* iout, const uint32_t* areg, const uint32_t* meta,
                                        int scale_d) {
  __shared__ __align__(1024) uint8_t smem[32768];
  float dh[16] = {};
  uint32_t di[8] = {};
  uint32_t m = meta[threadIdx.x];
  // As CUTLASS's DescriptorIterator: the K loop moves the start address in the low 32 bits only.
  const uint64_t a0 = make_desc(smem, 16, 256, 3);           // f16 A: K-major, 32B swizzle
  const uint64_t b0 = make_desc(smem + 8192, 16, 256, 3);    // f16 B
  const uint64_t ai0 = make_desc(smem + 16384, 16, 1024, 1); // s8 A: 128B swizzle
  const uint64_t bi0 = make_desc(smem + 24576, 16, 1024, 1); // s8 B
#pragma unroll
  for (int k = 0; k < 2; ++k) {  // unrolled: each slice's descriptor is known but for the start address
    uint64_t a = (a0 >> 32 << 32) | uint32_t(uint32_t(a0) + 2 * k);   // the next K slice: +32 bytes (>> 4)
    uint64_t b = (b0 >> 32 << 32) | uint32_t(uint32_t(b0) + 4 * k);
    uint64_t ai = (ai0 >> 32 << 32) | uint32_t(uint32_t(ai0) + 2 * k);
    uint64_t bi = (bi0 >> 32 << 32) | uint32_t(uint32_t(bi0) + 4 * k);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %19, 0;\n"
               "wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, %18, 1, p, 1, 1, 0, 0;\n}\n"
               : "+f"(dh[0]), "+f"(dh[1]), "+f"(dh[2]), "+f"(dh[3]), "+f"(dh[4]), "+f"(dh[5]), "+f"(dh[6]), "+f"(dh[7]), "+f"(dh[8]), "+f"(dh[9]), "+f"(dh[10]), "+f"(dh[11]), "+f"(dh[12]), "+f"(dh[13]), "+f"(dh[14]), "+f"(dh[15])
               : "l"(a), "l"(b), "r"(m), "r"(scale_d));
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %11, 0;\n"
               "wgmma.mma_async.sp.sync.aligned.m64n16k64.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, %10, 0, p;\n}\n"
               : "+r"(di[0]), "+r"(di[1]), "+r"(di[2]), "+r"(di[3]), "+r"(di[4]), "+r"(di[5]), "+r"(di[6]), "+r"(di[7])
               : "l"(ai), "l"(bi), "r"(m), "r"(scale_d));
    asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  int t = threadIdx.x;
  for (int i = 0; i < 16; ++i) out[t * 16 + i] = dh[i];
  for (int i = 0; i < 8; ++i) iout[t * 8 + i] = di[i];
}
