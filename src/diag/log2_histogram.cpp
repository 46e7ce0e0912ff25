#include "diag/log2_histogram.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "quant/chunked_reduction.hpp"

namespace altgrad::diag {
namespace {

constexpr int kFloatBias = 127;
constexpr int kMantissaBits = 23;
constexpr std::uint32_t kMagnitudeMask = 0x7FFF'FFFFu;
constexpr std::uint32_t kInfBits = 0x7F80'0000u;

// Counts over every float32 class at once, so the hot loop does not depend on lo and hi:
// slot 0: ±0; slots 1 … 277: floor(log2|w|) = −149 … 127; the last slot: non-finite.
constexpr std::size_t kZeroSlot = 0;
constexpr std::size_t kNonFiniteSlot = kMaxLog2Bucket - kMinLog2Bucket + 1;
constexpr std::size_t kSlots = kNonFiniteSlot + 1;

struct SlotCounts {
  std::array<std::uint64_t, kSlots> count{};

  SlotCounts& operator+=(const SlotCounts& other) {
    for (std::size_t s = 0; s < kSlots; ++s) count[s] += other.count[s];
    return *this;
  }
};

int floor_log2_of_magnitude(std::uint32_t magnitude) {
  const int field = static_cast<int>(magnitude >> kMantissaBits);
  if (field > 0) return field - kFloatBias;
  // Subnormal: the value is magnitude · 2^−149, and magnitude's leading bit is at bit_width − 1.
  return std::bit_width(magnitude) - 1 + (1 - kFloatBias - kMantissaBits);
}

std::size_t slot_of(float x) {
  const std::uint32_t magnitude = std::bit_cast<std::uint32_t>(x) & kMagnitudeMask;
  if (magnitude == 0) return kZeroSlot;
  if (magnitude >= kInfBits) return kNonFiniteSlot;
  return static_cast<std::size_t>(floor_log2_of_magnitude(magnitude) - kMinLog2Bucket + 1);
}

// Integer counts add up to the same total in any order, so each thread counts its share and the
// shares are merged as they finish (no per-chunk results to keep).
SlotCounts count_slots(std::span<const float> w) {
  SlotCounts total;
  const std::size_t n = w.size();
#pragma omp parallel if (n >= 2 * quant::kStatisticsChunking.min_chunk)
  {
    SlotCounts local;
#pragma omp for schedule(static) nowait
    for (std::size_t i = 0; i < n; ++i) ++local.count[slot_of(w[i])];
#pragma omp critical(altgrad_diag_log2_histogram)
    total += local;
  }
  return total;
}

}  // namespace

int floor_log2(float x) {
  return floor_log2_of_magnitude(std::bit_cast<std::uint32_t>(x) & kMagnitudeMask);
}

std::vector<double> Log2Histogram::edges() const {
  std::vector<double> e;
  e.reserve(static_cast<std::size_t>(hi - lo + 1));
  for (int k = lo; k <= hi; ++k) e.push_back(std::ldexp(1.0, k));
  return e;
}

std::uint64_t Log2Histogram::total() const {
  return std::accumulate(buckets.begin(), buckets.end(), zero_or_below + above + non_finite);
}

Log2Histogram log2_histogram(std::span<const float> w, int lo, int hi) {
  if (lo < kMinLog2Bucket || lo >= hi || hi > kMaxLog2Bucket) {
    throw std::invalid_argument("log2_histogram: need " + std::to_string(kMinLog2Bucket) + " <= lo < hi <= " +
                                std::to_string(kMaxLog2Bucket) + ", got lo = " + std::to_string(lo) +
                                ", hi = " + std::to_string(hi));
  }
  const SlotCounts slots = count_slots(w);
  Log2Histogram h;
  h.lo = lo;
  h.hi = hi;
  h.buckets.assign(static_cast<std::size_t>(hi - lo), 0);
  h.zero_or_below = slots.count[kZeroSlot];
  h.non_finite = slots.count[kNonFiniteSlot];
  for (int k = kMinLog2Bucket; k < kMaxLog2Bucket; ++k) {
    const std::uint64_t n = slots.count[static_cast<std::size_t>(k - kMinLog2Bucket + 1)];
    if (k < lo) {
      h.zero_or_below += n;
    } else if (k >= hi) {
      h.above += n;
    } else {
      h.buckets[static_cast<std::size_t>(k - lo)] += n;
    }
  }
  return h;
}

}  // namespace altgrad::diag
