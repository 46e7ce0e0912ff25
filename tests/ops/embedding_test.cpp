#include "ops/cpu/embedding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "ops/cpu/parallel.hpp"
#include "ops/determinism.hpp"
#include "ops/finite_difference.hpp"
#include "ops/test_tensors.hpp"

namespace {

using namespace altgrad::ops::cpu;
using namespace altgrad::ops_test;

struct EmbeddingCase {
  std::size_t B, T, C, V;
  std::vector<std::int32_t> tokens;
  std::vector<double> wte, wpe, dout;
};

// With B·T > V some token occurs more than once, so the backward scatter has collisions.
EmbeddingCase make_embedding_case(std::size_t B, std::size_t T, std::size_t C, std::size_t V, std::uint64_t seed) {
  return {B,
          T,
          C,
          V,
          random_tokens(B * T, V, seed),
          random_values(V * C, seed + 1),
          random_values(T * C, seed + 2),
          random_values(B * T * C, seed + 3)};
}

std::vector<double> reference_forward(const EmbeddingCase& k) {
  std::vector<double> out(k.B * k.T * k.C);
  for (std::size_t b = 0; b < k.B; ++b) {
    for (std::size_t t = 0; t < k.T; ++t) {
      for (std::size_t c = 0; c < k.C; ++c) {
        out[(b * k.T + t) * k.C + c] = k.wte[k.tokens[b * k.T + t] * k.C + c] + k.wpe[t * k.C + c];
      }
    }
  }
  return out;
}

template <typename Scalar>
Pass<Scalar> run(const EmbeddingCase& k, int backward_calls = 1) {
  const auto wte = converted<Scalar>(k.wte);
  const auto wpe = converted<Scalar>(k.wpe);
  const auto dout = converted<Scalar>(k.dout);
  std::vector<Scalar> out(k.B * k.T * k.C), dwte(wte.size()), dwpe(wpe.size());
  embedding_forward<Scalar>(out, k.tokens, wte, wpe, k.B, k.T, k.C, k.V);
  for (int i = 0; i < backward_calls; ++i) embedding_backward<Scalar>(dwte, dwpe, dout, k.tokens, k.B, k.T, k.C, k.V);
  return {{{"out", out}}, {{"dwte", dwte}, {"dwpe", dwpe}}};
}

template <typename Scalar>
class EmbeddingTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(EmbeddingTyped, ScalarTypes);

TYPED_TEST(EmbeddingTyped, ForwardAddsTokenAndPositionRows) {
  const EmbeddingCase k = make_embedding_case(3, 5, 8, 11, 1);
  // One rounding of an exact sum: the result is the correctly rounded reference in either type.
  EXPECT_TRUE(
      all_close("out", run<TypeParam>(k).outputs.at("out"), converted<TypeParam>(reference_forward(k)), {0, 0}));
}

TEST(Embedding, GradientsMatchFiniteDifferences) {
  EmbeddingCase k = make_embedding_case(2, 4, 3, 5, 2);
  ASSERT_LT(std::set<std::int32_t>(k.tokens.begin(), k.tokens.end()).size(), k.tokens.size()) << "no repeated token";
  const Pass<double> pass = run<double>(k);
  std::vector<double> out(k.B * k.T * k.C);
  const auto loss = [&] {
    embedding_forward<double>(out, k.tokens, k.wte, k.wpe, k.B, k.T, k.C, k.V);
    return dot(k.dout, out);
  };
  EXPECT_TRUE(matches_finite_differences("dwte", pass.gradients.at("dwte"), k.wte, loss));
  EXPECT_TRUE(matches_finite_differences("dwpe", pass.gradients.at("dwpe"), k.wpe, loss));
}

// A token that never occurs gets no gradient at all.
TEST(Embedding, UnusedTokensGetNoGradient) {
  EmbeddingCase k = make_embedding_case(2, 3, 4, 6, 3);
  k.tokens = {0, 2, 2, 5, 0, 2};
  const std::vector<double> dwte = run<double>(k).gradients.at("dwte");
  for (const std::size_t unused : {1, 3, 4}) {
    for (std::size_t c = 0; c < k.C; ++c) EXPECT_EQ(dwte[unused * k.C + c], 0.0) << unused;
  }
}

TEST(Embedding, BackwardAccumulates) {
  const EmbeddingCase k = make_embedding_case(2, 4, 3, 5, 4);
  EXPECT_TRUE(all_close(run<double>(k, 2).gradients, scaled(run<double>(k, 1).gradients, 2), {1e-15, 1e-15}));
}

TEST(Embedding, BitsDoNotDependOnThreadCount) {
  constexpr std::size_t B = 4, T = 64, C = 96, V = 50;
  static_assert(B * T * C >= kMinParallelWork, "large enough to run in parallel");
  const EmbeddingCase k = make_embedding_case(B, T, C, V, 5);
  expect_identical_bits_for_any_thread_count([&] { return run<float>(k); });
}

TEST(Embedding, RejectsTokensOutOfRange) {
  std::vector<float> out(4), wte(6), wpe(4);
  EXPECT_NO_THROW(embedding_forward<float>(out, std::vector<std::int32_t>{0, 2}, wte, wpe, 1, 2, 2, 3));
  EXPECT_THROW(embedding_forward<float>(out, std::vector<std::int32_t>{0, 3}, wte, wpe, 1, 2, 2, 3),
               std::invalid_argument);
  EXPECT_THROW(embedding_backward<float>(wte, wpe, out, std::vector<std::int32_t>{-1, 0}, 1, 2, 2, 3),
               std::invalid_argument);
}

}  // namespace
