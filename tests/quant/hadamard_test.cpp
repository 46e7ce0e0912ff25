// Randomized Hadamard transforms (quant/hadamard.hpp) against the definition written out here:
// y_j = (1/√n) Σ_i s_i x_i H[i][j] with H[i][j] = (−1)^popcount(i & j), summed term by term in long
// double from the explicit matrix (not the fast transform), and against what the transform is for:
// a GEMM whose two operands are transformed along its reduction axis with the same signs keeps its
// product.
#include "quant/hadamard.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "determinism.hpp"

namespace altgrad::quant_test {
namespace {

using quant::hadamard_columns;
using quant::hadamard_rows;

// One group through the explicit matrix, in long double, rounded once to float.
std::vector<float> reference_group(const std::vector<float>& x, const std::vector<float>& signs) {
  const std::size_t n = signs.size();
  std::vector<float> y(n);
  for (std::size_t j = 0; j < n; ++j) {
    long double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int h = std::popcount(i & j) % 2 == 0 ? 1 : -1;
      sum += static_cast<long double>(signs[i]) * x[i] * h;
    }
    y[j] = static_cast<float>(sum / std::sqrt(static_cast<long double>(n)));
  }
  return y;
}

std::vector<float> gaussian(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  return v;
}

// Transformer Engine's vector, applied to the unit vector and to all ones (values derived by hand
// from the matrix: the first row of H is all ones; sums of ±1 for the second).
TEST(Hadamard, TransformerEngineSignsOnKnownVectors) {
  const std::vector<float> signs = quant::transformer_engine_signs();
  const std::vector<float> expected_signs = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
  EXPECT_EQ(signs, expected_signs);
  std::vector<float> unit(16, 0.0f), ones(16, 1.0f), out(16);
  unit[0] = 1.0f;
  hadamard_rows(unit, out, 16, signs);
  EXPECT_EQ(out, std::vector<float>(16, 0.25f));
  hadamard_rows(ones, out, 16, signs);
  EXPECT_EQ(out, (std::vector<float>{-1, 0, 1, 0, 1, 0, -1, 0, 1, 2, 1, 0, 1, 0, 1, -2}));
}

TEST(Hadamard, RowsMatchTheExplicitMatrixAtEverySize) {
  for (const std::size_t n : quant::kHadamardSizes) {
    const std::vector<float> signs = quant::random_signs(n, 7, n);
    const std::size_t row_length = 2 * n, rows = 3;
    const std::vector<float> x = gaussian(rows * row_length, static_cast<unsigned>(n));
    std::vector<float> y(x.size());
    hadamard_rows(x, y, row_length, signs);
    for (std::size_t g = 0; g < x.size() / n; ++g) {
      const std::vector<float> group(x.begin() + static_cast<std::ptrdiff_t>(g * n),
                                     x.begin() + static_cast<std::ptrdiff_t>((g + 1) * n));
      const std::vector<float> want = reference_group(group, signs);
      for (std::size_t j = 0; j < n; ++j) {
        // Double against long double sums: at most the last bit of the float can differ.
        EXPECT_NEAR(y[g * n + j], want[j], std::abs(want[j]) * 0x1p-23f + 0x1p-60f) << "n = " << n << ", group " << g;
      }
    }
  }
}

// Powers of two times small integers: every sum is exact, so the bits must agree.
TEST(Hadamard, ExactInputsGiveExactBits) {
  const std::vector<float> signs = quant::random_signs(64, 3, 0);
  std::vector<float> x(64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(static_cast<float>(static_cast<int>(i % 7) - 3), static_cast<int>(i % 5));
  std::vector<float> y(64);
  hadamard_rows(x, y, 64, signs);
  EXPECT_EQ(y, reference_group(x, signs));
}

// Bit for bit, also where the columns come in several chunks and the last is ragged (70 = 32 + 32 + 6).
TEST(Hadamard, ColumnsAreRowsOfTheTranspose) {
  struct Shape {
    std::size_t rows, cols, n;
  };
  for (const Shape& shape : {Shape{32, 5, 16}, Shape{256, 70, 64}, Shape{128, 33, 128}}) {
    const std::size_t rows = shape.rows, cols = shape.cols;
    const std::vector<float> signs = quant::random_signs(shape.n, 11, 2);
    const std::vector<float> x = gaussian(rows * cols, 5);
    std::vector<float> xt(x.size()), by_columns(x.size()), by_rows(x.size());
    for (std::size_t r = 0; r < rows; ++r) for (std::size_t c = 0; c < cols; ++c) xt[c * rows + r] = x[r * cols + c];
    hadamard_columns(x, by_columns, cols, signs);
    hadamard_rows(xt, by_rows, rows, signs);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        ASSERT_EQ(by_columns[r * cols + c], by_rows[c * rows + r]) << rows << " x " << cols << " at " << r << ", " << c;
      }
    }
  }
}

// C = A·Bᵀ reduces over K; A' and B' are A and B transformed along K with the same signs.
double largest_product_change(std::size_t n, const std::vector<float>& signs_a, const std::vector<float>& signs_b) {
  const std::size_t m = 6, p = 4, k = 4 * n;
  const std::vector<float> a = gaussian(m * k, 21), b = gaussian(p * k, 22);
  std::vector<float> ta(a.size()), tb(b.size());
  hadamard_rows(a, ta, k, signs_a);
  hadamard_rows(b, tb, k, signs_b);
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < p; ++j) {
      double plain = 0, transformed = 0;
      for (std::size_t kk = 0; kk < k; ++kk) {
        plain += static_cast<double>(a[i * k + kk]) * b[j * k + kk];
        transformed += static_cast<double>(ta[i * k + kk]) * tb[j * k + kk];
      }
      worst = std::max(worst, std::abs(plain - transformed));
    }
  }
  return worst;
}

TEST(Hadamard, BothOperandsTransformedKeepTheProduct) {
  for (const std::size_t n : quant::kHadamardSizes) {
    const std::vector<float> signs = quant::random_signs(n, 99, 1);
    // Each transformed value carries one FP32 rounding (relative 2^-24) and the sums have 4n terms
    // of size about 1: the change stays far below 1e-4.
    EXPECT_LT(largest_product_change(n, signs, signs), 1e-4) << "n = " << n;
  }
}

// The planted fault: one operand's signs with one entry flipped. The product changes by O(1).
TEST(Hadamard, AWrongSignIsSeen) {
  const std::vector<float> signs = quant::random_signs(32, 99, 1);
  std::vector<float> wrong = signs;
  wrong[5] = -wrong[5];
  EXPECT_GT(largest_product_change(32, signs, wrong), 0.1);
}

TEST(Hadamard, RandomSignsComeFromTheirSeed) {
  EXPECT_EQ(quant::random_signs(128, 5, 1), quant::random_signs(128, 5, 1));
  EXPECT_NE(quant::random_signs(128, 5, 1), quant::random_signs(128, 5, 2));
  EXPECT_NE(quant::random_signs(128, 5, 1), quant::random_signs(128, 6, 1));
  int negatives = 0;
  for (const float s : quant::random_signs(128, 5, 1)) negatives += s < 0;
  EXPECT_GT(negatives, 40);  // Binomial(128, 1/2): below 41 has probability about 1e-5
  EXPECT_LT(negatives, 88);
}

TEST(Hadamard, SameBitsOnAnyThreadCount) {
  const std::vector<float> signs = quant::random_signs(128, 1, 1);
  const std::vector<float> x = gaussian(128 * 64, 8);
  const auto both = [&](int threads) {
    const ScopedThreadCount scoped(threads);
    std::vector<float> rows(x.size()), columns(x.size());
    hadamard_rows(x, rows, 128, signs);
    hadamard_columns(x, columns, 64, signs);
    rows.insert(rows.end(), columns.begin(), columns.end());
    return rows;
  };
  EXPECT_TRUE(bit_identical(both(1), both(2)));
}

TEST(Hadamard, SizesThatCannotRunAreRefusedByName) {
  std::vector<float> x(48), y(48);
  const auto message = [&](std::size_t n, std::size_t row_length) {
    try {
      hadamard_rows(x, y, row_length, std::vector<float>(n, 1.0f));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(24, 48), "Hadamard size 24 is not one of 16, 32, 64, 128");
  EXPECT_EQ(message(32, 48), "Hadamard size 32 does not divide the reduction axis (48 elements)");
  EXPECT_THROW(hadamard_rows(x, y, 16, std::vector<float>(16, 0.5f)), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::quant_test
