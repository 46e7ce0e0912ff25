// The attention's forward products under an accumulator model (ops/cpu/attention.hpp,
// *_emulated): q·kᵀ and probs·v of every head against the emulated GEMM called here on each head's
// own contiguous matrices, against an exact sum for a model wide enough to drop nothing, and the
// same bits on one thread and two. The scores are checked through the softmax the kernel applies to
// them, computed here from the expected scores by the same row softmax.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/accumulator.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "ops/cpu/attention.hpp"
#include "ops/cpu/emulated_gemm.hpp"
#include "ops/cpu/softmax_row.hpp"
#include "ops/operands.hpp"
#include "support/thread_count.hpp"

// The file's own namespace: in a unity batch (tests/CMakeLists.txt) another file's helpers of the
// same names would collide.
namespace altgrad::ops_test::emulated_attention {
namespace {

using format::AccumulatorModel;
using format::parse_accumulator;
using ops::cpu::EmulatedOperand;

constexpr int kE4m3Emin = -6;

// T > 128: probs·v promotes within a row under `hopper`; T > 64: the scores come in query blocks.
constexpr std::size_t B = 2, T = 150, C = 32, NH = 2, hs = C / NH;

const format::Format& e4m3() {
  static const format::Format f = format::make_format(format::parse_format("e4m3"));
  return f;
}

// Random E4M3 values within ±2, so that the scores stay of unit spread and the softmax keeps
// their differences.
std::vector<float> grid_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> out;
  while (out.size() < count) {
    const float v = format::decode(e4m3(), rng() & 0xFFu);
    if (std::isfinite(v) && std::fabs(v) <= 2.0f) out.push_back(v);
  }
  return out;
}

// Causal (B, NH, T, T) probabilities of the grid: positive values at keys 0..t, exact zeros past t.
std::vector<float> causal_grid(std::uint32_t seed) {
  std::vector<float> p = grid_values(B * NH * T * T, seed);
  for (std::size_t row = 0; row < B * NH * T; ++row) {
    for (std::size_t s = 0; s < T; ++s) p[row * T + s] = s > row % T ? 0.0f : std::fabs(p[row * T + s]);
  }
  return p;
}

// The grid values of q, k and v (each (B·T, C)) as one qkv (B, T, 3C), each third divided by its
// scale: the fake-quantized copy x̂ = Q(x·s)/s a hook would hand the kernel.
struct Qkv {
  std::vector<float> q = grid_values(B * T * C, 1), k = grid_values(B * T * C, 2), v = grid_values(B * T * C, 3);
  float sq = 1.0f, sk = 1.0f, sv = 1.0f;

  std::vector<float> copy() const {
    std::vector<float> qkv(B * T * 3 * C);
    for (std::size_t n = 0; n < B * T; ++n) {
      for (std::size_t c = 0; c < C; ++c) {
        qkv[n * 3 * C + c] = q[n * C + c] / sq;
        qkv[n * 3 * C + C + c] = k[n * C + c] / sk;
        qkv[n * 3 * C + 2 * C + c] = v[n * C + c] / sv;
      }
    }
    return qkv;
  }
};

// One head's (T, hs) slice of a (B·T, C) third, contiguous.
std::vector<float> head_of(const std::vector<float>& third, std::size_t b, std::size_t h) {
  std::vector<float> out(T * hs);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < hs; ++i) out[t * hs + i] = third[(b * T + t) * C + h * hs + i];
  }
  return out;
}

// The softmax the kernel applies to one head's scores (T, T), in place.
void causal_softmax(float* scores) {
  for (std::size_t t = 0; t < T; ++t) {
    float* p = scores + t * T;
    ops::cpu::softmax_row(p, p, t + 1, T);
    std::fill(p + t + 1, p + T, 0.0f);
  }
}

// What the kernel must give, head by head: the emulated GEMM's general path on the head's grid
// values, its alpha the scales' product as cuBLASLt applies it (the scores' 1/√hs within it).
struct Expected {
  std::vector<float> probs = std::vector<float>(B * NH * T * T), out = std::vector<float>(B * T * C);
};

Expected expected(const AccumulatorModel& model, const Qkv& in, const std::vector<float>& probs, float sp) {
  Expected e;
  const float score_alpha = (1.0f / in.sq) * (1.0f / in.sk) * (1.0f / std::sqrt(static_cast<float>(hs)));
  const float value_alpha = (1.0f / sp) * (1.0f / in.sv);
  std::vector<float> head_out(T * hs);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < NH; ++h) {
      const std::vector<float> q = head_of(in.q, b, h), k = head_of(in.k, b, h), v = head_of(in.v, b, h);
      float* scores = e.probs.data() + (b * NH + h) * T * T;
      // scores (T, T) = q (T, hs) · kᵀ (hs, T); out (T, hs) = probs (T, T) · v (T, hs).
      ops::cpu::emulated_gemm_general(model, T, T, hs, EmulatedOperand{q.data(), hs, 1, kE4m3Emin},
                                      EmulatedOperand{k.data(), 1, hs, kE4m3Emin}, score_alpha, false, scores, T);
      causal_softmax(scores);
      ops::cpu::emulated_gemm_general(model, T, hs, T,
                                      EmulatedOperand{probs.data() + (b * NH + h) * T * T, T, 1, kE4m3Emin},
                                      EmulatedOperand{v.data(), hs, 1, kE4m3Emin}, value_alpha, false,
                                      head_out.data(), hs);
      for (std::size_t t = 0; t < T; ++t) {
        std::copy_n(head_out.data() + t * hs, hs, e.out.data() + (b * T + t) * C + h * hs);
      }
    }
  }
  return e;
}

// The kernel's two halves on the copies, each product under `model` with the copies' grids.
Expected computed(const AccumulatorModel& model, const Qkv& in, const std::vector<float>& probs, float sp) {
  Expected got;
  const std::vector<float> qkv = in.copy();
  std::vector<float> probs_copy(probs.size());
  for (std::size_t i = 0; i < probs.size(); ++i) probs_copy[i] = probs[i] / sp;
  const ops::EmulatedGemm scores{&model, {&e4m3(), in.sq}, {&e4m3(), in.sk}};
  const ops::EmulatedGemm values{&model, {&e4m3(), sp}, {&e4m3(), in.sv}};
  ops::cpu::attention_probs_forward_emulated<float>(got.probs, qkv, B, T, C, NH, scores);
  ops::cpu::attention_values_forward_emulated<float>(got.out, probs_copy, qkv, B, T, C, NH, values);
  return got;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
        << what << "[" << i << "]: " << got[i] << " against " << want[i];
  }
}

// Scales that are not powers of two: the copies x̂ = fl(g / s) are not the grid values, and the
// kernel must recover them and apply 1/s to the sums.
TEST(EmulatedAttention, EachHeadsProductsAreTheEmulatedGemmOnItsGridValues) {
  const std::vector<float> probs = causal_grid(4);
  for (const char* name : {"hopper", "hopper_fast", "aligned,group=16,bits=9,acc=12,promote=32"}) {
    const AccumulatorModel model = parse_accumulator(name);
    for (const float scale : {1.0f, 3.7f}) {
      Qkv in;
      in.sq = scale, in.sk = 0.011f * scale, in.sv = 1.3f * scale;
      const float sp = 2.5f * scale;
      SCOPED_TRACE(std::string(name) + ", scale " + std::to_string(scale));
      const Expected want = expected(model, in, probs, sp), got = computed(model, in, probs, sp);
      expect_same_bits(got.probs, want.probs, "probs");
      expect_same_bits(got.out, want.out, "out");
    }
  }
}

// A model that drops nothing (one step over all of K, 40 fraction bits, nearest) makes each product
// the exact sum rounded once to FP32, then alpha: an oracle that does not run the emulated GEMM.
// With unit scales the scores' alpha is the float path's 1/√hs.
TEST(EmulatedAttention, WideModelGivesTheExactSumsRoundedOnce) {
  const AccumulatorModel wide = parse_accumulator("aligned,group=256,bits=40,acc=24,cut=nearest");
  const Qkv in;
  const std::vector<float> probs = causal_grid(5);
  const Expected got = computed(wide, in, probs, 1.0f);
  const float alpha = 1.0f / std::sqrt(static_cast<float>(hs));
  std::vector<float> scores(T * T);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < NH; ++h) {
      const auto at = [&](std::size_t t, std::size_t i) { return (b * T + t) * C + h * hs + i; };
      const float* p = probs.data() + (b * NH + h) * T * T;
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t s = 0; s < T; ++s) {
          double sum = 0;  // exact: 16 products of 4-bit significands within 2^-18 .. 2^2
          for (std::size_t i = 0; i < hs; ++i) sum += double{in.q[at(t, i)]} * in.k[at(s, i)];
          scores[t * T + s] = alpha * static_cast<float>(sum);
        }
        for (std::size_t i = 0; i < hs; ++i) {
          double sum = 0;  // exact: 150 products of 4-bit significands within 2^-18 .. 2^2
          for (std::size_t s = 0; s < T; ++s) sum += double{p[t * T + s]} * in.v[at(s, i)];
          ASSERT_EQ(got.out[at(t, i)], static_cast<float>(sum)) << "out (" << b << ", " << t << ", " << h << ", " << i
                                                                << ")";
        }
      }
      causal_softmax(scores.data());
      for (std::size_t i = 0; i < T * T; ++i) {
        ASSERT_EQ(got.probs[(b * NH + h) * T * T + i], scores[i]) << "probs (" << b << ", " << h << ") at " << i;
      }
    }
  }
}

// Under Hopper's models the masked keys add nothing: a row of probs·v over every key position is
// the row's sum over its keys 0..t alone, promotions included.
TEST(EmulatedAttention, MaskedKeysAddNothingUnderHopper) {
  const std::vector<float> probs = causal_grid(6);
  const Qkv in;
  for (const char* name : {"hopper", "hopper_fast"}) {
    const AccumulatorModel model = parse_accumulator(name);
    const Expected got = computed(model, in, probs, 1.0f);
    const std::vector<float> v = head_of(in.v, 1, 1);
    std::vector<float> row(hs);
    for (std::size_t t = 0; t < T; ++t) {
      const float* p = probs.data() + ((1 * NH + 1) * T + t) * T;
      ops::cpu::emulated_gemm_general(model, 1, hs, t + 1, EmulatedOperand{p, T, 1, kE4m3Emin},
                                      EmulatedOperand{v.data(), hs, 1, kE4m3Emin}, 1.0f, false, row.data(), hs);
      for (std::size_t i = 0; i < hs; ++i) {
        ASSERT_EQ(got.out[(1 * T + t) * C + 1 * hs + i], row[i]) << name << " at query " << t << ", channel " << i;
      }
    }
  }
}

// The heads run in parallel and each runs its emulated GEMMs (OpenMP regions nested in the heads'
// loop) on its own thread: the same bits on one thread and two.
TEST(EmulatedAttention, SameBitsOnOneAndTwoThreads) {
  const AccumulatorModel hopper = parse_accumulator("hopper");
  Qkv in;
  in.sq = 3.7f, in.sk = 0.02f, in.sv = 5.0f;
  const std::vector<float> probs = causal_grid(7);
  const auto run = [&] { return computed(hopper, in, probs, 1.9f); };
  const Expected one = test_support::with_threads(1, run), two = test_support::with_threads(2, run);
  expect_same_bits(two.probs, one.probs, "probs");
  expect_same_bits(two.out, one.out, "out");
}

// No model: the float halves, bit for bit. Double operands under a model are refused.
TEST(EmulatedAttention, NoModelIsTheFloatPathAndDoublesAreRefused) {
  const std::vector<float> qkv = Qkv{}.copy(), probs = causal_grid(8);
  std::vector<float> plain_probs(probs.size()), plain_out(B * T * C), probs_out(probs.size()), out(B * T * C);
  ops::cpu::attention_probs_forward<float>(plain_probs, qkv, B, T, C, NH);
  ops::cpu::attention_values_forward<float>(plain_out, probs, qkv, B, T, C, NH);
  ops::cpu::attention_probs_forward_emulated<float>(probs_out, qkv, B, T, C, NH, ops::EmulatedGemm{});
  ops::cpu::attention_values_forward_emulated<float>(out, probs, qkv, B, T, C, NH, ops::EmulatedGemm{});
  expect_same_bits(probs_out, plain_probs, "probs");
  expect_same_bits(out, plain_out, "out");
  const AccumulatorModel hopper = parse_accumulator("hopper");
  std::vector<double> dprobs(probs.size()), dqkv(qkv.begin(), qkv.end());
  EXPECT_THROW(ops::cpu::attention_probs_forward_emulated<double>(dprobs, dqkv, B, T, C, NH,
                                                                  ops::EmulatedGemm{&hopper, {}, {}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::ops_test::emulated_attention
