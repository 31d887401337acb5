// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_bmk_bnk_mn.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// Einsum bmk,bnk->mn (bf16 in, fp32 out, split over b and k): m=n=512, k=1024, BLOCK 128x128x64,
// split factor 15, 4 stages, 128 threads.
#include <deep_gemm/impls/sm100_bmk_bnk_mn.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_bmn_bnk_mn_gemm_impl<
        512, 512, 1024,
        128, 128, 64,
        15,
        128, 128,
        4, 128
    >);
    (void)ptr;
}
