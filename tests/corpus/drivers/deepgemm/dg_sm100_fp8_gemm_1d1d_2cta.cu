// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_fp8_fp4_gemm_1d1d.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// fp8 e4m3 GEMM with per-128 UE8M0 scale factors (1D1D recipe, gran_k 128: kind::mxf8f6f4
// block-scaled MMA, tcgen05.cp of the scale factors), bf16 output, BLOCK 128x192x128
// (N=256 would need 524 tensor-memory columns, 224 is no multiple of the 64-column store block), cluster 2 (2-CTA MMA), 6 stages.
#include <deep_gemm/impls/sm100_fp8_fp4_gemm_1d1d.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_fp8_fp4_gemm_1d1d_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K,
        128, 128, 128,
        0, 4096, 7168,
        128, 192, 128,
        1,
        128, 128, 128,
        6,
        128, 128,
        2, false,
        148,
        false, false,
        GemmType::Normal, false,
        cutlass::float_e4m3_t, cutlass::float_e4m3_t, cutlass::bfloat16_t,
        epilogue::transform::EpilogueIdentity
    >);
    (void)ptr;
}
