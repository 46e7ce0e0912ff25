// The CUDA kernels' per-element and per-row arithmetic (src/ops/cuda/*_math.hpp, lane_sum.hpp,
// gemm_order.hpp, float_exp.hpp), compiled for the host, against the CPU kernels' outputs: no GPU
// needed. Each function is written once for a host and a GPU thread, and the row functions once
// for a row group (a GPU's 16 lanes, or SerialRow here, which does the same additions in the same
// order), so agreement here is agreement of the GPU's arithmetic with the CPU's, but for what only a
// GPU can show (the lanes' shuffles, CUDA's own expf and logf): tests/ops/backend_parity_test.cpp.
//
// Bit for bit throughout, where the CPU kernel does the same operations in the same order. The
// exceptions are none on the host: swiglu_math.hpp and the loss of softmax_math.hpp call libm's
// expf and logf here, as the CPU kernels do; on the GPU those are CUDA's (within 2 and 1 ulp), and
// the parity test allows for that.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "ops/cpu/attention.hpp"
#include "ops/cpu/float_gemm.hpp"
#include "ops/cpu/gelu.hpp"
#include "ops/cpu/layernorm.hpp"
#include "ops/cpu/rmsnorm.hpp"
#include "ops/cpu/softmax_cross_entropy.hpp"
#include "ops/cpu/swiglu.hpp"
#include "ops/cpu/vector_math.hpp"
#include "ops/cuda/attention_math.hpp"
#include "ops/cuda/float_exp.hpp"
#include "ops/cuda/gelu_math.hpp"
#include "ops/cuda/gemm_order.hpp"
#include "ops/cuda/lane_sum.hpp"
#include "ops/cuda/layernorm_math.hpp"
#include "ops/cuda/rmsnorm_math.hpp"
#include "ops/cuda/softmax_math.hpp"
#include "ops/cuda/swiglu_math.hpp"
#include "ops/test_tensors.hpp"

namespace {

namespace cpu = altgrad::ops::cpu;
namespace cuda = altgrad::ops::cuda;
using altgrad::ops_test::bit_identical;
using altgrad::ops_test::converted;
using altgrad::ops_test::random_tokens;
using altgrad::ops_test::random_values;

std::vector<float> random_floats(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return converted<float>(random_values(n, seed, lo, hi));
}

// ---- Elementwise ----

// Every 1021st float bit pattern (4.2 million, all signs and exponents) and the clamp's edges.
TEST(CudaMath, ExpFloatIsTheCpusExpBitForBit) {
  std::size_t checked = 0;
  const auto expect_same = [&](float x) {
    const float want = cpu::exp_float(x), got = cuda::exp_float(x);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "x = " << x;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << "x = " << x;
    }
    ++checked;
  };
  for (std::uint64_t bits = 0; bits <= 0xFFFF'FFFFu; bits += 1021) {
    expect_same(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  }
  for (const float edge : {-87.3f, std::nextafter(-87.3f, 0.0f), std::nextafter(-87.3f, -100.0f), 88.3f,
                           std::nextafter(88.3f, 100.0f), 0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    expect_same(edge);
  }
  EXPECT_GT(checked, std::size_t{4'000'000});
}

// The constants written out bit for bit are the CPU's expressions (ops/cpu/gelu.cpp).
TEST(CudaMath, GeluConstantsAreTheCpus) {
  EXPECT_EQ(cuda::kGeluInvSqrt2, 1.0f / std::numbers::sqrt2_v<float>);
  EXPECT_EQ(cuda::kGeluInvSqrt2Pi, std::numbers::inv_sqrtpi_v<float> / std::numbers::sqrt2_v<float>);
}

// Both the CPU's vector body and its scalar tail (n not a multiple of 16), both tails of erf, and
// the inputs where e^(−x²/2) underflows to the exact zero.
TEST(CudaMath, GeluIsTheCpusFloatKernelBitForBit) {
  std::vector<float> inp = random_floats(10'007, 1, -6.0, 6.0);
  for (const float x : {0.0f, -0.0f, 1.0f, -1.0f, 13.3f, -13.3f, 14.0f, -14.0f, 30.0f, -30.0f, 1e-20f, -1e-20f})
    inp.push_back(x);
  const std::vector<float> dout = random_floats(inp.size(), 2);
  std::vector<float> out(inp.size()), dinp(inp.size());
  cpu::gelu_forward<float>(out, inp);
  cpu::gelu_backward<float>(dinp, inp, dout);
  std::vector<float> got_out(inp.size()), got_dinp(inp.size());
  for (std::size_t i = 0; i < inp.size(); ++i) {
    got_out[i] = cuda::gelu_value(inp[i]);
    got_dinp[i] = cuda::gelu_gradient(inp[i], dout[i]);
  }
  EXPECT_TRUE(bit_identical(got_out, out));
  EXPECT_TRUE(bit_identical(got_dinp, dinp));
}

TEST(CudaMath, SwigluIsTheCpusKernelBitForBitOnTheHost) {
  const std::size_t N = 7, H = 37;
  std::vector<float> inp = random_floats(N * 2 * H, 3, -12.0, 12.0);
  inp[0] = -100.0f;  // e^(−a) overflows: sigmoid 0, not NaN
  const std::vector<float> dout = random_floats(N * H, 4);
  std::vector<float> out(N * H), dinp(N * 2 * H);
  cpu::swiglu_forward<float>(out, inp, N, H);
  cpu::swiglu_backward<float>(dinp, inp, dout, N, H);
  std::vector<float> got_out(N * H), got_dinp(N * 2 * H);
  for (std::size_t row = 0; row < N; ++row) {
    for (std::size_t i = 0; i < H; ++i) {
      const float a = inp[row * 2 * H + i], b = inp[row * 2 * H + H + i];
      got_out[row * H + i] = cuda::swiglu_value(a, b);
      const cuda::SwigluGradient g = cuda::swiglu_gradient(a, b, dout[row * H + i]);
      got_dinp[row * 2 * H + i] = g.da;
      got_dinp[row * 2 * H + H + i] = g.db;
    }
  }
  EXPECT_TRUE(bit_identical(got_out, out));
  EXPECT_TRUE(bit_identical(got_dinp, dinp));
}

// ---- Row sums and products in the CPU's order ----

// Lengths around the 16 lanes and the CPU's vector widths, and a vocabulary's.
const std::vector<std::size_t> kRowLengths = {1,  2,  7,  8,  9,  15,  16,  17,   31,
                                              32, 33, 63, 64, 65, 100, 768, 1001, 50'257};

TEST(CudaMath, SerialRowSumsInTheCpusLaneOrder) {
  for (const std::size_t n : kRowLengths) {
    // Magnitudes over 12 decades, so that the order of the additions shows in the bits.
    std::vector<float> x = random_floats(n, 10 + n);
    const std::vector<float> scale = random_floats(n, 20 + n, -6.0, 6.0);
    for (std::size_t i = 0; i < n; ++i) x[i] *= std::pow(10.0f, scale[i]);
    const float want = cpu::lane_sum(n, [&](auto at) { return at(x.data()); });
    const float got = cuda::SerialRow{}.sum(n, [&](std::size_t i) { return x[i]; });
    EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << "n = " << n;
  }
}

// float_gemm's order: depth blocks of 256 by fused multiply-adds, alpha applied per block (k = 600
// is three blocks), against the CPU's GEMM on the same operands.
TEST(CudaMath, GemmOrderDotIsTheCpuGemmsSum) {
  const std::size_t m = 3, n = 5, k = 600;
  const std::vector<float> a = random_floats(m * k, 30), b = random_floats(n * k, 31);
  for (const float alpha : {1.0f, 0.37f}) {
    std::vector<float> c(m * n);
    cpu::float_gemm(false, true, m, n, k, alpha, a.data(), k, b.data(), k, 0.0f, c.data(), n);
    std::vector<float> got(m * n);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        got[i * n + j] = cuda::gemm_order_dot(
            0, k, alpha, [&](std::size_t p) { return a[i * k + p]; }, [&](std::size_t p) { return b[j * k + p]; });
      }
    }
    EXPECT_TRUE(bit_identical(got, c)) << "alpha = " << alpha;
  }
}

// ---- Norms: the row functions over SerialRow, the column sums in row order ----

struct NormCase {
  std::size_t N, C;
  std::vector<float> inp, weight, bias, dout;
};

NormCase make_norm_case(std::size_t N, std::size_t C, std::uint64_t seed) {
  // An offset on the inputs, so that the mean's subtraction matters.
  std::vector<float> inp = random_floats(N * C, seed, -2.0, 3.0);
  return {N, C, inp, random_floats(C, seed + 1, 0.5, 1.5), random_floats(C, seed + 2), random_floats(N * C, seed + 3)};
}

// C not a multiple of 16 or 64, and a single channel.
const std::vector<std::size_t> kChannels = {1, 13, 16, 100, 200};

TEST(CudaMath, LayernormRowsAreTheCpusBitForBit) {
  for (const std::size_t C : kChannels) {
    for (const bool with_bias : {true, false}) {
      const NormCase k = make_norm_case(5, C, C);
      const std::span<const float> bias = with_bias ? std::span<const float>(k.bias) : std::span<const float>();
      std::vector<float> out(k.N * C), mean(k.N), rstd(k.N);
      cpu::layernorm_forward<float>(out, mean, rstd, k.inp, k.weight, bias, k.N, C, 1e-5f);
      // Stale gradients: the backward pass adds to them.
      std::vector<float> dinp = random_floats(k.N * C, 40), dweight = random_floats(C, 41),
                         dbias = random_floats(C, 42);
      std::vector<float> got_dinp = dinp, got_dweight = dweight, got_dbias = dbias;
      cpu::layernorm_backward<float>(dinp, dweight, with_bias ? std::span<float>(dbias) : std::span<float>(), k.dout,
                                     k.inp, k.weight, mean, rstd, k.N, C);

      std::vector<float> got_out(k.N * C), got_mean(k.N), got_rstd(k.N);
      for (std::size_t row = 0; row < k.N; ++row) {
        cuda::layernorm_row_forward(cuda::SerialRow{}, got_out.data() + row * C, &got_mean[row], &got_rstd[row],
                                    k.inp.data() + row * C, k.weight.data(), with_bias ? k.bias.data() : nullptr, C,
                                    1e-5f);
        cuda::layernorm_row_backward(cuda::SerialRow{}, got_dinp.data() + row * C, k.dout.data() + row * C,
                                     k.inp.data() + row * C, k.weight.data(), mean[row], rstd[row], C);
      }
      for (std::size_t c = 0; c < C; ++c) {
        for (std::size_t row = 0; row < k.N; ++row) {
          const float dy = k.dout[row * C + c];
          got_dweight[c] += cuda::layernorm_dweight_term(k.inp[row * C + c], mean[row], rstd[row], dy);
          if (with_bias) got_dbias[c] += dy;
        }
      }
      const std::string where = "C = " + std::to_string(C) + (with_bias ? ", bias" : ", no bias");
      EXPECT_TRUE(bit_identical(got_out, out)) << where;
      EXPECT_TRUE(bit_identical(got_mean, mean)) << where;
      EXPECT_TRUE(bit_identical(got_rstd, rstd)) << where;
      EXPECT_TRUE(bit_identical(got_dinp, dinp)) << where;
      EXPECT_TRUE(bit_identical(got_dweight, dweight)) << where;
      EXPECT_TRUE(bit_identical(got_dbias, dbias)) << where;
    }
  }
}

TEST(CudaMath, RmsnormRowsAreTheCpusBitForBit) {
  for (const std::size_t C : kChannels) {
    const NormCase k = make_norm_case(5, C, 100 + C);
    std::vector<float> out(k.N * C), rstd(k.N);
    cpu::rmsnorm_forward<float>(out, rstd, k.inp, k.weight, k.N, C, 1e-5f);
    std::vector<float> dinp = random_floats(k.N * C, 50), dweight = random_floats(C, 51);
    std::vector<float> got_dinp = dinp, got_dweight = dweight;
    cpu::rmsnorm_backward<float>(dinp, dweight, k.dout, k.inp, k.weight, rstd, k.N, C);

    std::vector<float> got_out(k.N * C), got_rstd(k.N);
    for (std::size_t row = 0; row < k.N; ++row) {
      cuda::rmsnorm_row_forward(cuda::SerialRow{}, got_out.data() + row * C, &got_rstd[row], k.inp.data() + row * C,
                                k.weight.data(), C, 1e-5f);
      cuda::rmsnorm_row_backward(cuda::SerialRow{}, got_dinp.data() + row * C, k.dout.data() + row * C,
                                 k.inp.data() + row * C, k.weight.data(), rstd[row], C);
    }
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t row = 0; row < k.N; ++row) {
        got_dweight[c] += cuda::rmsnorm_dweight_term(k.inp[row * C + c], rstd[row], k.dout[row * C + c]);
      }
    }
    const std::string where = "C = " + std::to_string(C);
    EXPECT_TRUE(bit_identical(got_out, out)) << where;
    EXPECT_TRUE(bit_identical(got_rstd, rstd)) << where;
    EXPECT_TRUE(bit_identical(got_dinp, dinp)) << where;
    EXPECT_TRUE(bit_identical(got_dweight, dweight)) << where;
  }
}

// ---- Softmax and cross-entropy ----

TEST(CudaMath, SoftmaxCrossEntropyIsTheCpusBitForBitOnTheHost) {
  for (const std::size_t V : kRowLengths) {
    const std::size_t N = 3;
    // Wide logits: probabilities that underflow, and a row maximum far from the others.
    const std::vector<float> logits = random_floats(N * V, V, -30.0, 30.0);
    const std::vector<std::int32_t> targets = random_tokens(N, V, V + 1);
    const std::vector<float> dlosses = random_floats(N, V + 2);
    std::vector<float> losses(N), probs(N * V);
    cpu::softmax_cross_entropy_forward<float>(losses, probs, logits, targets, N, V);
    std::vector<float> dlogits = random_floats(N * V, V + 3);
    std::vector<float> got_dlogits = dlogits;
    cpu::softmax_cross_entropy_backward<float>(dlogits, dlosses, probs, targets, N, V);

    std::vector<float> got_losses(N), got_probs(N * V);
    for (std::size_t row = 0; row < N; ++row) {
      const float* z = logits.data() + row * V;
      const cuda::SoftmaxStats stats = cuda::softmax_row(cuda::SerialRow{}, z, got_probs.data() + row * V, V);
      got_losses[row] = cuda::cross_entropy_loss(stats, z[targets[row]]);
      for (std::size_t v = 0; v < V; ++v) {
        got_dlogits[row * V + v] += cuda::cross_entropy_gradient(
            got_probs[row * V + v], v == static_cast<std::size_t>(targets[row]), dlosses[row]);
      }
    }
    const std::string where = "V = " + std::to_string(V);
    EXPECT_TRUE(bit_identical(got_probs, probs)) << where;
    EXPECT_TRUE(bit_identical(got_losses, losses)) << where;
    EXPECT_TRUE(bit_identical(got_dlogits, dlogits)) << where;
  }
}

// ---- Attention: every element as the GPU's kernels compute it, on the host ----

struct AttentionCase {
  std::size_t B, T, C, NH;
};

// The probabilities: scores, then the softmax of each row in place (attention.cu's first two kernels).
std::vector<float> emulate_probs(const std::vector<float>& qkv, const AttentionCase& d) {
  const std::size_t hs = d.C / d.NH, C3 = 3 * d.C;
  const float scale = cuda::attention_scale(hs);
  std::vector<float> probs(d.B * d.NH * d.T * d.T);
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t h = 0; h < d.NH; ++h) {
      float* p = probs.data() + (b * d.NH + h) * d.T * d.T;
      for (std::size_t t = 0; t < d.T; ++t) {
        for (std::size_t s = 0; s <= t; ++s) {
          p[t * d.T + s] = cuda::attention_score(qkv.data() + (b * d.T + t) * C3 + h * hs,
                                                 qkv.data() + (b * d.T + s) * C3 + d.C + h * hs, hs, scale);
        }
        cuda::softmax_row(cuda::SerialRow{}, p + t * d.T, p + t * d.T, t + 1);
      }
    }
  }
  return probs;
}

std::vector<float> emulate_values(const std::vector<float>& probs, const std::vector<float>& qkv,
                                  const AttentionCase& d) {
  const std::size_t hs = d.C / d.NH, C3 = 3 * d.C;
  std::vector<float> out(d.B * d.T * d.C);
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t t = 0; t < d.T; ++t) {
      for (std::size_t c = 0; c < d.C; ++c) {
        const std::size_t h = c / hs;
        out[(b * d.T + t) * d.C + c] = cuda::attention_value(probs.data() + ((b * d.NH + h) * d.T + t) * d.T,
                                                             qkv.data() + b * d.T * C3 + 2 * d.C + c, C3, t, d.T);
      }
    }
  }
  return out;
}

// attention.cu's backward kernels: dprobs, the softmax's backward rows, dq, then dk and dv.
std::vector<float> emulate_backward(const std::vector<float>& dout, const std::vector<float>& used_qkv,
                                    const std::vector<float>& used_probs, const std::vector<float>& probs,
                                    const AttentionCase& d) {
  const std::size_t hs = d.C / d.NH, C3 = 3 * d.C, TT = d.T * d.T;
  const float scale = cuda::attention_scale(hs);
  std::vector<float> dscores(d.B * d.NH * TT), dqkv(d.B * d.T * C3);
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t h = 0; h < d.NH; ++h) {
      float* ds = dscores.data() + (b * d.NH + h) * TT;
      for (std::size_t t = 0; t < d.T; ++t) {
        for (std::size_t s = 0; s <= t; ++s) {
          ds[t * d.T + s] = cuda::attention_dprob(dout.data() + (b * d.T + t) * d.C + h * hs,
                                                  used_qkv.data() + (b * d.T + s) * C3 + 2 * d.C + h * hs, hs);
        }
        cuda::attention_softmax_backward_row(cuda::SerialRow{}, ds + t * d.T,
                                             probs.data() + (b * d.NH + h) * TT + t * d.T, t, d.T, scale);
      }
    }
  }
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t t = 0; t < d.T; ++t) {
      for (std::size_t c = 0; c < d.C; ++c) {
        const std::size_t h = c / hs, column = (b * d.NH + h) * TT + t;
        float* row = dqkv.data() + (b * d.T + t) * C3;
        row[c] = cuda::attention_dquery(dscores.data() + ((b * d.NH + h) * d.T + t) * d.T,
                                        used_qkv.data() + b * d.T * C3 + d.C + c, C3, t, d.T);
        row[d.C + c] =
            cuda::attention_key_gradient(dscores.data() + column, d.T, used_qkv.data() + b * d.T * C3 + c, C3, t);
        row[2 * d.C + c] =
            cuda::attention_key_gradient(used_probs.data() + column, d.T, dout.data() + b * d.T * d.C + c, d.C, t);
      }
    }
  }
  return dqkv;
}

// T not a multiple of the CPU's 64-key blocks; T past its 256-deep GEMM blocks (products over keys
// and over queries in several depth blocks); a head of 300 (scores in two depth blocks).
const std::vector<AttentionCase> kAttentionCases = {{2, 70, 24, 3}, {1, 300, 8, 2}, {1, 5, 600, 2}};

TEST(CudaMath, AttentionForwardIsTheCpusBitForBit) {
  for (const AttentionCase& d : kAttentionCases) {
    const std::vector<float> qkv = random_floats(d.B * d.T * 3 * d.C, d.T, -2.0, 2.0);
    std::vector<float> out(d.B * d.T * d.C), probs(d.B * d.NH * d.T * d.T);
    cpu::attention_forward<float>(out, probs, qkv, d.B, d.T, d.C, d.NH);
    const std::vector<float> got_probs = emulate_probs(qkv, d);
    const std::string where = "T = " + std::to_string(d.T) + ", C = " + std::to_string(d.C);
    EXPECT_TRUE(bit_identical(got_probs, probs)) << where;
    EXPECT_TRUE(bit_identical(emulate_values(got_probs, qkv, d), out)) << where;

    // The second half on probabilities a caller rewrote, masked entries included: the sums read
    // what the CPU's read.
    const std::vector<float> rewritten = random_floats(probs.size(), d.T + 1);
    std::vector<float> rewritten_out(out.size());
    cpu::attention_values_forward<float>(rewritten_out, rewritten, qkv, d.B, d.T, d.C, d.NH);
    EXPECT_TRUE(bit_identical(emulate_values(rewritten, qkv, d), rewritten_out)) << where << ", rewritten probs";
  }
}

// With the straight-through estimator's operands: the products read rewritten copies of qkv and
// of the probabilities (every entry rewritten), the softmax's backward pass the probabilities.
TEST(CudaMath, AttentionBackwardIsTheCpusBitForBit) {
  for (const AttentionCase& d : kAttentionCases) {
    const std::vector<float> qkv = random_floats(d.B * d.T * 3 * d.C, 2 * d.T, -2.0, 2.0);
    const std::vector<float> dout = random_floats(d.B * d.T * d.C, 2 * d.T + 1);
    std::vector<float> out(d.B * d.T * d.C), probs(d.B * d.NH * d.T * d.T);
    cpu::attention_forward<float>(out, probs, qkv, d.B, d.T, d.C, d.NH);
    const std::vector<float> used_qkv = random_floats(qkv.size(), 2 * d.T + 2, -2.0, 2.0);
    const std::vector<float> used_probs = random_floats(probs.size(), 2 * d.T + 3, 0.0, 1.0);
    std::vector<float> dqkv(qkv.size()), dprobs(probs.size());
    cpu::attention_backward<float>(dqkv, dprobs, dout, altgrad::ops::AttentionOperands<float>{used_qkv, used_probs},
                                   probs, d.B, d.T, d.C, d.NH);
    const std::string where = "T = " + std::to_string(d.T) + ", C = " + std::to_string(d.C);
    EXPECT_TRUE(bit_identical(emulate_backward(dout, used_qkv, used_probs, probs, d), dqkv)) << where;
  }
}

}  // namespace
