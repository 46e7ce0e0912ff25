#include "quant/random_words.hpp"

#include <algorithm>
#include <utility>

#include "format/philox.hpp"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace altgrad::quant {
namespace {

// Philox groups (four words each) evaluated together: a register's worth (eight with AVX-512, four
// with AVX2), in up to kMaxChains independent chains whose rounds interleave, so that one chain's
// multiplies run while another's wait for theirs. AVX2's chains are four registers each: two of
// them measured as fast as three and faster than four, whose sixteen do not leave room for the
// constants.
#if defined(__AVX512F__)
constexpr std::size_t kGroupsPerChain = 8;
constexpr std::size_t kMaxChains = 4;
#elif defined(__AVX2__)
constexpr std::size_t kGroupsPerChain = 4;
constexpr std::size_t kMaxChains = 2;
#else
constexpr std::size_t kGroupsPerChain = 8;
constexpr std::size_t kMaxChains = 4;
#endif
constexpr std::size_t kWordsPerChain = 4 * kGroupsPerChain;

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

#elif defined(__AVX2__)

__m256i splat64_avx2(std::uint64_t v) { return _mm256_set1_epi64x(static_cast<long long>(v)); }
__m256i splat32_avx2(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

// The AVX-512 Chain's scheme for four groups, one per 64-bit lane, each counter word in a lane's low
// half (_mm256_mul_epu32 reads only those); the high halves carry leftovers that nothing reads.
// Every round is format::philox4x32_10's, the first one included.
struct Chain {
  __m256i c0, c1, c2, c3;

  static Chain start(std::uint64_t first_group, std::uint64_t stream) {
    const __m256i groups = _mm256_add_epi64(splat64_avx2(first_group), _mm256_setr_epi64x(0, 1, 2, 3));
    return {groups, _mm256_srli_epi64(groups, 32), splat64_avx2(stream & 0xFFFF'FFFFu), splat64_avx2(stream >> 32)};
  }

  void round(__m256i key0, __m256i key1) {
    const __m256i p0 = _mm256_mul_epu32(c0, splat64_avx2(format::kPhiloxMul0));
    const __m256i p1 = _mm256_mul_epu32(c2, splat64_avx2(format::kPhiloxMul1));
    constexpr int kHighDown = 0xF5;  // vpshufd: each 64-bit lane's high half into its low half
    c0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p1, kHighDown), c1), key0);
    c1 = p1;
    c2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p0, kHighDown), c3), key1);
    c3 = p0;
  }

  // The four groups' words in element order: each group's pairs (c0, c1) and (c2, c3) side by side.
  void store(std::uint32_t* words) const {
    constexpr int kOddWords = 0xAA;  // vpblendd: the second operand's odd 32-bit words
    const __m256i c01 = _mm256_blend_epi32(c0, _mm256_slli_epi64(c1, 32), kOddWords);
    const __m256i c23 = _mm256_blend_epi32(c2, _mm256_slli_epi64(c3, 32), kOddWords);
    const __m256i even_groups = _mm256_unpacklo_epi64(c01, c23), odd_groups = _mm256_unpackhi_epi64(c01, c23);
    auto* out = reinterpret_cast<__m256i*>(words);
    _mm256_storeu_si256(out, _mm256_permute2x128_si256(even_groups, odd_groups, 0x20));
    _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(even_groups, odd_groups, 0x31));
  }
};

// Writes the words of kChains · 4 groups from first_group on, in element order.
template <std::size_t kChains>
void philox_chains(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_group, std::uint32_t* words) {
  auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  Chain chains[kChains];
  for (std::size_t c = 0; c < kChains; ++c) chains[c] = Chain::start(first_group + c * kGroupsPerChain, stream);
  for (int round = 0; round < 10; ++round) {
    const __m256i key0 = splat32_avx2(k0), key1 = splat32_avx2(k1);
    for (Chain& chain : chains) chain.round(key0, key1);
    k0 += format::kPhiloxWeyl0;
    k1 += format::kPhiloxWeyl1;
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

// Fills words[i] with the Philox word of element first_index + i.
void fill_philox_words(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_index,
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

}  // namespace

void fill_random(std::uint64_t seed, std::uint64_t stream, std::uint64_t first_index,
                 std::span<std::uint32_t> words, int bits) {
  fill_philox_words(seed, stream, first_index, words);
  if (const std::uint32_t mask = random_bits_mask(bits); mask != 0) {
    for (std::uint32_t& word : words) word |= mask;
  }
}

}  // namespace altgrad::quant
