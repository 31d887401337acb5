// The generated header's report-buffer loader (descgen header --lang cpp, with DESCGEN_SANITIZER)
// on a GPU: loads the harness module (harness.py build; ptxas -> harness.cubin), attaches a buffer
// of 16 records with descgen::sanitizer::attach, runs entry site0 over the first 256 words of
// words.bin and prints what the buffer holds with descgen::sanitizer::print.
//
//   nvcc -std=c++17 -I BUILD loader_demo.cpp -lcuda -o loader_demo
//   ./loader_demo BUILD/harness.cubin BUILD/words.bin
#define DESCGEN_SANITIZER
#include "descgen_tcgen05.hpp"

#include <cstdio>
#include <vector>

static void check(CUresult rc, const char* what) {
    if (rc != CUDA_SUCCESS) {
        const char* msg = nullptr;
        cuGetErrorString(rc, &msg);
        std::fprintf(stderr, "%s: %s\n", what, msg ? msg : "?");
        std::exit(1);
    }
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    check(cuInit(0), "cuInit");
    CUdevice dev;
    CUcontext ctx;
    check(cuDeviceGet(&dev, 0), "device");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "context");
    check(cuCtxSetCurrent(ctx), "current");
    CUmodule module;
    check(cuModuleLoad(&module, argv[1]), "load");
    descgen::sanitizer::Buffer buffer;
    check(descgen::sanitizer::attach(module, 16, buffer), "attach");
    const unsigned n = 256;
    std::vector<unsigned char> words(24 * n);
    std::FILE* f = std::fopen(argv[2], "rb");
    if (!f || std::fread(words.data(), 1, words.size(), f) != words.size()) return 3;
    std::fclose(f);
    CUdeviceptr dwords;
    check(cuMemAlloc(&dwords, words.size()), "alloc");
    check(cuMemcpyHtoD(dwords, words.data(), words.size()), "copy");
    CUfunction fn;
    check(cuModuleGetFunction(&fn, module, "site0"), "function");
    unsigned count = n;
    void* args[] = {&dwords, &count};
    check(cuLaunchKernel(fn, 1, 1, 1, n, 1, 1, 0, nullptr, args, nullptr), "launch");
    check(cuCtxSynchronize(), "sync");
    const unsigned written = descgen::sanitizer::print(buffer, stdout);
    std::printf("written=%u\n", written);
    descgen::sanitizer::release(buffer);
    return 0;
}
