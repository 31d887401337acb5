// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_fp8_fp4_gemm_1d1d.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// fp4 e2m1 x fp4 e2m1 GEMM (unpacked in shared memory), UE8M0 scales every 32 (gran_k 32),
// bf16 output, BLOCK 128x128x128, single CTA, 7 stages.
#include <deep_gemm/impls/sm100_fp8_fp4_gemm_1d1d.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_fp8_fp4_gemm_1d1d_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K,
        32, 32, 32,
        0, 4096, 7168,
        128, 128, 128,
        1,
        128, 128, 128,
        7,
        128, 128,
        1, false,
        148,
        false, false,
        GemmType::Normal, false,
        cutlass::detail::float_e2m1_unpacksmem_t, cutlass::detail::float_e2m1_unpacksmem_t, cutlass::bfloat16_t,
        epilogue::transform::EpilogueIdentity
    >);
    (void)ptr;
}
