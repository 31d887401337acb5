// Prints Hopper wgmma shared memory descriptors as CUTLASS builds them (cute::GmmaDescriptor,
// cute/arch/mma_sm90_desc.hpp; SM90::GMMA::make_gmma_desc, cute/atom/mma_traits_sm90_gmma.hpp),
// host-only, for tests/test_cutlass_gmma.py to compare with descgen bit for bit.
//
// One line per case: dtype major swizzle MN K_tile k_block start word start_f lbo_f sbo_f base layout
// (word in hex; the rest decimal; *_f are GmmaDescriptor's raw 14-bit fields, layout its 2-bit
// layout_type). The tile is CuTe's tile_to_shape(Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>,
// (MN, K_tile)) at byte address `start`; the descriptor is make_gmma_desc of its K block
// `k_block` (one dense MMA's K: 256 bits), the slice a wgmma instruction reads.
//
// Build: g++ -std=c++17 -O0 -I<cutlass>/include gmma_desc_check.cpp -o gmma_desc_check
// (<cutlass> = cutlass_library/source of the nvidia-cutlass PyPI package).

#include <cstddef>
#include <cstdint>
#include <cstdio>

// Host build: CuTe reads a shared memory pointer's address with __cvta_generic_to_shared on the
// device only; here the pointer's value is the shared memory address.
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1
static inline std::size_t __cvta_generic_to_shared(void const* p) { return reinterpret_cast<std::size_t>(p); }

#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

using namespace cute;
namespace G = cute::SM90::GMMA;

template <class T, G::Major M, int Sw> struct AtomOf;
template <class T> struct AtomOf<T, G::Major::K, 0>   { using type = G::Layout_K_INTER_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::K, 32>  { using type = G::Layout_K_SW32_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::K, 64>  { using type = G::Layout_K_SW64_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::K, 128> { using type = G::Layout_K_SW128_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::MN, 0>   { using type = G::Layout_MN_INTER_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::MN, 32>  { using type = G::Layout_MN_SW32_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::MN, 64>  { using type = G::Layout_MN_SW64_Atom<T>; };
template <class T> struct AtomOf<T, G::Major::MN, 128> { using type = G::Layout_MN_SW128_Atom<T>; };

static char const* swizzle_name(int sw) { return sw == 0 ? "none" : sw == 32 ? "32B" : sw == 64 ? "64B" : "128B"; }

template <class T, G::Major M, int Sw, int MN, int KTile>
void one(char const* dtype, uint32_t start) {
  constexpr int KMma = 256 / int(sizeof_bits<T>::value);  // one dense wgmma's K, elements
  auto tile = tile_to_shape(typename AtomOf<T, M, Sw>::type{}, make_shape(Int<MN>{}, Int<KTile>{}));
  auto tensor = make_tensor(make_smem_ptr(reinterpret_cast<T*>(static_cast<std::uintptr_t>(start))), tile);
  for (int kb = 0; kb < KTile / KMma; ++kb) {
    auto block = local_tile(tensor, make_shape(Int<MN>{}, Int<KMma>{}), make_coord(0, kb));
    GmmaDescriptor d = G::make_gmma_desc<M>(block);
    std::printf("%s %s %s %d %d %d %u 0x%016llx %u %u %u %u %u\n", dtype, M == G::Major::K ? "k" : "mn",
                swizzle_name(Sw), MN, KTile, kb, start, static_cast<unsigned long long>(d.desc_),
                unsigned(d.bitfield.start_address_), unsigned(d.bitfield.leading_byte_offset_),
                unsigned(d.bitfield.stride_byte_offset_), unsigned(d.bitfield.base_offset_), unsigned(d.bitfield.layout_type_));
  }
}

template <class T, G::Major M, int Sw>
void tiles(char const* dtype) {
  constexpr int T8 = 128 / int(sizeof_bits<T>::value);  // elements per 16-byte chunk
  constexpr int AtomMN = M == G::Major::K ? 8 : (Sw == 0 ? 1 : Sw / 16) * T8;
  constexpr int AtomK = M == G::Major::K ? (Sw == 0 ? 1 : Sw / 16) * T8 : 8;
  constexpr int KMma = 2 * T8;
  constexpr int K1 = AtomK > KMma ? AtomK : KMma;  // a whole number of atoms and of MMA K blocks
  constexpr int MN1 = AtomMN > 64 ? AtomMN : 64;   // a whole number of atoms
  for (uint32_t start : {0x0u, 0x400u, 0x8000u, 0x2c000u}) {
    one<T, M, Sw, MN1, K1>(dtype, start);
    one<T, M, Sw, 2 * MN1, 2 * K1>(dtype, start);
    one<T, M, Sw, AtomMN, K1>(dtype, start);      // one atom along MN
  }
}

template <class T>
void k_major(char const* dtype) {
  tiles<T, G::Major::K, 0>(dtype);
  tiles<T, G::Major::K, 32>(dtype);
  tiles<T, G::Major::K, 64>(dtype);
  tiles<T, G::Major::K, 128>(dtype);
}

int main() {
  k_major<uint16_t>("f16");   // 16-bit: f16, bf16
  k_major<uint32_t>("tf32");  // 32-bit
  k_major<uint8_t>("e4m3");   // 8-bit: e4m3, e5m2, s8, u8
  // MN-major (imm-trans-a/b = 1): f16 and bf16 only (§9.7.15.5.1)
  tiles<uint16_t, G::Major::MN, 0>("f16");
  tiles<uint16_t, G::Major::MN, 32>("f16");
  tiles<uint16_t, G::Major::MN, 64>("f16");
  tiles<uint16_t, G::Major::MN, 128>("f16");
  return 0;
}
