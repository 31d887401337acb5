// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_fp8_fp4_gemm_1d1d.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// k-grouped contiguous fp8 GEMM (MoE weight gradient), A and B MN-major, fp32 accumulation
// into C, 4 groups, BLOCK 128x128x128, single CTA.
#include <deep_gemm/impls/sm100_fp8_fp4_gemm_1d1d.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_fp8_fp4_gemm_1d1d_impl<
        cute::UMMA::Major::MN, cute::UMMA::Major::MN,
        128, 128, 128,
        4096, 7168, 0,
        128, 128, 128,
        4,
        128, 128, 128,
        6,
        128, 128,
        1, false,
        148,
        false, false,
        GemmType::KGroupedContiguous, true,
        cutlass::float_e4m3_t, cutlass::float_e4m3_t, float,
        epilogue::transform::EpilogueIdentity
    >);
    (void)ptr;
}
