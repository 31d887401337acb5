// Stand-in for ThunderKittens' include/pyutils/torchutils.cuh, used by tests/corpus/make_cuda_libs.py
// so that kernels written as PyTorch extensions compile to PTX without PyTorch's headers. Only the
// host-side glue (dispatch functions, PYBIND11_MODULE) refers to these names; the kernels do not.
// Nothing here is defined: the PTX of the kernels is all that is kept (no host object is linked).
#pragma once
#include <vector>
namespace at { struct Tensor {}; }
namespace kittens { namespace py {
template <typename GL> GL tensor_to_gl(const at::Tensor &t);
template <typename GL> GL tensor_to_gl(const at::Tensor &t, int, int, int, int);
} }
#define CHECK_INPUT(x) ((void)0)
#define CHECK_CUDA(x) ((void)0)
#define CHECK_CONTIGUOUS(x) ((void)0)
#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME _C
#endif
struct tk_corpus_pybind_module { template <typename... A> void def(A &&...) {} };
#define PYBIND11_MODULE(name, m) static void tk_corpus_pybind_##name(tk_corpus_pybind_module &m)
