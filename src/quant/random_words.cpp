#include "quant/random_words.hpp"

#include <algorithm>
#include <utility>

#include "format/philox.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace altgrad::quant {
namespace {

// Philox groups (four words each) evaluated together: eight per AVX-512 register, in up to
// kMaxChains independent chains whose rounds interleave, so that one chain's multiplies run while
// another's wait for theirs.
constexpr std::size_t kGroupsPerChain = 8;
constexpr std::size_t kWordsPerChain = 4 * kGroupsPerChain;
constexpr std::size_t kMaxChains = 4;

#if defined(__AVX512F__)

__m512i splat64(std::uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); }

constexpr int kXor3 = 0x96;  // ternary-logic truth table of a ^ b ^ c
constexpr _MM_PERM_ENUM kHighDown = _MM_PERM_DDBB;    // each 64-bit lane's high half into its low half
constexpr _MM_PERM_ENUM kSwapHalves = _MM_PERM_CDAB;  // the two halves of each 64-bit lane swapped

// The counter words of eight groups, each in the low half of a 64-bit lane: _mm512_mul_epu32
// multiplies exactly those halves into full 64-bit products, whose high halves are what the next
// round XORs and whose low halves are the next counter words as they stand. The high halves of the
// lanes carry leftovers that nothing reads.
struct Chain {
  __m512i c0, c1, c2, c3;

  // The state after the first round. The stream words are the same in every lane, so their
  // product is one scalar: that round multiplies only the group numbers.
  static Chain after_first_round(std::uint64_t first_group, std::uint64_t stream, std::uint32_t k0, std::uint32_t k1) {
    const __m512i groups = _mm512_add_epi64(splat64(first_group), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    const std::uint64_t p1 = (stream & 0xFFFF'FFFFu) * std::uint64_t{format::kPhiloxMul1};
    const __m512i p0 = _mm512_mul_epu32(groups, splat64(format::kPhiloxMul0));
    return {_mm512_xor_si512(_mm512_srli_epi64(groups, 32), splat64((p1 >> 32) ^ k0)), splat64(p1),
            _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), splat64(stream >> 32), splat64(k1), kXor3), p0};
  }

  // One round of format::philox4x32_10. vpshufd moves the high halves down: it issues on more
  // ports than a 64-bit shift.
  void round(__m512i key0, __m512i key1) {
    const __m512i p0 = _mm512_mul_epu32(c0, splat64(format::kPhiloxMul0));
    const __m512i p1 = _mm512_mul_epu32(c2, splat64(format::kPhiloxMul1));
    c0 = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(p1, kHighDown), c1, key0, kXor3);
    c1 = p1;
    c2 = _mm512_ternarylogic_epi32(_mm512_shuffle_epi32(p0, kHighDown), c3, key1, kXor3);
    c3 = p0;
  }

  // The last round, its words written in element order. Swapping the halves of a product puts
  // its high half where word 0 (or 2) goes and its low half, word 1 (or 3) as it stands, where
  // that goes; the XOR then touches the even elements only.
  void last_round_and_store(__m512i key0, __m512i key1, std::uint32_t* words) const {
    const __m512i p0 = _mm512_mul_epu32(c0, splat64(format::kPhiloxMul0));
    const __m512i p1 = _mm512_mul_epu32(c2, splat64(format::kPhiloxMul1));
    constexpr __mmask16 kEven = 0x5555;
    const __m512i c01 = _mm512_mask_ternarylogic_epi32(_mm512_shuffle_epi32(p1, kSwapHalves), kEven, c1, key0, kXor3);
    const __m512i c23 = _mm512_mask_ternarylogic_epi32(_mm512_shuffle_epi32(p0, kSwapHalves), kEven, c3, key1, kXor3);
    // The two pairs of each group next to each other.
    _mm512_storeu_si512(words, _mm512_permutex2var_epi64(c01, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), c23));
    _mm512_storeu_si512(words + 16, _mm512_permutex2var_epi64(c01, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), c23));
  }
};

// Writes the words of kChains · 8 groups from first_group on, in element order.
template <std::size_t kChains>
void philox_chains(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_group, std::uint32_t* words) {
  auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  Chain chains[kChains];
  for (std::size_t c = 0; c < kChains; ++c) {
    chains[c] = Chain::after_first_round(first_group + c * kGroupsPerChain, stream, k0, k1);
  }
  const auto next_keys = [&] {
    k0 += format::kPhiloxWeyl0;
    k1 += format::kPhiloxWeyl1;
    return std::pair{_mm512_set1_epi32(static_cast<int>(k0)), _mm512_set1_epi32(static_cast<int>(k1))};
  };
  for (int round = 1; round < 9; ++round) {
    const auto [key0, key1] = next_keys();
    for (Chain& chain : chains) chain.round(key0, key1);
  }
  const auto [key0, key1] = next_keys();
  for (std::size_t c = 0; c < kChains; ++c) chains[c].last_round_and_store(key0, key1, words + c * kWordsPerChain);
}

#else

template <std::size_t kChains>
void philox_chains(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_group, std::uint32_t* words) {
  for (std::size_t g = 0; g < kChains * kGroupsPerChain; ++g) {
    const format::PhiloxCounter r = format::philox_block(seed, stream, first_group + g);
    std::copy(r.begin(), r.end(), words + 4 * g);
  }
}

#endif

}  // namespace

void fill_random(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_index,
                 std::span<std::uint32_t> words) {
  // Whole chains straight into `words` while they fit there; the ends, which may start or stop
  // mid-group, through a stack buffer.
  constexpr std::size_t kBatch = kMaxChains * kWordsPerChain;
  std::uint32_t buffer[kBatch];
  std::size_t skip = first_index & 3;
  std::size_t done = 0;
  std::uint64_t group = first_index >> 2;
  while (done < words.size()) {
    const std::size_t left = words.size() - done;
    if (skip == 0 && left >= kBatch) {
      philox_chains<kMaxChains>(seed, stream, group, words.data() + done);
      done += kBatch;
      group += kMaxChains * kGroupsPerChain;
      continue;
    }
    philox_chains<1>(seed, stream, group, buffer);
    const std::size_t take = std::min(kWordsPerChain - skip, left);
    std::copy_n(buffer + skip, take, words.data() + done);
    done += take;
    group += kGroupsPerChain;
    skip = 0;
  }
}

}  // namespace altgrad::quant
