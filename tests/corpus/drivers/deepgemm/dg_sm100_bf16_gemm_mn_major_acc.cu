// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_bf16_gemm.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// bf16 GEMM with A MN-major and B MN-major (the "tn"-style layouts DeepGEMM supports for bf16),
// fp32 accumulation into C (with_accumulation), BLOCK 128x128x64, no cluster.
#include <deep_gemm/impls/sm100_bf16_gemm.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_bf16_gemm_impl<
        cute::UMMA::Major::MN, cute::UMMA::Major::MN,
        0, 4096, 4096,
        128, 128, 64,
        1,
        128, 128, 128,
        8,
        128, 128,
        1, false,
        148,
        128,
        false, false,
        GemmType::Normal, true, float,
        100
    >);
    (void)ptr;
}
