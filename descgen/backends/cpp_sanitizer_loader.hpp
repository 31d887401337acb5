// ---- the sanitizer's report buffer, host side (docs/sanitizer.md; define DESCGEN_SANITIZER) ----
// For a module of PTX that `descgen instrument` wrote, loaded with the CUDA driver API: attach()
// allocates the report buffer in pinned, host-mapped memory and writes its device address into the
// module's global `descgen_report`; after a launch (or after a trap, when the context is dead: the
// buffer is host memory) print() writes each record. A record's site and code are indices into the
// site table `descgen instrument` wrote beside the PTX (OUT.ptx.sites.json: sites[site].codes[code],
// and the PTX line); descgen.sanitizer.report.decode_records reads the same bytes in Python.
#if defined(DESCGEN_SANITIZER) && !defined(__CUDA_ARCH__)
#include <cuda.h>
#include <cstdio>
#include <cstring>

namespace descgen {
namespace sanitizer {

/** One 64-byte record (docs/sanitizer.md, "The report buffer"). */
struct Record {
    std::uint32_t site, code, operand, flags;  // flags bit 0: complete (written last)
    std::uint64_t word;                        // the operand's word (a 32-bit word zero-extended)
    std::uint32_t ctaid[3], tid[3];
    std::int64_t value;                        // the value of the field the rule names
    std::uint32_t smid, reserved;
};
static_assert(sizeof(Record) == 64, "a record is 64 bytes");

constexpr std::uint32_t MAGIC = 0x44475352u;  // "RSGD"
constexpr std::uint32_t HEADER_BYTES = 64;
constexpr const char* OPERAND_NAMES[5] = {"idesc", "a_desc", "b_desc", "zcm", "scale_input_d"};

/** The buffer: host pointer, device address, capacity in records. */
struct Buffer {
    unsigned char* host = nullptr;
    CUdeviceptr device = 0;
    std::uint32_t capacity = 0;
};

/** Allocate a buffer of `capacity` records and attach it to `module` (its `descgen_report`).
 *  Returns CUDA_SUCCESS, or the first failing call's error (CUDA_ERROR_NOT_FOUND: the module is
 *  not instrumented). */
inline CUresult attach(CUmodule module, std::uint32_t capacity, Buffer& b) {
    const std::size_t bytes = HEADER_BYTES + sizeof(Record) * static_cast<std::size_t>(capacity);
    void* host = nullptr;
    CUresult rc = cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (rc != CUDA_SUCCESS) return rc;
    std::memset(host, 0, bytes);
    const std::uint32_t header[4] = {0u, capacity, MAGIC, 1u};
    std::memcpy(host, header, sizeof header);
    CUdeviceptr device = 0;
    if ((rc = cuMemHostGetDevicePointer(&device, host, 0)) != CUDA_SUCCESS) return rc;
    CUdeviceptr symbol = 0;
    std::size_t size = 0;
    if ((rc = cuModuleGetGlobal(&symbol, &size, module, "descgen_report")) != CUDA_SUCCESS) return rc;
    if ((rc = cuMemcpyHtoD(symbol, &device, sizeof device)) != CUDA_SUCCESS) return rc;
    b.host = static_cast<unsigned char*>(host);
    b.device = device;
    b.capacity = capacity;
    return CUDA_SUCCESS;
}

/** The records written so far (may exceed the capacity: the rest were lost). */
inline std::uint32_t written(const Buffer& b) {
    std::uint32_t count = 0;
    if (b.host) std::memcpy(&count, b.host, sizeof count);
    return count;
}

/** Print each record, one line: site, code index, operand, word, value, block, thread, SM; then how
 *  many were lost. Returns the records written. */
inline std::uint32_t print(const Buffer& b, std::FILE* out = stderr) {
    const std::uint32_t count = written(b);
    const std::uint32_t shown = count < b.capacity ? count : b.capacity;
    for (std::uint32_t i = 0; i < shown; ++i) {
        Record r;
        std::memcpy(&r, b.host + HEADER_BYTES + sizeof(Record) * i, sizeof r);
        std::fprintf(out, "descgen: site %u code #%u %s word 0x%016llx value %lld block (%u,%u,%u) thread (%u,%u,%u) "
                          "SM %u%s (sites.json: sites[%u].codes[%u])\n",
                     r.site, r.code, r.operand < 5 ? OPERAND_NAMES[r.operand] : "?",
                     static_cast<unsigned long long>(r.word), static_cast<long long>(r.value), r.ctaid[0],
                     r.ctaid[1], r.ctaid[2], r.tid[0], r.tid[1], r.tid[2], r.smid,
                     (r.flags & 1u) ? "" : " (incomplete)", r.site, r.code);
    }
    if (count > shown) std::fprintf(out, "descgen: %u more records lost (capacity %u)\n", count - shown, b.capacity);
    return count;
}

/** Free the buffer (the module must not run again with it attached). */
inline void release(Buffer& b) {
    if (b.host) cuMemFreeHost(b.host);
    b = Buffer{};
}

}  // namespace sanitizer
}  // namespace descgen
#endif  // DESCGEN_SANITIZER
