#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator, so the random bits of element i depend only on (key, counter) and never
// on the thread or the order in which elements are visited.
#include <array>
#include <cstdint>

#include "format/host_device.hpp"

namespace altgrad::format {

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// The round multipliers and the key's Weyl increments.
inline constexpr std::uint32_t kPhiloxMul0 = 0xD251'1F53u, kPhiloxMul1 = 0xCD9E'8D57u;
inline constexpr std::uint32_t kPhiloxWeyl0 = 0x9E37'79B9u, kPhiloxWeyl1 = 0xBB67'AE85u;

ALTGRAD_HD inline PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  // Fully unrolled, so that loops over many counters vectorize across counters.
#if defined(__CUDACC__)
#pragma unroll
#else
#pragma GCC unroll 10
#endif
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxMul0) * c[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxMul1) * c[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kPhiloxWeyl0;
    k[1] += kPhiloxWeyl1;
  }
  return c;
}

// The random word for element `index` of stream `stream` under `seed`: counter (index/4, stream),
// word index%4. Consecutive groups of four elements share one Philox evaluation.
ALTGRAD_HD inline PhiloxCounter philox_block(std::uint64_t seed, std::uint64_t stream,
                                             std::uint64_t index_group) {
  return philox4x32_10({static_cast<std::uint32_t>(index_group),
                        static_cast<std::uint32_t>(index_group >> 32),
                        static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)},
                       {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
}

ALTGRAD_HD inline std::uint32_t philox_word(std::uint64_t seed, std::uint64_t stream,
                                            std::uint64_t index) {
  return philox_block(seed, stream, index >> 2)[index & 3];
}

}  // namespace altgrad::format
