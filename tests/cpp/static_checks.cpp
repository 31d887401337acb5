// Compiled by tests/test_cpp_header.py with g++ -std=c++17 -Wall -Wextra -Werror -pedantic (with and
// without DESCGEN_DEBUG) and by nvcc; the static_asserts are words of the spec's worked examples,
// CUTLASS and the README; main() checks decoders and validators on known words (exit status: the
// number of failed checks).
#include "descgen_tcgen05.hpp"

using namespace descgen::tcgen05;

// README / CUTLASS make_instr_desc (tests/test_idesc.py REAL_WORDS).
static_assert(encode_idesc(Kind::f16, 128, 256) == 0x08400010u, "f16 M=128 N=256");
static_assert(encode_idesc(Kind::f16, 128, 128, IdescArgs{}.dtype(name::f16)) == 0x08200000u, "f16 -> f16");
static_assert(encode_idesc(Kind::tf32, 128, 256) == 0x08400910u, "tf32");
static_assert(encode_idesc(Kind::f8f6f4, 128, 128, IdescArgs{}.atype(name::e2m1).btype(name::e2m1)) == 0x08201690u, "e2m1");
static_assert(encode_idesc(Kind::i8, 128, 128, IdescArgs{}.atype(name::u8).btype(name::u8)) == 0x08200020u, "u8");
// Shared memory descriptors: the README's bf16 K-major 128B tile, CUTLASS's e2m1 32B descriptor.
static_assert(encode_smem(0x400, 16, 1024, name::_128B) == 0x4000404000010040ull, "128B K-major");
static_assert(encode_smem(0x8000, 16, 256, name::_32B) == 0xc000401000010800ull, "32B");
// Table 45's worked example (tests/test_zcm.py).
static_assert(encode_zcm(1, 13, ZcmArgs{}.start_count_0(1).start_count_1(3).start_count_2(5).start_count_3(7))
              == 0x000c008007050301ull, "zcm worked example");
// Tensor memory addresses (README).
static_assert(encode_taddr(32, 0) == 0x00200000u, "lane 32");
static_assert(encode_taddr(96, 256) == 0x00600100u, "lane 96 column 256");

static int failed = 0;
static void expect(bool ok) { failed += ok ? 0 : 1; }

static bool has(const Report& r, Code c) {
    for (int i = 0; i < r.count; ++i)
        if (r.item[i].code == c) return true;
    return false;
}

int main() {
    IdescFields d = decode_idesc(0x08400010u, Kind::f16);
    expect(d[idesc_slot::m] == 128 && d[idesc_slot::n] == 256 && d[idesc_slot::dtype] == name::f32);
    SmemFields s = decode_smem(0xc000401000010800ull);
    expect(s[smem_slot::start_address] == 0x8000 && s[smem_slot::sbo] == 256 && s[smem_slot::swizzle] == name::_32B);
    expect(decode_taddr(0x00600100u)[taddr_slot::lane] == 96);
    Context ctx;
    ctx.cta_group = 1;
    Report r;
    validate_idesc(0x08400010u, Kind::f16, ctx, r);
    expect(r.ok() && r.count == 0);
    Report bad;  // M = 256 needs cta_group::2 (IDESC-M-SHAPE); bit 23 is reserved
    validate_idesc(0x10400010u | (1u << 23), Kind::f16, ctx, bad);
    expect(!bad.ok() && bad.item[0].code == Code::IDESC_RESERVED_23 && has(bad, Code::IDESC_M_SHAPE));
    Report mma;  // Table 52: a transposed tf32 B needs 128B swizzling with 32-byte atomicity
    const std::uint64_t a = encode_smem(0x400, 16, 1024, name::_128B);
    check_mma(encode_idesc(Kind::tf32, 128, 128, IdescArgs{}.b_major(name::mn)), Kind::tf32, &a,
              encode_smem(0x4400, 8192, 1024, name::_128B), nullptr, ctx, mma);
    expect(mma.count == 1 && mma.item[0].code == Code::MMA_SWIZZLE_TABLE52 && mma.item[0].role == 2);
    require_ok(r);
    return failed;
}
