// One differential record run through descgen_tcgen05.hpp's validators, on the host or on the
// device (tests/cpp/driver.cpp, tests/device/header_validators/validators_kernel.cu); tests/cpp/differential.py
// writes the records and computes the Python API's answers the same way.
#pragma once
#include <cstdint>
#include "descgen_tcgen05.hpp"

namespace descgen_differential {
namespace dg = descgen::tcgen05;

/** One record, 64 bytes little-endian (differential.py RECORD). */
struct Record {
    std::uint8_t op, kind;  // op: 0 idesc, 1 smem, 2 zcm, 3 taddr, 4 check_mma
    std::int8_t cta_group, ws, sp, a_tmem, scale_vec, arch, warp;
    std::uint8_t has_a, has_zcm, pad[5];
    std::uint64_t w0, w1, w2, w3;  // the word (op 0-3) / idesc, a_desc, b_desc, zcm (op 4)
    std::int64_t p0, p1;           // pattern_start, smem_size | m, n | alloc_columns, alloc_base | a_/b_pattern_start
};
static_assert(sizeof(Record) == 64, "Record is 64 bytes");

/** FNV-1a (32-bit) over the verdict byte (ok << 7 | count) and each code's two bytes. */
DESCGEN_HD inline std::uint32_t digest(const dg::Report& r) {
    std::uint32_t h = 2166136261u;
    auto mix = [&h](std::uint32_t byte) { h = (h ^ byte) * 16777619u; };
    mix((r.ok() ? 0x80u : 0u) | static_cast<std::uint32_t>(r.count));
    for (int i = 0; i < r.count; ++i) {
        std::uint32_t c = static_cast<std::uint32_t>(r.item[i].code);
        mix(c & 0xffu);
        mix(c >> 8);
    }
    return h;
}

DESCGEN_HD inline void run(const Record& x, dg::Report& r) {
    dg::Context c;
    c.cta_group = x.cta_group;
    c.ws = x.ws;
    c.sp = x.sp;
    c.a_tmem = x.a_tmem;
    c.scale_vec = static_cast<dg::ScaleVec>(x.scale_vec);
    c.arch = static_cast<dg::Arch>(x.arch);
    dg::Kind kind = static_cast<dg::Kind>(x.kind);
    switch (x.op) {
    case 0: dg::validate_idesc(static_cast<std::uint32_t>(x.w0), kind, c, r); break;
    case 1: c.pattern_start = x.p0; c.smem_size = x.p1; dg::validate_smem(x.w0, c, r); break;
    case 2: c.m = x.p0; c.n = x.p1; dg::validate_zcm(x.w0, c, r); break;
    case 3: c.warp = x.warp; c.alloc_columns = x.p0; c.alloc_base = x.p1; dg::validate_taddr(static_cast<std::uint32_t>(x.w0), c, r); break;
    default:
        dg::check_mma(static_cast<std::uint32_t>(x.w0), kind, x.has_a ? &x.w1 : nullptr, x.w2, x.has_zcm ? &x.w3 : nullptr, c, r,
                      x.p0, x.p1);
    }
}
}  // namespace descgen_differential
