#include "ops/cpu/gemm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <vector>

#include "ops/determinism.hpp"
#include "ops/test_tensors.hpp"
#include "support/bit_identical.hpp"

namespace altgrad::ops_test {
namespace {

using ops::cpu::gemm;
using ops::cpu::gemm_tiling;

// One GEMM call: C (m×n) = alpha · op(A) · op(B) + beta · C, with leading dimensions at least as wide as the
// stored matrices (wider ones are strided views, as attention's heads are).
struct GemmCase {
  int m, n, k;
  CBLAS_TRANSPOSE ta, tb;
  int pad;  // extra columns in every stored row
};

int stored_cols(CBLAS_TRANSPOSE t, int rows_of_op, int cols_of_op) { return t == CblasNoTrans ? cols_of_op : rows_of_op; }
int stored_rows(CBLAS_TRANSPOSE t, int rows_of_op, int cols_of_op) { return t == CblasNoTrans ? rows_of_op : cols_of_op; }

struct GemmInputs {
  std::vector<double> a, b, c;
  int lda, ldb, ldc;
};

GemmInputs inputs(const GemmCase& g, std::uint64_t seed) {
  GemmInputs in;
  in.lda = stored_cols(g.ta, g.m, g.k) + g.pad;
  in.ldb = stored_cols(g.tb, g.k, g.n) + g.pad;
  in.ldc = g.n + g.pad;
  in.a = random_values(static_cast<std::size_t>(stored_rows(g.ta, g.m, g.k) * in.lda), seed);
  in.b = random_values(static_cast<std::size_t>(stored_rows(g.tb, g.k, g.n) * in.ldb), seed + 1);
  in.c = random_values(static_cast<std::size_t>(g.m * in.ldc), seed + 2);
  return in;
}

// The product by its definition, in double, one element at a time.
std::vector<double> reference(const GemmCase& g, const GemmInputs& in, double alpha, double beta) {
  std::vector<double> c = in.c;
  for (int i = 0; i < g.m; ++i) {
    for (int j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int p = 0; p < g.k; ++p) {
        const double a = g.ta == CblasNoTrans ? in.a[i * in.lda + p] : in.a[p * in.lda + i];
        const double b = g.tb == CblasNoTrans ? in.b[p * in.ldb + j] : in.b[j * in.ldb + p];
        sum += a * b;
      }
      c[i * in.ldc + j] = alpha * sum + beta * in.c[i * in.ldc + j];
    }
  }
  return c;
}

template <typename Scalar>
std::vector<Scalar> run_gemm(const GemmCase& g, const GemmInputs& in, Scalar beta, Scalar alpha = 1) {
  const std::vector<Scalar> a = converted<Scalar>(in.a), b = converted<Scalar>(in.b);
  std::vector<Scalar> c = converted<Scalar>(in.c);
  gemm(g.ta, g.tb, g.m, g.n, g.k, alpha, a.data(), in.lda, b.data(), in.ldb, beta, c.data(), in.ldc);
  return c;
}

// The training step's GEMM shapes for the default model (2,048 tokens, 128 channels, MLP 512): the
// forward product, dX and dW of c_fc, which split by rows, by columns and over a long reduction.
const GemmCase kForward{2048, 512, 128, CblasNoTrans, CblasTrans, 0};
const GemmCase kInputGradient{2048, 128, 512, CblasNoTrans, CblasNoTrans, 0};
const GemmCase kWeightGradient{512, 128, 2048, CblasTrans, CblasNoTrans, 0};
// A narrow product over a long reduction (a weight gradient of a tiny layer over 5,000 tokens): the
// shape whose sum OpenBLAS's own threading splits on every kernel family, SkylakeX's included.
const GemmCase kNarrowLongReduction{37, 53, 5000, CblasTrans, CblasNoTrans, 0};

TEST(GemmTiling, CoversTheOutputInAlignedSlices) {
  for (const std::size_t m : {1, 15, 16, 17, 100, 512, 2048, 5000}) {
    for (const std::size_t n : {1, 7, 64, 129, 3000}) {
      for (const std::size_t k : {1, 32, 2048}) {
        const ops::cpu::GemmTiling t = gemm_tiling(m, n, k);
        const std::size_t dim = t.by_rows ? m : n;
        EXPECT_EQ(t.by_rows, m >= n);
        EXPECT_GE(t.parts, 1u);
        EXPECT_LE(t.parts, 64u);
        EXPECT_GE(t.parts * t.length, dim) << m << "x" << n << "x" << k;
        EXPECT_LT((t.parts - 1) * t.length, dim) << "an empty last slice at " << m << "x" << n << "x" << k;
        if (t.parts > 1) {
          EXPECT_EQ(t.length % 16, 0u);
        }
      }
    }
  }
}

// The double GEMMs' tiles (float GEMMs are not tiled: ops/cpu/float_gemm.hpp).
TEST(GemmTiling, SplitsTheTrainingStepsShapesForTwoCores) {
  for (const GemmCase& g : {kForward, kInputGradient, kWeightGradient}) {
    EXPECT_EQ(gemm_tiling(g.m, g.n, g.k).parts, 2u) << g.m << "x" << g.n << "x" << g.k;
  }
}

// Thin tiles repack the shared operand once each: a big GEMM keeps tiles of a thousand rows.
TEST(GemmTiling, KeepsTheTilesOfABigGemmThick) {
  const ops::cpu::GemmTiling t = gemm_tiling(2048, 1152, 384);  // the 10.7M model's qkv projection
  EXPECT_EQ(t.parts, 2u);
  EXPECT_EQ(t.length, 1024u);
  EXPECT_EQ(gemm_tiling(8192, 8192, 8192).parts, 64u);
}

// Every transpose combination, beta 0 and 1, alpha 1 and attention's 1/√32, strided views, single
// and many slices, both split axes.
TEST(Gemm, MatchesTheDefinitionInDouble) {
  const std::vector<GemmCase> cases = {
      {3, 5, 4, CblasNoTrans, CblasNoTrans, 0},    {37, 29, 11, CblasTrans, CblasNoTrans, 3},
      {29, 37, 11, CblasNoTrans, CblasTrans, 2},   {40, 33, 7, CblasTrans, CblasTrans, 1},
      {300, 70, 300, CblasNoTrans, CblasTrans, 5}, {70, 300, 300, CblasTrans, CblasNoTrans, 4},
      {70, 300, 300, CblasNoTrans, CblasNoTrans, 0}, {300, 70, 300, CblasTrans, CblasTrans, 2},
  };
  std::uint64_t seed = 10;
  for (const GemmCase& g : cases) {
    const GemmInputs in = inputs(g, seed += 3);
    for (const double alpha : {1.0, 0.17677669529663687}) {
      for (const double beta : {0.0, 1.0}) {
        SCOPED_TRACE(::testing::Message() << g.m << "x" << g.n << "x" << g.k << " ta=" << (g.ta == CblasTrans)
                                          << " tb=" << (g.tb == CblasTrans) << " alpha=" << alpha << " beta=" << beta
                                          << " parts=" << gemm_tiling(g.m, g.n, g.k).parts);
        const std::vector<double> want = reference(g, in, alpha, beta);
        EXPECT_TRUE(all_close("C", run_gemm<double>(g, in, beta, alpha), want, {1e-12, 1e-12}));
        EXPECT_TRUE(all_close("C", run_gemm<float>(g, in, static_cast<float>(beta), static_cast<float>(alpha)), want,
                              {2e-5, 2e-5}));
      }
    }
  }
}

// Float runs AltGrad's own kernel, double OpenBLAS in shape-fixed tiles: both hold.
template <typename Scalar>
void expect_same_bits_on_any_thread_count() {
  for (const GemmCase& g : {kForward, kInputGradient, kWeightGradient, kNarrowLongReduction}) {
    const GemmInputs in = inputs(g, 77);
    const std::vector<Scalar> one = [&] {
      const ScopedThreadCount threads(1);
      return run_gemm<Scalar>(g, in, Scalar{1});
    }();
    for (const int count : {2, 3, 4}) {
      const ScopedThreadCount threads(count);
      EXPECT_TRUE(test_support::bit_identical(one, run_gemm<Scalar>(g, in, Scalar{1})))
          << count << " threads, " << g.m << "x" << g.n << "x" << g.k;
    }
  }
}

TEST(Gemm, BitsDoNotDependOnThreadCount) {
  expect_same_bits_on_any_thread_count<float>();
  expect_same_bits_on_any_thread_count<double>();
}

// Attention calls gemm inside its own parallel loop over heads: the nested call must give the
// bits of a top-level one.
template <typename Scalar>
void expect_same_bits_inside_a_parallel_region() {
  const GemmInputs in = inputs(kWeightGradient, 78);
  const std::vector<Scalar> top = run_gemm<Scalar>(kWeightGradient, in, Scalar{0});
  std::vector<std::vector<Scalar>> nested(4);
  const ScopedThreadCount threads(2);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < nested.size(); ++i) nested[i] = run_gemm<Scalar>(kWeightGradient, in, Scalar{0});
  for (const auto& c : nested) EXPECT_TRUE(test_support::bit_identical(top, c));
}

TEST(Gemm, SameBitsInsideAParallelRegion) {
  expect_same_bits_inside_a_parallel_region<float>();
  expect_same_bits_inside_a_parallel_region<double>();
}

// What the tiling relies on, pinned: the linked OpenBLAS is its OpenMP build, which runs inside
// our parallel regions on the calling thread instead of starting threads of its own.
TEST(OpenBlas, IsTheOpenMpBuild) { EXPECT_EQ(openblas_get_parallel(), 2) << "0 = sequential, 1 = pthreads, 2 = OpenMP"; }

// Why the tiling exists, and proof that the thread-count comparison above catches a reduction
// whose order depends on the thread split: OpenBLAS's own threading, given a whole GEMM, blocks the
// sum differently for different thread counts (OpenBLAS 0.3.21, Debian 12). Which shapes it splits
// depends on the kernel family: Haswell's on every shape here, SkylakeX's on the narrow one only.
TEST(OpenBlas, OwnThreadingChangesTheBitsOfALongReduction) {
  int differing = 0;
  for (const GemmCase& g : {kWeightGradient, kNarrowLongReduction}) {
    const GemmInputs in = inputs(g, 79);
    const std::vector<float> a = converted<float>(in.a), b = converted<float>(in.b);
    const auto blas_threaded = [&](int count) {
      const ScopedThreadCount threads(count);
      std::vector<float> c(static_cast<std::size_t>(g.m * in.ldc));
      cblas_sgemm(CblasRowMajor, g.ta, g.tb, g.m, g.n, g.k, 1.0f, a.data(), in.lda, b.data(), in.ldb, 0.0f, c.data(),
                  in.ldc);
      return c;
    };
    const std::vector<float> one = blas_threaded(1);
    for (const int count : {2, 3, 4}) differing += test_support::bit_identical(one, blas_threaded(count)) ? 0 : 1;
  }
  EXPECT_GT(differing, 0) << "OpenBLAS's threaded sgemm (kernel " << openblas_get_corename()
                          << ") now gives one thread's bits: docs/determinism.md is out of date";
}

}  // namespace
}  // namespace altgrad::ops_test
