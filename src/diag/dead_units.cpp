#include "diag/dead_units.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "quant/chunked_reduction.hpp"

namespace altgrad::diag {
namespace {

// At or above these cuts a unit is alive without evaluating φ. From the cut up to φ's minimum |φ|
// only grows, from 0.0155 (GELU at −2.5) or 0.0148 (SiLU at −6). Past the minimum φ' rises from 0 to
// 1/2 at z = 0 and beyond, while |φ| falls from 0.17 (GELU) or 0.28 (SiLU) to 0: where φ' is small
// |φ| is not. Most pre-activations lie above the cuts, so the transcendental calls are rare.
constexpr double kGeluSurelyAlive = -2.5;
constexpr double kSiluSurelyAlive = -6.0;

// Units per block: one thread owns a block of columns and walks the rows in order.
constexpr std::size_t kUnitBlock = 64;

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

bool in_flat_tail(double phi, double dphi) {
  return std::fabs(phi) < kFlatTailBound && std::fabs(dphi) < kFlatTailBound;
}

// Counts the dead units among columns [begin, end) of z, whose rows are `stride` apart.
template <bool (*InTail)(double)>
std::size_t count_dead_in_block(const float* z, std::size_t N, std::size_t stride, std::size_t begin,
                                std::size_t end) {
  bool dead[kUnitBlock];
  std::size_t still_dead = end - begin;
  for (std::size_t j = begin; j < end; ++j) dead[j - begin] = true;
  for (std::size_t n = 0; n < N && still_dead > 0; ++n) {
    const float* row = z + n * stride;
    for (std::size_t j = begin; j < end; ++j) {
      if (dead[j - begin] && !InTail(row[j])) {
        dead[j - begin] = false;
        --still_dead;
      }
    }
  }
  return still_dead;
}

// Dead units among the first H columns of z (N, stride).
template <bool (*InTail)(double)>
DeadUnits count_dead(const char* caller, std::span<const float> z, std::size_t N, std::size_t H,
                     std::size_t stride) {
  if (z.size() != N * stride) {
    throw std::invalid_argument(std::string(caller) + ": fc has " + std::to_string(z.size()) + " elements, expected " +
                                std::to_string(N) + "·" + std::to_string(stride));
  }
  DeadUnits result;
  result.units = H;
  if (N == 0 || H == 0) return result;
  const std::size_t blocks = (H + kUnitBlock - 1) / kUnitBlock;
  std::size_t dead = 0;
#pragma omp parallel for schedule(static) reduction(+ : dead) if (blocks > 1 && N * H >= quant::kStatisticsChunking.min_chunk)
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t begin = block * kUnitBlock;
    dead += count_dead_in_block<InTail>(z.data(), N, stride, begin, std::min(H, begin + kUnitBlock));
  }
  result.dead = dead;
  result.fraction = static_cast<double>(dead) / static_cast<double>(H);
  return result;
}

}  // namespace

bool in_gelu_flat_tail(double z) {
  if (z >= kGeluSurelyAlive || std::isnan(z)) return false;
  if (z == kNegativeInfinity) return true;
  // Φ(z) through erfc: 1 + erf(z/√2) would cancel to a few digits in the tail.
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return in_flat_tail(z * cdf, cdf + z * pdf);
}

bool in_silu_flat_tail(double z) {
  if (z >= kSiluSurelyAlive || std::isnan(z)) return false;
  if (z == kNegativeInfinity) return true;
  const double s = 1.0 / (1.0 + std::exp(-z));
  return in_flat_tail(z * s, s * (1.0 + z * (1.0 - s)));
}

DeadUnits dead_units_gelu(std::span<const float> fc, std::size_t N, std::size_t H) {
  return count_dead<in_gelu_flat_tail>("dead_units_gelu", fc, N, H, H);
}

DeadUnits dead_units_swiglu(std::span<const float> fc, std::size_t N, std::size_t H) {
  return count_dead<in_silu_flat_tail>("dead_units_swiglu", fc, N, H, 2 * H);
}

}  // namespace altgrad::diag
