// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_bf16_gemm.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// MoE: m-grouped contiguous bf16 GEMM (swap AB: BLOCK_N=128 is the UMMA M side), 8 groups,
// BLOCK 128x128x64, cluster 2 with multicast on A, 9 stages.
#include <deep_gemm/impls/sm100_bf16_gemm.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_bf16_gemm_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K,
        0, 4096, 7168,
        128, 128, 64,
        8,
        128, 128, 128,
        9,
        128, 128,
        2, true,
        148,
        128,
        true, false,
        GemmType::MGroupedContiguous, false, cutlass::bfloat16_t,
        100
    >);
    (void)ptr;
}
