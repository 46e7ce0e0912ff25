// NVIDIA's host conversion functions (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h) as an independent
// reference for the formats they implement: E4M3, E5M2, E2M3, E3M2, E2M1 and the E8M0 scale, in
// both directions. Inputs: every grid value and every midpoint of the format with the floats
// beside them, plus random floats over all of float32 and around the format's range.
//
// Where our documented semantics differ on purpose, those inputs are excluded and the difference is
// stated at the exclusion (docs/formats.md, "Where the ecosystem disagrees"):
//   - ±Inf under __NV_SATFINITE: NVIDIA gives ±max finite; we keep Inf (E5M2) or give NaN (E4M3,
//     E8M0) so a diverging tensor stays visible.
//   - NaN codes: NVIDIA's E5M2 NaN is 0x7F, our canonical NaN 0x7E; only NaN-ness is compared.
//   - E8M0 takes |x| in NVIDIA's functions; our fnu has no sign and maps negative inputs to NaN, so
//     only non-negative inputs are compared.
#include <gtest/gtest.h>

#if defined(ALTGRAD_HAVE_CUDA_FP_HEADERS) && __has_include(<cuda_fp8.h>) && __has_include(<cuda_fp6.h>) && \
    __has_include(<cuda_fp4.h>)
#define ALTGRAD_NVIDIA_REFERENCE 1
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#endif

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string_view>
#include <vector>

#include "format/codec.hpp"
#include "mismatch_log.hpp"
#include "reference_grid.hpp"
#include "test_cases.hpp"

namespace altgrad::format_test {
namespace {

#ifdef ALTGRAD_NVIDIA_REFERENCE

// Grid values and midpoints of the format's rounding grid, each with the floats beside it, both
// signs; then random finite bit patterns and log-uniform magnitudes around the range.
std::vector<float> inputs_for(const format::FormatSpec& spec) {
  const format_ref::ReferenceGrid grid(spec);
  std::vector<float> inputs;
  const auto add = [&](long double v) {
    const auto f = static_cast<float>(v);
    if (!std::isfinite(f) || static_cast<long double>(f) != v) return;
    for (float x : {f, std::nextafter(f, -INFINITY), std::nextafter(f, INFINITY)}) {
      inputs.push_back(x);
      inputs.push_back(-x);
    }
  };
  const auto& points = grid.rounding_points();
  for (std::size_t i = 0; i < points.size(); ++i) {
    add(points[i].value);
    if (i + 1 < points.size()) add((points[i].value + points[i + 1].value) / 2);
  }
  std::mt19937_64 rng(0x5eed'cafe);
  const int lo = std::max(std::ilogb(static_cast<double>(grid.min_positive())) - 3, -149);
  const int hi = std::min(std::ilogb(static_cast<double>(grid.beyond_max())) + 2, 127);
  std::uniform_int_distribution<int> exponent(lo, hi);
  for (std::size_t i = 0; i < kRandomInputsPerFormat / 2; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    if ((bits & 0x7F80'0000u) != 0x7F80'0000u) inputs.push_back(float_of(bits));
    const float magnitude =
        std::ldexp(1.0f + static_cast<float>(rng() & 0x7F'FFFFu) / 8388608.0f, exponent(rng));
    inputs.push_back((rng() & 1u) ? -magnitude : magnitude);
  }
  return inputs;
}

using Conversion = std::function<std::uint32_t(float)>;

// Compares NVIDIA's code with ours for every input; NaN results compare by NaN-ness.
void compare_encode(std::string_view what, std::string_view format_name, format::Rounding mode,
                    const std::vector<float>& inputs, const Conversion& nvidia) {
  const format::Format f = format::make_format(spec_named(format_name));
  const format_ref::ReferenceGrid grid(spec_named(format_name));
  const auto is_nan = [&](std::uint32_t code) {
    return code < grid.codes().size() && grid.codes()[code].kind == format_ref::CodeKind::nan;
  };
  MismatchLog log{std::string(what)};
  for (float x : inputs) {
    const std::uint32_t theirs = nvidia(x), ours = format::encode(f, mode, x);
    const bool both_nan = is_nan(theirs) && is_nan(ours);
    if (theirs != ours && !both_nan) {
      log.add(std::string(format_name) + " " + std::string(rounding_label(mode)) + " input " + describe(x) +
              ": NVIDIA " + hex(theirs) + ", ours " + hex(ours));
    }
  }
}

void compare_decode(std::string_view format_name, const std::function<float(std::uint32_t)>& nvidia) {
  const format::Format f = format::make_format(spec_named(format_name));
  MismatchLog log(std::string(format_name) + " decode vs NVIDIA");
  for (std::uint32_t code = 0; code < f.code_count(); ++code) {
    const float theirs = nvidia(code), ours = format::decode(f, code);
    const bool same = std::isnan(theirs) ? std::isnan(ours) : bits_of(theirs) == bits_of(ours);
    if (!same) log.add("code " + hex(code) + ": NVIDIA " + describe(theirs) + ", ours " + describe(ours));
  }
}

std::vector<float> finite_only(std::vector<float> inputs) {
  std::erase_if(inputs, [](float x) { return !std::isfinite(x); });
  return inputs;
}

std::vector<float> with_specials(std::vector<float> inputs) {
  for (float x : {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f}) inputs.push_back(x);
  return inputs;
}

// Non-negative inputs (and NaN) only: NVIDIA's E8M0 conversion rounds |x|.
std::vector<float> non_negative_only(std::vector<float> inputs) {
  std::erase_if(inputs, [](float x) { return std::signbit(x) && !std::isnan(x); });
  return inputs;
}

float half_raw_to_float(__half_raw h) { return __half2float(__half(h)); }

float bf16_raw_to_float(__nv_bfloat16_raw b) { return float_of(static_cast<std::uint32_t>(b.x) << 16); }

Conversion fp8(__nv_saturation_t sat, __nv_fp8_interpretation_t kind) {
  return [=](float x) -> std::uint32_t { return __nv_cvt_float_to_fp8(x, sat, kind); };
}

Conversion fp6(__nv_fp6_interpretation_t kind, cudaRoundMode mode) {
  return [=](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, kind, mode); };
}

Conversion fp4(cudaRoundMode mode) {
  return [=](float x) -> std::uint32_t { return __nv_cvt_float_to_fp4(x, __NV_E2M1, mode); };
}

Conversion e8m0(__nv_saturation_t sat, cudaRoundMode mode) {
  return [=](float x) -> std::uint32_t { return __nv_cvt_float_to_e8m0(x, sat, mode); };
}

TEST(NvidiaReference, E4M3SatfiniteMatchesNearestEvenSaturating) {
  // Inf inputs excluded: __NV_SATFINITE gives ±448, we give NaN (no Inf in e4m3).
  compare_encode("E4M3 satfinite", "e4m3", format::Rounding::nearest_even,
                 finite_only(inputs_for(spec_named("e4m3"))), fp8(__NV_SATFINITE, __NV_E4M3));
}

TEST(NvidiaReference, E4M3NoSatMatchesOverflowToNan) {
  // Without saturation NVIDIA's E4M3 overflows to NaN, as our e4m3fn,overflow=inf does; Inf -> NaN.
  compare_encode("E4M3 nosat", "e4m3fn,overflow=inf", format::Rounding::nearest_even,
                 with_specials(inputs_for(spec_named("e4m3"))), fp8(__NV_NOSAT, __NV_E4M3));
}

TEST(NvidiaReference, E5M2SatfiniteMatchesNearestEvenSaturating) {
  // Inf inputs excluded: __NV_SATFINITE gives ±57344, we keep ±Inf.
  compare_encode("E5M2 satfinite", "e5m2", format::Rounding::nearest_even,
                 finite_only(inputs_for(spec_named("e5m2"))), fp8(__NV_SATFINITE, __NV_E5M2));
}

TEST(NvidiaReference, E5M2NoSatMatchesOverflowToInf) {
  compare_encode("E5M2 nosat", "e5m2,overflow=inf", format::Rounding::nearest_even,
                 with_specials(inputs_for(spec_named("e5m2"))), fp8(__NV_NOSAT, __NV_E5M2));
}

TEST(NvidiaReference, Fp8DecodeMatches) {
  compare_decode("e4m3", [](std::uint32_t c) {
    return half_raw_to_float(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3));
  });
  compare_decode("e5m2", [](std::uint32_t c) {
    return half_raw_to_float(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2));
  });
}

// FP6 and FP4 have no Inf or NaN: NVIDIA and the spec agree that NaN -> +max and ±Inf -> ±max, so
// every input is compared, specials included.
TEST(NvidiaReference, E2M3MatchesNearestEvenAndTowardZero) {
  const std::vector<float> inputs = with_specials(inputs_for(spec_named("e2m3")));
  compare_encode("E2M3 nearest", "e2m3", format::Rounding::nearest_even, inputs,
                 fp6(__NV_E2M3, cudaRoundNearest));
  compare_encode("E2M3 zero", "e2m3", format::Rounding::toward_zero, inputs, fp6(__NV_E2M3, cudaRoundZero));
}

TEST(NvidiaReference, E3M2MatchesNearestEvenAndTowardZero) {
  const std::vector<float> inputs = with_specials(inputs_for(spec_named("e3m2")));
  compare_encode("E3M2 nearest", "e3m2", format::Rounding::nearest_even, inputs,
                 fp6(__NV_E3M2, cudaRoundNearest));
  compare_encode("E3M2 zero", "e3m2", format::Rounding::toward_zero, inputs, fp6(__NV_E3M2, cudaRoundZero));
}

TEST(NvidiaReference, E2M1MatchesNearestEvenAndTowardZero) {
  const std::vector<float> inputs = with_specials(inputs_for(spec_named("e2m1")));
  compare_encode("E2M1 nearest", "e2m1", format::Rounding::nearest_even, inputs, fp4(cudaRoundNearest));
  compare_encode("E2M1 zero", "e2m1", format::Rounding::toward_zero, inputs, fp4(cudaRoundZero));
}

TEST(NvidiaReference, Fp6AndFp4DecodeMatch) {
  compare_decode("e2m3", [](std::uint32_t c) {
    return half_raw_to_float(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E2M3));
  });
  compare_decode("e3m2", [](std::uint32_t c) {
    return half_raw_to_float(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E3M2));
  });
  compare_decode("e2m1", [](std::uint32_t c) {
    return half_raw_to_float(__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1));
  });
}

// E8M0: non-negative inputs (NVIDIA rounds |x|; we give NaN for negatives). Zero: NVIDIA clamps to
// code 0 (2^-127), as our fnu does. Inf excluded: NVIDIA's satfinite gives 2^127, we give NaN.
TEST(NvidiaReference, E8M0MatchesTowardZeroAndTowardPositive) {
  std::vector<float> inputs = non_negative_only(inputs_for(spec_named("e8m0fnu")));
  inputs.push_back(0.0f);
  inputs.push_back(NAN);
  compare_encode("E8M0 zero", "e8m0fnu", format::Rounding::toward_zero, inputs,
                 e8m0(__NV_SATFINITE, cudaRoundZero));
  compare_encode("E8M0 up", "e8m0fnu", format::Rounding::toward_positive, inputs,
                 e8m0(__NV_SATFINITE, cudaRoundPosInf));
  // Without saturation, results above 2^127 become NaN, as with our overflow=inf.
  compare_encode("E8M0 up nosat", "e8m0fnu,overflow=inf", format::Rounding::toward_positive, inputs,
                 e8m0(__NV_NOSAT, cudaRoundPosInf));
  compare_encode("E8M0 zero nosat", "e8m0fnu,overflow=inf", format::Rounding::toward_zero, inputs,
                 e8m0(__NV_NOSAT, cudaRoundZero));
}

TEST(NvidiaReference, E8M0DecodeMatches) {
  compare_decode("e8m0fnu", [](std::uint32_t c) {
    return bf16_raw_to_float(__nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c)));
  });
}

// The documented differences, pinned so that a change on either side is noticed.
TEST(NvidiaReference, DocumentedDifferencesForInfinities) {
  EXPECT_EQ(__nv_cvt_float_to_fp8(INFINITY, __NV_SATFINITE, __NV_E4M3), 0x7E);  // NVIDIA: max finite
  EXPECT_EQ(format::encode(format::make_format(spec_named("e4m3")), format::Rounding::nearest_even, INFINITY),
            0x7Fu);
  EXPECT_EQ(__nv_cvt_float_to_fp8(-INFINITY, __NV_SATFINITE, __NV_E5M2), 0xFB);
  EXPECT_EQ(
      format::encode(format::make_format(spec_named("e5m2")), format::Rounding::nearest_even, -INFINITY),
      0xFCu);
}

#else  // no CUDA headers

TEST(NvidiaReference, ComparisonsWithCudaFpHeaders) {
  GTEST_SKIP()
      << "CUDA headers not found: ALTGRAD_HAVE_CUDA_FP_HEADERS is not defined or cuda_fp8.h, cuda_fp6.h, "
         "cuda_fp4.h cannot be included (tests/CMakeLists.txt looks in /usr/local/cuda/include)";
}

#endif

}  // namespace
}  // namespace altgrad::format_test
