// Every kernel of the CUDA backend (ops/cuda/cuda_backend.hpp) on random inputs, against the CPU
// reference kernel of the same name (ops/cpu/<layer>.hpp), as ggml's test-backend-ops holds each
// backend to its CPU one; and each run twice on the GPU, which must give the same bits. Label gpu;
// skipped, with the reason, where the process sees no GPU, unless ALTGRAD_REQUIRE_GPU=1
// (scripts/gpu_check.sh) makes that a failure.
//
// What is compared how:
//   the CPU's bits      where the GPU computes the same operations in the same order
//                       (ops/cuda/*_math.hpp; tests/ops/cuda_math_test.cpp holds the host side):
//                       embedding, norms, GELU, residual, attention, softmax probabilities,
//                       the cross-entropy gradient, the bias gradient
//   FP32 tolerance      where the order or a library function differs: the GEMMs (cuBLASLt),
//                       SwiGLU (CUDA's expf), the cross-entropy loss (CUDA's logf)
//
// Shapes: T not a multiple of 32 (nor of the CPU's 64-key attention blocks), C not a multiple of 64,
// tokens drawn from a few ids so that most repeat, and a T past the CPU GEMM's 256-deep blocks.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backend.hpp"
#include "ops/cpu/attention.hpp"
#include "ops/cpu/embedding.hpp"
#include "ops/cpu/gelu.hpp"
#include "ops/cpu/layernorm.hpp"
#include "ops/cpu/matmul.hpp"
#include "ops/cpu/residual.hpp"
#include "ops/cpu/rmsnorm.hpp"
#include "ops/cpu/softmax_cross_entropy.hpp"
#include "ops/cpu/swiglu.hpp"
#include "ops/cuda/cuda_backend.hpp"
#include "ops/memory.hpp"
#include "ops/test_tensors.hpp"

namespace {

namespace ops = altgrad::ops;
namespace cpu = altgrad::ops::cpu;
using altgrad::ops_test::all_close;
using altgrad::ops_test::bit_identical;
using altgrad::ops_test::converted;
using altgrad::ops_test::random_tokens;
using altgrad::ops_test::random_values;
using altgrad::ops_test::Tensors;
using altgrad::ops_test::Tolerance;
using ops::Buffer;

std::vector<float> random_floats(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return converted<float>(random_values(n, seed, lo, hi));
}

// A forward result with a different summation order or a libm function of CUDA's: about 1e-5
// relative. The GEMMs' gradients sum over more terms, onto stale gradients: looser.
constexpr Tolerance kForward{1e-6, 1e-5};
constexpr Tolerance kGemmForward{2e-5, 1e-5};
constexpr Tolerance kGemmBackward{5e-5, 1e-4};

struct Shape {
  std::size_t B, T, C, NH, V;
};

// T = 37: not a multiple of 32; C = 72: not of 64 (hs = 24). T = 300: attention's products over
// keys and queries cross the CPU GEMM's 256-deep blocks; C = 200 with 8 heads of 25.
const std::vector<Shape> kShapes = {{2, 37, 72, 3, 50}, {1, 300, 200, 8, 1000}};

std::string describe(const Shape& s) {
  return "B = " + std::to_string(s.B) + ", T = " + std::to_string(s.T) + ", C = " + std::to_string(s.C) +
         ", NH = " + std::to_string(s.NH) + ", V = " + std::to_string(s.V);
}

// Tokens from the first 8 ids of V: most positions repeat a token, so the embedding's scatter has
// collisions to order.
std::vector<std::int32_t> repeated_tokens(std::size_t n, std::uint64_t seed) { return random_tokens(n, 8, seed); }

class BackendParity : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      backend_ = ops::cuda::backend();
    } catch (const std::runtime_error& error) {
      const char* required = std::getenv("ALTGRAD_REQUIRE_GPU");
      if (required != nullptr && std::string(required) == "1") FAIL() << error.what();
      GTEST_SKIP() << error.what();
    }
  }

  ops::Memory& memory() { return *backend_.memory; }
  ops::Kernels<float>& gpu() { return *backend_.kernels; }

  template <typename T>
  Buffer<T> upload(const std::vector<T>& host) {
    Buffer<T> device(memory(), host.size());
    ops::upload(memory(), device.span(), std::span<const T>(host));
    return device;
  }
  template <typename T>
  std::vector<T> download(const Buffer<T>& device) {
    std::vector<T> host(device.size());
    ops::download(memory(), std::span<T>(host), device.span());
    return host;
  }

  // run() on the GPU twice: the two must agree bit for bit. Returns the first.
  Tensors<float> run_twice(const std::function<Tensors<float>()>& run) {
    Tensors<float> first = run();
    EXPECT_TRUE(bit_identical(first, run())) << "two runs on the GPU differ";
    return first;
  }

  ops::Backend<float> backend_{};
};

// Tensors compared bit for bit, or within a tolerance, each by name; the names are the keys of `want`.
void expect_bits(const Tensors<float>& got, const Tensors<float>& want, const std::string& where) {
  for (const auto& [name, values] : want) EXPECT_TRUE(bit_identical(got.at(name), values)) << name << ", " << where;
}
void expect_close(const Tensors<float>& got, const Tensors<float>& want, Tolerance tolerance,
                  const std::string& where) {
  for (const auto& [name, values] : want) EXPECT_TRUE(all_close(name, got.at(name), values, tolerance)) << where;
}

// CPU and GPU must throw the same std::invalid_argument message.
template <typename Cpu, typename Gpu>
void expect_same_rejection(Cpu&& on_cpu, Gpu&& on_gpu) {
  std::string cpu_message, gpu_message;
  try {
    on_cpu();
  } catch (const std::invalid_argument& error) {
    cpu_message = error.what();
  }
  try {
    on_gpu();
  } catch (const std::invalid_argument& error) {
    gpu_message = error.what();
  }
  EXPECT_FALSE(cpu_message.empty());
  EXPECT_EQ(gpu_message, cpu_message);
}

TEST_F(BackendParity, Embedding) {
  for (const Shape& s : kShapes) {
    const std::size_t BT = s.B * s.T;
    const std::vector<std::int32_t> tokens = repeated_tokens(BT, s.T);
    const std::vector<float> wte = random_floats(s.V * s.C, 1), wpe = random_floats(s.T * s.C, 2);
    const std::vector<float> dout = random_floats(BT * s.C, 3);
    // Stale gradients: the backward pass adds to them.
    const std::vector<float> dwte0 = random_floats(s.V * s.C, 4), dwpe0 = random_floats(s.T * s.C, 5);

    std::vector<float> out(BT * s.C), dwte = dwte0, dwpe = dwpe0;
    cpu::embedding_forward<float>(out, tokens, wte, wpe, s.B, s.T, s.C, s.V);
    cpu::embedding_backward<float>(dwte, dwpe, dout, tokens, s.B, s.T, s.C, s.V);

    const Tensors<float> got = run_twice([&] {
      auto d_tokens = upload(tokens);
      auto d_wte = upload(wte), d_wpe = upload(wpe), d_dout = upload(dout), d_dwte = upload(dwte0),
           d_dwpe = upload(dwpe0);
      Buffer<float> d_out(memory(), out.size());
      gpu().embedding_forward(d_out.span(), d_tokens.span(), d_wte.span(), d_wpe.span(), s.B, s.T, s.C, s.V);
      gpu().embedding_backward(d_dwte.span(), d_dwpe.span(), d_dout.span(), d_tokens.span(), s.B, s.T, s.C, s.V);
      return Tensors<float>{{"out", download(d_out)}, {"dwte", download(d_dwte)}, {"dwpe", download(d_dwpe)}};
    });
    expect_bits(got, {{"out", out}, {"dwte", dwte}, {"dwpe", dwpe}}, describe(s));
  }
}

TEST_F(BackendParity, Layernorm) {
  for (const Shape& s : kShapes) {
    for (const bool with_bias : {true, false}) {
      const std::size_t N = s.B * s.T, C = s.C;
      const std::vector<float> inp = random_floats(N * C, 10, -2.0, 3.0), weight = random_floats(C, 11, 0.5, 1.5);
      const std::vector<float> bias = with_bias ? random_floats(C, 12) : std::vector<float>();
      const std::vector<float> dout = random_floats(N * C, 13);
      const std::vector<float> dinp0 = random_floats(N * C, 14), dweight0 = random_floats(C, 15);
      const std::vector<float> dbias0 = with_bias ? random_floats(C, 16) : std::vector<float>();

      std::vector<float> out(N * C), mean(N), rstd(N), dinp = dinp0, dweight = dweight0, dbias = dbias0;
      cpu::layernorm_forward<float>(out, mean, rstd, inp, weight, bias, N, C, 1e-5f);
      cpu::layernorm_backward<float>(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);

      const Tensors<float> got = run_twice([&] {
        auto d_inp = upload(inp), d_weight = upload(weight), d_bias = upload(bias), d_dout = upload(dout);
        auto d_dinp = upload(dinp0), d_dweight = upload(dweight0), d_dbias = upload(dbias0);
        Buffer<float> d_out(memory(), N * C), d_mean(memory(), N), d_rstd(memory(), N);
        gpu().layernorm_forward(d_out.span(), d_mean.span(), d_rstd.span(), d_inp.span(), d_weight.span(),
                                d_bias.span(), N, C, 1e-5f);
        gpu().layernorm_backward(d_dinp.span(), d_dweight.span(), d_dbias.span(), d_dout.span(), d_inp.span(),
                                 d_weight.span(), d_mean.span(), d_rstd.span(), N, C);
        return Tensors<float>{{"out", download(d_out)},         {"mean", download(d_mean)},
                              {"rstd", download(d_rstd)},       {"dinp", download(d_dinp)},
                              {"dweight", download(d_dweight)}, {"dbias", download(d_dbias)}};
      });
      expect_bits(
          got, {{"out", out}, {"mean", mean}, {"rstd", rstd}, {"dinp", dinp}, {"dweight", dweight}, {"dbias", dbias}},
          describe(s) + (with_bias ? ", bias" : ", no bias"));
    }
  }
}

TEST_F(BackendParity, Rmsnorm) {
  for (const Shape& s : kShapes) {
    const std::size_t N = s.B * s.T, C = s.C;
    const std::vector<float> inp = random_floats(N * C, 20, -2.0, 3.0), weight = random_floats(C, 21, 0.5, 1.5);
    const std::vector<float> dout = random_floats(N * C, 22);
    const std::vector<float> dinp0 = random_floats(N * C, 23), dweight0 = random_floats(C, 24);

    std::vector<float> out(N * C), rstd(N), dinp = dinp0, dweight = dweight0;
    cpu::rmsnorm_forward<float>(out, rstd, inp, weight, N, C, 1e-5f);
    cpu::rmsnorm_backward<float>(dinp, dweight, dout, inp, weight, rstd, N, C);

    const Tensors<float> got = run_twice([&] {
      auto d_inp = upload(inp), d_weight = upload(weight), d_dout = upload(dout);
      auto d_dinp = upload(dinp0), d_dweight = upload(dweight0);
      Buffer<float> d_out(memory(), N * C), d_rstd(memory(), N);
      gpu().rmsnorm_forward(d_out.span(), d_rstd.span(), d_inp.span(), d_weight.span(), N, C, 1e-5f);
      gpu().rmsnorm_backward(d_dinp.span(), d_dweight.span(), d_dout.span(), d_inp.span(), d_weight.span(),
                             d_rstd.span(), N, C);
      return Tensors<float>{{"out", download(d_out)},
                            {"rstd", download(d_rstd)},
                            {"dinp", download(d_dinp)},
                            {"dweight", download(d_dweight)}};
    });
    expect_bits(got, {{"out", out}, {"rstd", rstd}, {"dinp", dinp}, {"dweight", dweight}}, describe(s));
  }
}

// The backward operands apart from the forward's (a straight-through estimator's copies).
TEST_F(BackendParity, Matmul) {
  for (const Shape& s : kShapes) {
    for (const bool with_bias : {true, false}) {
      const std::size_t N = s.B * s.T, C = s.C, OC = 3 * s.C + 5;
      const std::vector<float> inp = random_floats(N * C, 30), weight = random_floats(OC * C, 31);
      const std::vector<float> bias = with_bias ? random_floats(OC, 32) : std::vector<float>();
      const std::vector<float> dout_dinp = random_floats(N * OC, 33), dout_dweight = random_floats(N * OC, 34);
      const std::vector<float> dout_dbias = random_floats(N * OC, 35), inp_used = random_floats(N * C, 36);
      const std::vector<float> weight_used = random_floats(OC * C, 37);
      const std::vector<float> dinp0 = random_floats(N * C, 38), dweight0 = random_floats(OC * C, 39);
      const std::vector<float> dbias0 = with_bias ? random_floats(OC, 40) : std::vector<float>();

      std::vector<float> out(N * OC), dinp = dinp0, dweight = dweight0, dbias = dbias0;
      cpu::matmul_forward<float>(out, inp, weight, bias, N, C, OC);
      cpu::matmul_backward<float>(
          dinp, dweight, dbias,
          ops::MatmulBackwardOperands<float>{dout_dinp, weight_used, dout_dweight, inp_used, dout_dbias}, N, C, OC);

      const Tensors<float> got = run_twice([&] {
        auto d_inp = upload(inp), d_weight = upload(weight), d_bias = upload(bias);
        auto d_dout_dinp = upload(dout_dinp), d_dout_dweight = upload(dout_dweight), d_dout_dbias = upload(dout_dbias);
        auto d_inp_used = upload(inp_used), d_weight_used = upload(weight_used);
        auto d_dinp = upload(dinp0), d_dweight = upload(dweight0), d_dbias = upload(dbias0);
        Buffer<float> d_out(memory(), N * OC);
        gpu().matmul_forward(d_out.span(), d_inp.span(), d_weight.span(), d_bias.span(), N, C, OC);
        gpu().matmul_backward(
            d_dinp.span(), d_dweight.span(), d_dbias.span(),
            {d_dout_dinp.span(), d_weight_used.span(), d_dout_dweight.span(), d_inp_used.span(), d_dout_dbias.span()},
            N, C, OC);
        return Tensors<float>{{"out", download(d_out)},
                              {"dinp", download(d_dinp)},
                              {"dweight", download(d_dweight)},
                              {"dbias", download(d_dbias)}};
      });
      const std::string where = describe(s) + (with_bias ? ", bias" : ", no bias");
      expect_close(got, {{"out", out}}, kGemmForward, where);
      expect_close(got, {{"dinp", dinp}, {"dweight", dweight}}, kGemmBackward, where);
      expect_bits(got, {{"dbias", dbias}}, where);
    }
  }
}

// The whole forward pass, its two halves (the second on probabilities a caller rewrote), and the
// backward pass with the straight-through estimator's operands.
TEST_F(BackendParity, Attention) {
  for (const Shape& s : kShapes) {
    const ops::AttentionShape shape{s.B, s.T, s.C, s.NH};
    const std::size_t P = s.B * s.NH * s.T * s.T;
    const std::vector<float> qkv = random_floats(s.B * s.T * 3 * s.C, 50, -2.0, 2.0);
    const std::vector<float> rewritten = random_floats(P, 51, 0.0, 1.0);
    const std::vector<float> dout = random_floats(s.B * s.T * s.C, 52);
    const std::vector<float> used_qkv = random_floats(qkv.size(), 53, -2.0, 2.0);

    std::vector<float> out(s.B * s.T * s.C), probs(P), rewritten_out(out.size()), dqkv(qkv.size()), dprobs(P);
    cpu::attention_forward<float>(out, probs, qkv, s.B, s.T, s.C, s.NH);
    cpu::attention_values_forward<float>(rewritten_out, rewritten, qkv, s.B, s.T, s.C, s.NH);
    // The product of probabilities and values read the rewritten ones, the softmax's backward pass the softmax's.
    cpu::attention_backward<float>(dqkv, dprobs, dout, ops::AttentionOperands<float>{used_qkv, rewritten}, probs, s.B,
                                   s.T, s.C, s.NH);

    const Tensors<float> got = run_twice([&] {
      auto d_qkv = upload(qkv), d_rewritten = upload(rewritten), d_dout = upload(dout), d_used_qkv = upload(used_qkv);
      Buffer<float> d_out(memory(), out.size()), d_probs(memory(), P), d_half_probs(memory(), P);
      Buffer<float> d_half_out(memory(), out.size()), d_rewritten_out(memory(), out.size());
      Buffer<float> d_dqkv(memory(), qkv.size()), d_dprobs(memory(), P);
      gpu().attention_forward(d_out.span(), d_probs.span(), d_qkv.span(), shape);
      gpu().attention_probs_forward(d_half_probs.span(), d_qkv.span(), shape);
      gpu().attention_values_forward(d_half_out.span(), d_half_probs.span(), d_qkv.span(), shape);
      gpu().attention_values_forward(d_rewritten_out.span(), d_rewritten.span(), d_qkv.span(), shape);
      gpu().attention_backward(d_dqkv.span(), d_dprobs.span(), d_dout.span(), {d_used_qkv.span(), d_rewritten.span()},
                               d_probs.span(), shape);
      return Tensors<float>{{"out", download(d_out)},
                            {"probs", download(d_probs)},
                            {"probs (half)", download(d_half_probs)},
                            {"out (half)", download(d_half_out)},
                            {"out of rewritten probs", download(d_rewritten_out)},
                            {"dqkv", download(d_dqkv)}};
    });
    expect_bits(got,
                {{"out", out},
                 {"probs", probs},
                 {"probs (half)", probs},
                 {"out (half)", out},
                 {"out of rewritten probs", rewritten_out},
                 {"dqkv", dqkv}},
                describe(s));
  }
}

// In place as well (out = inp), as the CPU's allows.
TEST_F(BackendParity, Gelu) {
  for (const Shape& s : kShapes) {
    const std::size_t n = s.B * s.T * 4 * s.C;
    const std::vector<float> inp = random_floats(n, 60, -6.0, 6.0), dout = random_floats(n, 61);
    std::vector<float> out(n), dinp(n);
    cpu::gelu_forward<float>(out, inp);
    cpu::gelu_backward<float>(dinp, inp, dout);

    const Tensors<float> got = run_twice([&] {
      auto d_inp = upload(inp), d_dout = upload(dout), d_in_place = upload(inp);
      Buffer<float> d_out(memory(), n), d_dinp(memory(), n);
      gpu().gelu_forward(d_out.span(), d_inp.span());
      gpu().gelu_backward(d_dinp.span(), d_inp.span(), d_dout.span());
      gpu().gelu_forward(d_in_place.span(), d_in_place.span());
      return Tensors<float>{
          {"out", download(d_out)}, {"dinp", download(d_dinp)}, {"out in place", download(d_in_place)}};
    });
    expect_bits(got, {{"out", out}, {"dinp", dinp}, {"out in place", out}}, describe(s));
  }
}

TEST_F(BackendParity, Swiglu) {
  for (const Shape& s : kShapes) {
    const std::size_t N = s.B * s.T, H = 2 * s.C + 3;
    const std::vector<float> inp = random_floats(N * 2 * H, 70, -8.0, 8.0), dout = random_floats(N * H, 71);
    std::vector<float> out(N * H), dinp(N * 2 * H);
    cpu::swiglu_forward<float>(out, inp, N, H);
    cpu::swiglu_backward<float>(dinp, inp, dout, N, H);

    const Tensors<float> got = run_twice([&] {
      auto d_inp = upload(inp), d_dout = upload(dout);
      Buffer<float> d_out(memory(), N * H), d_dinp(memory(), N * 2 * H);
      gpu().swiglu_forward(d_out.span(), d_inp.span(), N, H);
      gpu().swiglu_backward(d_dinp.span(), d_inp.span(), d_dout.span(), N, H);
      return Tensors<float>{{"out", download(d_out)}, {"dinp", download(d_dinp)}};
    });
    expect_close(got, {{"out", out}, {"dinp", dinp}}, kForward, describe(s));
  }
}

// Into a third buffer, and in place (x += f(x)).
TEST_F(BackendParity, Residual) {
  for (const Shape& s : kShapes) {
    const std::size_t n = s.B * s.T * s.C;
    const std::vector<float> a = random_floats(n, 80), b = random_floats(n, 81);
    std::vector<float> out(n);
    cpu::residual_forward<float>(out, a, b);

    const Tensors<float> got = run_twice([&] {
      auto d_a = upload(a), d_b = upload(b), d_in_place = upload(a);
      Buffer<float> d_out(memory(), n);
      gpu().residual_forward(d_out.span(), d_a.span(), d_b.span());
      gpu().residual_forward(d_in_place.span(), d_in_place.span(), d_b.span());
      return Tensors<float>{{"out", download(d_out)}, {"out in place", download(d_in_place)}};
    });
    expect_bits(got, {{"out", out}, {"out in place", out}}, describe(s));
  }
}

TEST_F(BackendParity, SoftmaxCrossEntropy) {
  for (const Shape& s : kShapes) {
    const std::size_t N = s.B * s.T, V = s.V;
    const std::vector<float> logits = random_floats(N * V, 90, -20.0, 20.0);
    const std::vector<std::int32_t> targets = random_tokens(N, V, 91);
    const std::vector<float> dlosses(N, 1.0f / static_cast<float>(N)), dlogits0 = random_floats(N * V, 92);
    std::vector<float> losses(N), probs(N * V), dlogits = dlogits0;
    cpu::softmax_cross_entropy_forward<float>(losses, probs, logits, targets, N, V);
    cpu::softmax_cross_entropy_backward<float>(dlogits, dlosses, probs, targets, N, V);

    const Tensors<float> got = run_twice([&] {
      auto d_logits = upload(logits), d_dlosses = upload(dlosses), d_dlogits = upload(dlogits0);
      auto d_targets = upload(targets);
      Buffer<float> d_losses(memory(), N), d_probs(memory(), N * V);
      gpu().softmax_cross_entropy_forward(d_losses.span(), d_probs.span(), d_logits.span(), d_targets.span(), N, V);
      gpu().softmax_cross_entropy_backward(d_dlogits.span(), d_dlosses.span(), d_probs.span(), d_targets.span(), N, V);
      return Tensors<float>{
          {"losses", download(d_losses)}, {"probs", download(d_probs)}, {"dlogits", download(d_dlogits)}};
    });
    expect_bits(got, {{"probs", probs}, {"dlogits", dlogits}}, describe(s));
    expect_close(got, {{"losses", losses}}, kForward, describe(s));
  }
}

// The checks at kernel entry: the same std::invalid_argument, word for word.
TEST_F(BackendParity, RejectsWhatTheCpuRejects) {
  const Shape s = kShapes.front();
  const std::size_t BT = s.B * s.T;
  std::vector<std::int32_t> tokens = repeated_tokens(BT, 100);
  tokens[BT - 2] = static_cast<std::int32_t>(s.V);  // one past the vocabulary
  tokens[BT - 1] = -1;
  const std::vector<float> wte(s.V * s.C), wpe(s.T * s.C);
  std::vector<float> out(BT * s.C);
  auto d_tokens = upload(tokens);
  auto d_wte = upload(wte), d_wpe = upload(wpe), d_out = upload(out);
  expect_same_rejection(
      [&] { cpu::embedding_forward<float>(out, tokens, wte, wpe, s.B, s.T, s.C, s.V); },
      [&] { gpu().embedding_forward(d_out.span(), d_tokens.span(), d_wte.span(), d_wpe.span(), s.B, s.T, s.C, s.V); });
  std::vector<float> losses(BT), probs(BT * s.V), logits(BT * s.V);
  auto d_losses = upload(losses), d_probs = upload(probs), d_logits = upload(logits);
  expect_same_rejection([&] { cpu::softmax_cross_entropy_forward<float>(losses, probs, logits, tokens, BT, s.V); },
                        [&] {
                          gpu().softmax_cross_entropy_forward(d_losses.span(), d_probs.span(), d_logits.span(),
                                                              d_tokens.span(), BT, s.V);
                        });
  // A wrong size, a head count that does not divide C, a zero GEMM dimension.
  expect_same_rejection([&] { cpu::gelu_forward<float>(std::span<float>(out).first(3), wte); },
                        [&] { gpu().gelu_forward(d_out.span().first(3), d_wte.span()); });
  std::vector<float> qkv(BT * 3 * s.C), attention_probs(s.B * 5 * s.T * s.T);
  auto d_qkv = upload(qkv), d_attention_probs = upload(attention_probs);
  expect_same_rejection(
      [&] { cpu::attention_forward<float>(out, attention_probs, qkv, s.B, s.T, s.C, 5); },
      [&] {
        gpu().attention_forward(d_out.span(), d_attention_probs.span(), d_qkv.span(), {s.B, s.T, s.C, 5});
      });
  expect_same_rejection([&] { cpu::matmul_forward<float>({}, {}, {}, {}, 0, s.C, s.C); },
                        [&] { gpu().matmul_forward({}, {}, {}, {}, 0, s.C, s.C); });
}

}  // namespace
