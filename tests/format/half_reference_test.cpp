// fp16 and bf16 against references that owe nothing to src/format: the compiler's _Float16
// conversion (IEEE binary16, round to nearest even, overflow to Inf) and the well-known integer
// rounding of a float32's upper half for bfloat16. Both overflow to Inf, so they are compared with
// overflow=inf; bf16 truncation (toward zero) never overflows and is compared as is.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

using format::FormatSpec;
using format::Overflow;
using format::Rounding;
using format::SpecialPolicy;

constexpr FormatSpec kFp16Inf{5, 10, 15, SpecialPolicy::ieee, true, Overflow::special};
constexpr FormatSpec kBf16{8, 7, 127, SpecialPolicy::ieee, true, Overflow::saturate};
constexpr FormatSpec kBf16Inf{8, 7, 127, SpecialPolicy::ieee, true, Overflow::special};

// Every float whose upper 16 bits are any pattern, with the low half at the tie, just off it, and
// random; plus random floats. Covers every bf16 gap and, through the exponents, every fp16 gap.
std::vector<float> finite_inputs() {
  std::vector<float> inputs;
  std::mt19937 rng(2024);
  for (std::uint32_t hi = 0; hi < 0x10000u; ++hi) {
    for (std::uint32_t lo :
         {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu, static_cast<std::uint32_t>(rng() & 0xFFFFu)}) {
      const std::uint32_t bits = (hi << 16) | lo;
      if ((bits & 0x7F80'0000u) != 0x7F80'0000u) inputs.push_back(float_of(bits));
    }
  }
  for (std::size_t i = 0; i < kRandomInputsPerFormat / 2; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    if ((bits & 0x7F80'0000u) != 0x7F80'0000u) inputs.push_back(float_of(bits));
  }
  return inputs;
}

// Round to nearest even on the bit pattern: add just under half an ulp of bf16, plus the kept lsb.
std::uint32_t bf16_nearest_even(float x) {
  const std::uint32_t u = bits_of(x);
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

std::uint32_t bf16_truncate(float x) { return bits_of(x) >> 16; }

void compare(const FormatSpec& spec, Rounding mode, const char* what, std::uint32_t (*theirs)(float)) {
  const format::Format f = format::make_format(spec);
  MismatchLog log{what};
  for (float x : finite_inputs()) {
    const std::uint32_t want = theirs(x), got = format::encode(f, mode, x);
    if (got != want) log.add("input " + describe(x) + ": expected " + hex(want) + ", got " + hex(got));
  }
}

TEST(Bf16Reference, NearestEvenMatchesIntegerRoundingOfTheUpperHalf) {
  compare(kBf16Inf, Rounding::nearest_even, "bf16 nearest-even", bf16_nearest_even);
}

TEST(Bf16Reference, TowardZeroIsTruncationOfTheUpperHalf) {
  compare(kBf16, Rounding::toward_zero, "bf16 toward-zero", bf16_truncate);
  compare(kBf16Inf, Rounding::toward_zero, "bf16,overflow=inf toward-zero", bf16_truncate);
}

TEST(Bf16Reference, DecodeIsTheUpperHalfOfAFloat32) {
  const format::Format f = format::make_format(kBf16);
  MismatchLog log{"bf16 decode"};
  for (std::uint32_t code = 0; code < 0x10000u; ++code) {
    const float want = float_of(code << 16), got = format::decode(f, code);
    const bool same = std::isnan(want) ? std::isnan(got) : bits_of(want) == bits_of(got);
    if (!same) log.add("code " + hex(code) + ": expected " + describe(want) + ", got " + describe(got));
  }
}

#if defined(__FLT16_MAX__)

std::uint32_t fp16_by_compiler(float x) {
  const auto h = static_cast<_Float16>(x);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

TEST(Fp16Reference, NearestEvenMatchesTheCompilersFloat16Conversion) {
  compare(kFp16Inf, Rounding::nearest_even, "fp16,overflow=inf nearest-even", fp16_by_compiler);
}

TEST(Fp16Reference, DecodeMatchesTheCompilersFloat16) {
  const format::Format f = format::make_format(kFp16Inf);
  MismatchLog log{"fp16 decode"};
  for (std::uint32_t code = 0; code < 0x10000u; ++code) {
    const auto bits = static_cast<std::uint16_t>(code);
    _Float16 h;
    std::memcpy(&h, &bits, sizeof h);
    const auto want = static_cast<float>(h);
    const float got = format::decode(f, code);
    const bool same = std::isnan(want) ? std::isnan(got) : bits_of(want) == bits_of(got);
    if (!same) log.add("code " + hex(code) + ": expected " + describe(want) + ", got " + describe(got));
  }
}

#else

TEST(Fp16Reference, NearestEvenMatchesTheCompilersFloat16Conversion) {
  GTEST_SKIP() << "the compiler has no _Float16 (__FLT16_MAX__ undefined)";
}

#endif

}  // namespace
}  // namespace altgrad::format_test
