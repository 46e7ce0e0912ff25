#include "ops/cpu/attention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ops/attention_reference.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/determinism.hpp"
#include "ops/finite_difference.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops::cpu;
using altgrad::ops::AttentionOperands;
using namespace altgrad::ops_test;

struct AttentionCase {
  std::size_t B, T, C, NH;
  std::vector<double> qkv, dout;
};

// Entries in [-2, 2] give scores of about unit spread: probabilities far from uniform.
AttentionCase make_attention_case(std::size_t B, std::size_t T, std::size_t C, std::size_t NH, std::uint64_t seed) {
  return {B, T, C, NH, random_values(B * T * 3 * C, seed, -2.0, 2.0), random_values(B * T * C, seed + 1)};
}

// nanoGPT's CausalSelfAttention.forward spelled out on full matrices, in long double:
//   q, k, v = qkv.split(C); view as (B, NH, T, hs)
//   att = q @ kᵀ / √hs; att[t, s > t] = −inf; att = softmax(att); y = att @ v
//   y.transpose(1, 2).view(B, T, C)
Tensors<double> reference_forward(const AttentionCase& k) {
  const std::size_t B = k.B, T = k.T, C = k.C, NH = k.NH, hs = C / NH;
  using Matrix = std::vector<std::vector<long double>>;
  std::vector<double> out(B * T * C), probs(B * NH * T * T);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < NH; ++h) {
      Matrix q(T, std::vector<long double>(hs)), key(T, std::vector<long double>(hs)), v = q;
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t i = 0; i < hs; ++i) {
          const std::size_t row = (b * T + t) * 3 * C + h * hs + i;
          q[t][i] = k.qkv[row];
          key[t][i] = k.qkv[row + C];
          v[t][i] = k.qkv[row + 2 * C];
        }
      }
      Matrix att(T, std::vector<long double>(T));
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t s = 0; s < T; ++s) {
          long double score = 0;
          for (std::size_t i = 0; i < hs; ++i) score += q[t][i] * key[s][i];
          att[t][s] =
              s > t ? -std::numeric_limits<long double>::infinity() : score / std::sqrt(static_cast<long double>(hs));
        }
        long double sum = 0;
        for (std::size_t s = 0; s < T; ++s) sum += std::exp(att[t][s]);
        for (std::size_t s = 0; s < T; ++s) att[t][s] = std::exp(att[t][s]) / sum;
      }
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t s = 0; s < T; ++s) probs[((b * NH + h) * T + t) * T + s] = static_cast<double>(att[t][s]);
        for (std::size_t i = 0; i < hs; ++i) {
          long double y = 0;
          for (std::size_t s = 0; s < T; ++s) y += att[t][s] * v[s][i];
          out[(b * T + t) * C + h * hs + i] = static_cast<double>(y);
        }
      }
    }
  }
  return {{"out", out}, {"probs", probs}};
}

template <typename Scalar>
Pass<Scalar> run(const AttentionCase& k, Scalar stale_gradient = 0) {
  const auto qkv = converted<Scalar>(k.qkv);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(k.B * k.T * k.C), probs(k.B * k.NH * k.T * k.T), dqkv(qkv.size(), stale_gradient),
      scratch(probs.size());
  attention_forward<Scalar>(out, probs, qkv, k.B, k.T, k.C, k.NH);
  attention_backward<Scalar>(dqkv, scratch, dout, qkv, probs, k.B, k.T, k.C, k.NH);
  return {{{"out", out}, {"probs", probs}}, {{"dqkv", dqkv}}};
}

template <typename Scalar>
class AttentionTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AttentionTyped, ScalarTypes);

// Long enough for three blocks of queries (ops/cpu/attention.cpp's kQueryBlock = 64), the last one short.
constexpr std::size_t kSeveralQueryBlocks = 150;

TYPED_TEST(AttentionTyped, ForwardMatchesNanoGptFormulation) {
  const AttentionCase k = make_attention_case(2, 7, 33, 3, 1);  // hs = 11: full SIMD lanes and a tail
  EXPECT_TRUE(all_close(run<TypeParam>(k).outputs, reference_forward(k), kReferenceTolerance<TypeParam>));
  const AttentionCase blocks = make_attention_case(1, kSeveralQueryBlocks, 12, 2, 11);
  EXPECT_TRUE(all_close(run<TypeParam>(blocks).outputs, reference_forward(blocks), kReferenceTolerance<TypeParam>));
}

// An output at position t must not see positions after t: changing every q, k and v there leaves
// out[.., ≤ t, ..] and probs[.., ≤ t, ..] bit for bit unchanged, and the masked probabilities are 0.
TYPED_TEST(AttentionTyped, IsCausal) {
  const AttentionCase k = make_attention_case(2, 9, 8, 2, 2);
  const std::size_t row = 3 * k.C;
  for (std::size_t cut = 0; cut + 1 < k.T; ++cut) {
    SCOPED_TRACE(cut);
    AttentionCase changed = k;
    for (std::size_t b = 0; b < k.B; ++b) {
      for (std::size_t t = cut + 1; t < k.T; ++t) {
        for (std::size_t i = 0; i < row; ++i) changed.qkv[(b * k.T + t) * row + i] += 0.75;
      }
    }
    const Tensors<TypeParam> before = run<TypeParam>(k).outputs;
    const Tensors<TypeParam> after = run<TypeParam>(changed).outputs;
    bool later_outputs_changed = false;
    for (std::size_t b = 0; b < k.B; ++b) {
      for (std::size_t t = 0; t < k.T; ++t) {
        for (std::size_t c = 0; c < k.C; ++c) {
          const std::size_t i = (b * k.T + t) * k.C + c;
          if (t <= cut) {
            ASSERT_EQ(before.at("out")[i], after.at("out")[i]) << "b " << b << " t " << t << " c " << c;
          } else {
            later_outputs_changed |= before.at("out")[i] != after.at("out")[i];
          }
        }
      }
    }
    EXPECT_TRUE(later_outputs_changed) << "the change must matter where it is visible";
    for (std::size_t bh = 0; bh < k.B * k.NH; ++bh) {
      for (std::size_t t = 0; t <= cut; ++t) {
        for (std::size_t s = 0; s < k.T; ++s) {
          const std::size_t i = (bh * k.T + t) * k.T + s;
          ASSERT_EQ(before.at("probs")[i], after.at("probs")[i]) << "bh " << bh << " t " << t << " s " << s;
          if (s > t) {
            ASSERT_EQ(before.at("probs")[i], TypeParam{0});
          }
        }
      }
    }
  }
}

// The two halves are the fused pass taken apart: the same GEMMs on the same operands.
TYPED_TEST(AttentionTyped, HalvesGiveTheFusedBits) {
  const AttentionCase k = make_attention_case(2, 7, 33, 3, 7);
  const auto qkv = converted<TypeParam>(k.qkv);
  std::vector<TypeParam> out(k.B * k.T * k.C), probs(k.B * k.NH * k.T * k.T);
  attention_probs_forward<TypeParam>(probs, qkv, k.B, k.T, k.C, k.NH);
  attention_values_forward<TypeParam>(out, probs, qkv, k.B, k.T, k.C, k.NH);
  EXPECT_TRUE(bit_identical(Tensors<TypeParam>{{"out", out}, {"probs", probs}}, run<TypeParam>(k).outputs));
}

// With nothing rewritten, the straight-through reference is plain attention.
TEST(Attention, ReferenceWithoutRewriteIsTheKernel) {
  for (const AttentionCase& k : {make_attention_case(2, 6, 12, 3, 8), make_attention_case(1, kSeveralQueryBlocks, 12, 2, 12)}) {
    SCOPED_TRACE(k.T);
    const AttentionReference reference =
        straight_through_attention(k.qkv, k.dout, k.B, k.T, k.C, k.NH, [](double x) { return x; });
    const Pass<double> pass = run<double>(k);
    const Tolerance tolerance{1e-13, 1e-12};
    EXPECT_TRUE(all_close("out", pass.outputs.at("out"), reference.out, tolerance));
    EXPECT_TRUE(all_close("probs", pass.outputs.at("probs"), reference.probs, tolerance));
    EXPECT_TRUE(all_close("dqkv", pass.gradients.at("dqkv"), reference.dqkv, tolerance));
  }
}

// Rewritten operands (rounded to a grid of 1/8) multiply in both products; the backward pass
// differentiates the products at them and the softmax at the probabilities it computed.
class AttentionStraightThrough : public ::testing::TestWithParam<std::size_t> {};
INSTANTIATE_TEST_SUITE_P(Lengths, AttentionStraightThrough, ::testing::Values(8, kSeveralQueryBlocks));

TEST_P(AttentionStraightThrough, BackwardMatchesTheReference) {
  const AttentionCase k = make_attention_case(GetParam() > 64 ? 1 : 2, GetParam(), 12, 2, 9);
  const auto to_grid = [](double x) { return std::round(x * 8) / 8; };
  std::vector<double> qkv_used(k.qkv.size()), probs(k.B * k.NH * k.T * k.T), probs_used(probs.size());
  std::transform(k.qkv.begin(), k.qkv.end(), qkv_used.begin(), to_grid);
  attention_probs_forward<double>(probs, qkv_used, k.B, k.T, k.C, k.NH);
  std::transform(probs.begin(), probs.end(), probs_used.begin(), to_grid);
  std::vector<double> out(k.B * k.T * k.C), dqkv(k.qkv.size()), scratch(probs.size());
  attention_values_forward<double>(out, probs_used, qkv_used, k.B, k.T, k.C, k.NH);
  attention_backward<double>(dqkv, scratch, k.dout, AttentionOperands<double>{qkv_used, probs_used}, probs, k.B, k.T,
                             k.C, k.NH);

  const AttentionReference reference = straight_through_attention(k.qkv, k.dout, k.B, k.T, k.C, k.NH, to_grid);
  const Tolerance tolerance{1e-13, 1e-12};
  EXPECT_TRUE(all_close("out", out, reference.out, tolerance));
  EXPECT_TRUE(all_close("probs", probs, reference.probs, tolerance));
  EXPECT_TRUE(all_close("dqkv", dqkv, reference.dqkv, tolerance));
  // The grid matters: the result is not plain attention's.
  EXPECT_FALSE(all_close("dqkv", dqkv, run<double>(k).gradients.at("dqkv"), {1e-6, 1e-6}));
}

TEST(Attention, GradientMatchesFiniteDifferences) {
  AttentionCase k = make_attention_case(2, 4, 18, 2, 3);  // hs = 9
  const Pass<double> pass = run<double>(k);
  std::vector<double> out(k.B * k.T * k.C), probs(k.B * k.NH * k.T * k.T);
  const auto loss = [&] {
    attention_forward<double>(out, probs, k.qkv, k.B, k.T, k.C, k.NH);
    return dot(k.dout, out);
  };
  EXPECT_TRUE(matches_finite_differences("dqkv", pass.gradients.at("dqkv"), k.qkv, loss));
}

TEST(Attention, FloatBackwardMatchesDouble) {
  const AttentionCase k = make_attention_case(2, 8, 40, 4, 4);  // hs = 10
  EXPECT_TRUE(all_close(run<float>(k).gradients, run<double>(k).gradients, {1e-5, 1e-4}));
}

TEST(Attention, BackwardOverwritesItsGradient) {
  const AttentionCase k = make_attention_case(1, kSeveralQueryBlocks, 6, 3, 5);  // every block of queries and of keys
  const double stale = std::numeric_limits<double>::quiet_NaN();  // what an adding kernel would keep
  EXPECT_TRUE(all_close(run<double>(k, stale).gradients, run<double>(k).gradients, {0, 0}));
}

TEST(Attention, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t B = 2, T = 32, C = 64, NH = 4;
  static_assert(B * T * T * C / 2 >= kMinParallelWork, "large enough to run in parallel");
  const AttentionCase k = make_attention_case(B, T, C, NH, 6);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(Attention, RejectsBadShapes) {
  std::vector<float> out(2 * 6), probs(2 * 4), qkv(2 * 18), dqkv(qkv.size()), dprobs(probs.size());
  EXPECT_NO_THROW(attention_forward<float>(out, probs, qkv, 1, 2, 6, 2));
  EXPECT_THROW(attention_forward<float>(out, probs, qkv, 1, 2, 6, 4), std::invalid_argument);  // 4 ∤ 6
  EXPECT_THROW(attention_forward<float>(out, probs, qkv, 1, 2, 6, 3), std::invalid_argument);  // probs size
  EXPECT_THROW(attention_probs_forward<float>(probs, qkv, 1, 2, 6, 3), std::invalid_argument);
  EXPECT_THROW(attention_values_forward<float>(out, probs, qkv, 1, 2, 6, 3), std::invalid_argument);
  const std::vector<float> short_probs(probs.size() - 1);
  EXPECT_THROW(
      attention_backward<float>(dqkv, dprobs, out, AttentionOperands<float>{qkv, short_probs}, probs, 1, 2, 6, 2),
      std::invalid_argument);  // used probs size
}

}  // namespace
