// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_mqa_logits.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// MQA logits (DeepSeek V3.2 indexer), fp8 Q/KV: 64 heads, head dim 128, BLOCK_Q 2 (128/64),
// SPLIT_KV 256, 3 Q stages, 5 KV stages, 128 specialized + 256 math threads, fp32 logits.
#include <deep_gemm/impls/sm100_mqa_logits.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_mqa_logits<
        false,
        64, 128,
        false,
        2, 256,
        3, 5,
        148,
        128, 256,
        float, float
    >);
    (void)ptr;
}
