// Driver for tests/corpus/make_cuda_libs.py: instantiates one DeepGEMM SM100 kernel the way
// DeepGEMM's JIT does (csrc/jit_kernels/impls/sm100_mqa_logits.hpp: generate_impl), with the template arguments
// its heuristics (csrc/jit_kernels/heuristics/sm100.hpp) pick for the shape named below.
// Compiled with nvcc -arch=sm_100a -ptx; only the device code matters.
// MQA logits with fp4 Q/KV (block-scaled, UE8M0 scales every 32): 64 heads, head dim 128,
// BLOCK_Q 2, SPLIT_KV 256, 3 Q stages, 10 KV stages, bf16 logits.
#include <deep_gemm/impls/sm100_mqa_logits.cuh>
using namespace deep_gemm;
void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm100_mqa_logits<
        true,
        64, 128,
        false,
        2, 256,
        3, 10,
        148,
        128, 256,
        cutlass::bfloat16_t, float
    >);
    (void)ptr;
}
