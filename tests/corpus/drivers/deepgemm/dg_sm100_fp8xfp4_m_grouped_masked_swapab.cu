// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_fp8_fp4_gemm_1d1d.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// Mixed fp8 activations x fp4 weights (a e4m3 gran_k 128, b e2m1 gran_k 32), MoE m-grouped masked
// layout (decode), swap AB, 8 groups, BLOCK 128x128x128, cluster 2 multicast on A.
#include <deep_gemm/impls/sm100_fp8_fp4_gemm_1d1d.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_fp8_fp4_gemm_1d1d_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K,
        128, 32, 128,
        0, 4096, 7168,
        128, 128, 128,
        8,
        128, 128, 128,
        6,
        128, 128,
        2, true,
        148,
        true, false,
        GemmType::MGroupedMasked, false,
        cutlass::float_e4m3_t, cutlass::detail::float_e2m1_unpacksmem_t, cutlass::bfloat16_t,
        epilogue::transform::EpilogueIdentity
    >);
    (void)ptr;
}
