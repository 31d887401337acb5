// A hand-written Hopper (sm_90a) bf16 GEMM for the descriptor sanitizer's GPU runs
// (tests/device/sanitizer/README.md): C[M,N] (fp32) = A[M,K] (bf16, row-major) x B[N,K]^T (bf16,
// row-major, i.e. both operands K-major), fp32 accumulation in registers.
//
// One warpgroup (128 threads) per CTA computes a 128 x 128 tile of C. K advances in blocks of 64
// bf16 (128 bytes: one row of the 128-byte swizzle), through a 4-stage ring of shared memory
// buffers filled with cp.async (16 bytes per thread and copy), written in the 128B-swizzled
// K-major layout (§9.7.15.5.1.2: the 16-byte chunk c of row r lies at r * 128 + ((c ^ (r % 8)) * 16)
// from a 1024-byte aligned tile). Each K block is 4 K-steps of 16 x 2 M-halves of
// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16, A and B both from shared memory
// descriptors.
//
// The descriptors are built at run time, in registers, from the shared memory address (as real
// kernels do: §9.7.15.5.1.2.2, start address (x & 0x3FFFF) >> 4 in bits 0-13, LBO >> 4 in 16-29,
// SBO >> 4 in 32-45, swizzle in 62-63, 1 = 128B), and advanced along K by adding 32 bytes >> 4 to
// the 64-bit word, as CUTLASS's descriptor iterator does.
//
// The kernel parameter `bug` plants one RUN-TIME descriptor bug in the A operand's descriptor
// word, and only there (the copies, the B descriptor and the epilogue are the same for every
// value); see plant() and README.md:
//   0  none
//   1  A's start address past the CTA's shared memory (+0x1E000 bytes, inside the 256 KiB window)
//   2  a carry out of the start address field (a 1 KiB step back added as the 18-bit two's
//      complement 0x3FC0 to the 64-bit word: bits 0-13 wrap, bit 14 is set)
//   3  start address 2 x 128-byte rows off its 1024-byte 128B-swizzle boundary, base offset 0
//   4  SBO 512 bytes (8 rows of 64 bytes: the 64B swizzle's value) with the 128B swizzle
//   5  the generic address of the tile, not its shared-window address, encoded without the
//      0x3FFFF mask: its bits above bit 17 land in bits 14 and up
//   6  a carry through bits 14-15 into the LBO (a 1 KiB step back added as the 16-bit two's
//      complement 0xFFC0: bits 14-15 stay 0, the LBO, unused here, goes from 1 to 2)
//
// Compiled here with `nvcc -arch=sm_90a -ptx`; the runner (run.py) instruments the PTX with
// `descgen instrument`, assembles both with ptxas, loads them with the driver API and launches
// gemm_bf16_tn with 128 threads and SMEM_BYTES (132096) of dynamic shared memory.
#include <cstdint>
#include <cuda_bf16.h>

namespace {

constexpr int BM = 128, BN = 128, BK = 64;  // CTA tile; BK bf16 = 128 bytes = one 128B-swizzle row
constexpr int STAGES = 4;                    // shared memory ring
constexpr int PREFETCH = STAGES - 2;         // K blocks in flight ahead of the MMA
constexpr int THREADS = 128;                 // one warpgroup
constexpr uint32_t TILE_A = BM * BK * 2;     // 16 KiB
constexpr uint32_t TILE_B = BN * BK * 2;     // 16 KiB
constexpr uint32_t STAGE_BYTES = TILE_A + TILE_B;
constexpr uint32_t SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + room to align the ring to 1024
static_assert(SMEM_BYTES == 132096, "run.py launches with SMEM_BYTES = 132096");

// The planted bugs' constants (README.md).
constexpr uint32_t BUG1_OFFSET = 0x1E000;        // bytes past the tile: beyond the CTA's 0x20400
constexpr uint64_t BUG2_STEP = (0x40000 - 1024) >> 4;  // -1 KiB as an unsigned 18-bit offset, >> 4
constexpr uint32_t BUG3_ROWS = 2;                // 128-byte rows off the 1024-byte boundary
constexpr uint32_t BUG4_SBO = 8 * 64;            // 64B swizzle's SBO with the 128B swizzle
constexpr uint64_t BUG6_STEP = 0x10000 - (1024 >> 4);  // -1 KiB >> 4 as a 16-bit two's complement

// The descriptor's constant fields for a K-major 128B-swizzled bf16 tile (§9.7.15.5.1.2.1):
// LBO unused (assumed 1: encoded 1), SBO = 8 rows x 128 bytes between 8-row groups.
constexpr uint64_t LBO_ENC = 16 >> 4;
constexpr uint64_t SBO_BYTES = 8 * 128;
constexpr uint64_t SWIZZLE_128B = 1;

__device__ __forceinline__ uint64_t encode_desc(uint32_t smem_addr, uint64_t sbo_bytes) {
  return uint64_t((smem_addr & 0x3FFFF) >> 4) | (LBO_ENC << 16) | ((sbo_bytes >> 4) << 32) | (SWIZZLE_128B << 62);
}

// A's descriptor for one M-half of one stage, with the planted bug `bug` (0: none). `addr` is the
// tile's shared-window address, `generic` the same byte's generic address.
__device__ __forceinline__ uint64_t a_desc(uint32_t addr, const void* generic, int bug) {
  if (bug == 1) return encode_desc(addr + BUG1_OFFSET, SBO_BYTES);
  if (bug == 2) return encode_desc(addr, SBO_BYTES) + BUG2_STEP;
  if (bug == 3) return encode_desc(addr + BUG3_ROWS * 128, SBO_BYTES);
  if (bug == 4) return encode_desc(addr, BUG4_SBO);
  if (bug == 5)  // the footgun: a generic pointer, encoded without the 18-bit window mask
    return (reinterpret_cast<uint64_t>(generic) >> 4) | (LBO_ENC << 16) | ((SBO_BYTES >> 4) << 32) |
           (SWIZZLE_128B << 62);
  if (bug == 6) return encode_desc(addr, SBO_BYTES) + BUG6_STEP;
  return encode_desc(addr, SBO_BYTES);
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// D (64 x 128, fp32) += A (64 x 16, descriptor) x B (16 x 128, descriptor), both K-major.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "
      "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// Copy K block `kb` of this CTA's A and B rows into stage buffer `stage`, 128B-swizzled.
__device__ __forceinline__ void load_stage(uint32_t ring, int stage, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                           int K, int kb) {
  const uint32_t sa = ring + stage * STAGE_BYTES + TILE_B;  // B first, A after it (README: bug 2)
  const uint32_t sb = ring + stage * STAGE_BYTES;
  const int t = threadIdx.x;
#pragma unroll
  for (int i = 0; i < (BM * BK / 8) / THREADS; ++i) {  // 8 chunks of 16 bytes per row
    const int id = i * THREADS + t, row = id >> 3, c = id & 7;
    const uint32_t off = row * 128 + ((c ^ (row & 7)) << 4);
    cp_async_16(sa + off, a + size_t(row) * K + kb * BK + c * 8);
    cp_async_16(sb + off, b + size_t(row) * K + kb * BK + c * 8);
  }
}

// The GEMM itself; `bug` as above (a compile-time 0 in gemm_bf16_tn_fixed below).
__device__ __forceinline__ void gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                     float* __restrict__ C, int M, int N, int K, int bug, uint8_t* smem_raw) {
  // The ring on a 1024-byte boundary of the shared window (the 128B swizzle pattern's boundary).
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t ring = (raw + 1023) & ~1023u;
  const uint8_t* ring_generic = smem_raw + (ring - raw);

  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const __nv_bfloat16* a = A + size_t(m0) * K;
  const __nv_bfloat16* b = B + size_t(n0) * K;
  const int kblocks = K / BK;

  float acc[2][64];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[h][j] = 0.f;

#pragma unroll
  for (int s = 0; s < PREFETCH; ++s) {
    if (s < kblocks) load_stage(ring, s, a, b, K, s);
    cp_async_commit();
  }

  for (int kb = 0; kb < kblocks; ++kb) {
    const int stage = kb % STAGES;
    cp_async_wait<PREFETCH - 1>();  // this thread's copies of block kb have landed
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // visible to wgmma (async proxy)
    __syncthreads();  // everyone's copies; and every thread waited for the MMAs of block kb - 2
    // Refill the buffer block kb - 2 used (its MMAs are complete: wgmma_wait<1> below, last round).
    if (kb + PREFETCH < kblocks) load_stage(ring, (kb + PREFETCH) % STAGES, a, b, K, kb + PREFETCH);
    cp_async_commit();

    const uint32_t sa = ring + stage * STAGE_BYTES + TILE_B, sb = ring + stage * STAGE_BYTES;
    const uint8_t* ga = ring_generic + stage * STAGE_BYTES + TILE_B;
    uint64_t da[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) da[h] = a_desc(sa + h * (TILE_A / 2), ga + h * (TILE_A / 2), bug);
    const uint64_t db = encode_desc(sb, SBO_BYTES);

    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {  // + 32 bytes (16 bf16) along K inside the swizzle row
#pragma unroll
      for (int h = 0; h < 2; ++h) wgmma_m64n128k16(acc[h], da[h] + kk * (32 >> 4), db + kk * (32 >> 4));
    }
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();

  // Epilogue: the m64nNk16 f32 accumulator fragment (§9.7.15.4.2): register j of thread t holds
  // row 16 * warp + lane / 4 + 8 * ((j / 2) % 2), column 8 * (j / 4) + 2 * (lane % 4) + j % 2.
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int j = 0; j < 64; j += 2) {
      const int row = m0 + h * 64 + warp * 16 + (lane >> 2) + 8 * ((j >> 1) & 1);
      const int col = n0 + 8 * (j >> 2) + 2 * (lane & 3);
      *reinterpret_cast<float2*>(C + size_t(row) * N + col) = make_float2(acc[h][j], acc[h][j + 1]);
    }
  }
}

}  // namespace

// The GEMM with the planted-bug switch: `bug` is a kernel parameter, so every field of A's
// descriptor is a run-time value to the scan (a worst case for the sanitizer: 9 checks a wgmma).
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_bf16_tn(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, float* __restrict__ C,
                 int M, int N, int K, int bug) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  gemm(A, B, C, M, N, K, bug, smem_raw);
}

// The same GEMM as it is written without the switch (`bug` ignored: 0): its descriptors' fields
// are constants but the start address, as in CUTLASS and Triton.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_bf16_tn_fixed(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                       float* __restrict__ C, int M, int N, int K, int) {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  gemm(A, B, C, M, N, K, 0, smem_raw);
}
