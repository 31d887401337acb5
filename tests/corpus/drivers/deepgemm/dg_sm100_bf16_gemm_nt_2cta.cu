// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_bf16_gemm.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// bf16 GEMM, D[m,4096] = A[m,7168] (K-major) x B[4096,7168]^T (K-major), m at run time
// ("nk" compiled dims), BLOCK 128x256x64, cluster 2 (multicast on B: 2-CTA MMA), 6 stages.
#include <deep_gemm/impls/sm100_bf16_gemm.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_bf16_gemm_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K,
        0, 4096, 7168,
        128, 256, 64,
        1,
        128, 128, 128,
        6,
        128, 128,
        2, false,
        148,
        128,
        false, false,
        GemmType::Normal, false, cutlass::bfloat16_t,
        100
    >);
    (void)ptr;
}
