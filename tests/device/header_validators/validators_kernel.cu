// The device side of the differential test (tests/device/header_validators/run.sh): the header's
// validators run in a CUDA kernel over the records (tests/cpp/differential.py), one thread per
// record, and on the host over the same records; writes both digest files and prints how many
// records the device and the host agree on.
//   validators_kernel RECORDS DEVICE_DIGESTS HOST_DIGESTS
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "differential.hpp"

using descgen_differential::Record;

__global__ void validate_all(const Record* records, std::uint32_t* out, std::size_t n) {
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    descgen::tcgen05::Report r;
    descgen_differential::run(records[i], r);
    out[i] = descgen_differential::digest(r);
}

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 3; } } while (0)

int main(int argc, char** argv) {
    if (argc != 4) { std::fprintf(stderr, "usage: validators_kernel RECORDS DEVICE_DIGESTS HOST_DIGESTS\n"); return 2; }
    std::FILE* in = std::fopen(argv[1], "rb");
    if (!in) { std::perror(argv[1]); return 2; }
    std::vector<Record> records;
    Record x;
    while (std::fread(&x, sizeof x, 1, in) == 1) records.push_back(x);
    std::fclose(in);
    const std::size_t n = records.size();
    Record* d_records = nullptr;
    std::uint32_t* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_records, n * sizeof(Record)));
    CHECK_CUDA(cudaMalloc(&d_out, n * sizeof(std::uint32_t)));
    CHECK_CUDA(cudaMemcpy(d_records, records.data(), n * sizeof(Record), cudaMemcpyHostToDevice));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    const int block = 128;
    CHECK_CUDA(cudaEventRecord(start));
    validate_all<<<static_cast<unsigned>((n + block - 1) / block), block>>>(d_records, d_out, n);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaDeviceSynchronize());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    std::vector<std::uint32_t> device(n), host(n);
    CHECK_CUDA(cudaMemcpy(device.data(), d_out, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    descgen::tcgen05::Report r;
    for (std::size_t i = 0; i < n; ++i) {
        r.count = r.errors = 0;
        descgen_differential::run(records[i], r);
        host[i] = descgen_differential::digest(r);
    }
    std::size_t agree = 0, first = n;
    for (std::size_t i = 0; i < n; ++i) {
        if (device[i] == host[i]) ++agree;
        else if (first == n) first = i;
    }
    std::FILE* o = std::fopen(argv[2], "wb");
    std::FILE* h = std::fopen(argv[3], "wb");
    if (!o || !h || std::fwrite(device.data(), 4, n, o) != n || std::fwrite(host.data(), 4, n, h) != n) { std::perror("write"); return 2; }
    std::fclose(o);
    std::fclose(h);
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("device=%s\nrecords=%zu\ndevice_host_agree=%zu\nfirst_difference=%zd\nkernel_ms=%.3f\n", prop.name, n, agree,
                first == n ? static_cast<std::ptrdiff_t>(-1) : static_cast<std::ptrdiff_t>(first), ms);
    return agree == n ? 0 : 1;
}
