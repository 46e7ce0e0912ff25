#include "quant/random_words.hpp"

#include <algorithm>

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

  // One round of format::philox4x32_10.
  void round(__m512i key0, __m512i key1) {
    const __m512i p0 = _mm512_mul_epu32(c0, splat64(format::kPhiloxMul0));
    const __m512i p1 = _mm512_mul_epu32(c2, splat64(format::kPhiloxMul1));
    c0 = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p1, 32), c1, key0, kXor3);
    c1 = p1;
    c2 = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), c3, key1, kXor3);
    c3 = p0;
  }

  // The eight groups' words in element order.
  void store(std::uint32_t* words) const {
    // Words 0 and 1 of each group side by side in its 64-bit lane, and words 2 and 3 ...
    const auto pair_up = static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(2, 2, 0, 0));
    const __m512i c01 = _mm512_mask_shuffle_epi32(c0, 0xAAAA, c1, pair_up);
    const __m512i c23 = _mm512_mask_shuffle_epi32(c2, 0xAAAA, c3, pair_up);
    // ... then the two pairs of each group next to each other.
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
  for (int round = 1; round < 10; ++round) {
    k0 += format::kPhiloxWeyl0;
    k1 += format::kPhiloxWeyl1;
    const __m512i key0 = _mm512_set1_epi32(static_cast<int>(k0)), key1 = _mm512_set1_epi32(static_cast<int>(k1));
    for (Chain& chain : chains) chain.round(key0, key1);
  }
  for (std::size_t c = 0; c < kChains; ++c) chains[c].store(words + c * kWordsPerChain);
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
