// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_mqa_logits.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// Paged MQA logits (decode), fp8 KV cache: 1 token per request (next_n), 64 heads, head dim 128,
// page 64, 3 Q stages, 5 KV stages, SPLIT_KV 256, 16 splits per chunk, fp32 logits.
#include <deep_gemm/impls/sm100_mqa_logits.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_paged_mqa_logits<
        false,
        1, 64,
        128, 64,
        false, false,
        3, 5,
        256, 16,
        128, 256,
        float, float
    >);
    (void)ptr;
}
