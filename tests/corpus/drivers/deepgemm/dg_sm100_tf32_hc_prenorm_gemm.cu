// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_tf32_hc_prenorm_gemm.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// Hyper-connection pre-norm GEMM: bf16 A cast to tf32 x fp32 B (kind::tf32), n=24 (block_n 32),
// k=4*7168, BLOCK 64x32x64, 1 split, 12 stages.
#include <deep_gemm/impls/sm100_tf32_hc_prenorm_gemm.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_tf32_hc_prenorm_gemm_impl<
        24, 28672,
        64, 32, 64,
        1,
        128,
        12,
        128, 128
    >);
    (void)ptr;
}
