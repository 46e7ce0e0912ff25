#pragma once
// Each kernel's argument checks, one function per kernel of ops/kernels.hpp, called at entry by the
// CPU kernel (ops/cpu/<layer>.cpp) and the CUDA launcher (ops/cuda/<layer>.cu) of that name, so
// that both backends throw the same message for the same mistake (tests/ops/backend_parity_test.cpp).
// They take buffer sizes, never buffers: they serve float and double spans alike, and spans of
// device memory, whose elements the host may not read. The one check that reads elements, of token
// ids and targets (require_indices_below), is left to each backend: it follows these.
//
// Shapes as in ops/kernels.hpp: N rows, C channels, OC output features, H hidden features, B·T
// positions, NH heads, V vocabulary. The checks run in the order written, and the first that fails
// throws std::invalid_argument (ops/argument_checks.hpp).
#include <cstddef>
#include <stdexcept>
#include <string>

#include "ops/argument_checks.hpp"

namespace altgrad::ops {

// embedding: out (B, T, C), tokens (B, T), wte (V, C), wpe (T, C).
inline void check_embedding_forward(std::size_t out, std::size_t tokens, std::size_t wte, std::size_t wpe,
                                    std::size_t B, std::size_t T, std::size_t C, std::size_t V) {
  constexpr const char* kernel = "embedding_forward";
  require_size(kernel, "out", out, B * T * C);
  require_size(kernel, "tokens", tokens, B * T);
  require_size(kernel, "wte", wte, V * C);
  require_size(kernel, "wpe", wpe, T * C);
}

inline void check_embedding_backward(std::size_t dwte, std::size_t dwpe, std::size_t dout, std::size_t tokens,
                                     std::size_t B, std::size_t T, std::size_t C, std::size_t V) {
  constexpr const char* kernel = "embedding_backward";
  require_size(kernel, "dwte", dwte, V * C);
  require_size(kernel, "dwpe", dwpe, T * C);
  require_size(kernel, "dout", dout, B * T * C);
  require_size(kernel, "tokens", tokens, B * T);
}

// layernorm: out, inp (N, C); mean, rstd (N); weight, bias (C), bias optional (empty).
inline void check_layernorm_forward(std::size_t out, std::size_t mean, std::size_t rstd, std::size_t inp,
                                    std::size_t weight, std::size_t bias, std::size_t N, std::size_t C) {
  constexpr const char* kernel = "layernorm_forward";
  require_positive(kernel, "C", C);
  require_size(kernel, "out", out, N * C);
  require_size(kernel, "mean", mean, N);
  require_size(kernel, "rstd", rstd, N);
  require_size(kernel, "inp", inp, N * C);
  require_size(kernel, "weight", weight, C);
  require_size_or_empty(kernel, "bias", bias, C);
}

inline void check_layernorm_backward(std::size_t dinp, std::size_t dweight, std::size_t dbias, std::size_t dout,
                                     std::size_t inp, std::size_t weight, std::size_t mean, std::size_t rstd,
                                     std::size_t N, std::size_t C) {
  constexpr const char* kernel = "layernorm_backward";
  require_positive(kernel, "C", C);
  require_size(kernel, "dinp", dinp, N * C);
  require_size(kernel, "dweight", dweight, C);
  require_size_or_empty(kernel, "dbias", dbias, C);
  require_size(kernel, "dout", dout, N * C);
  require_size(kernel, "inp", inp, N * C);
  require_size(kernel, "weight", weight, C);
  require_size(kernel, "mean", mean, N);
  require_size(kernel, "rstd", rstd, N);
}

// rmsnorm: out, inp (N, C); rstd (N); weight (C).
inline void check_rmsnorm_forward(std::size_t out, std::size_t rstd, std::size_t inp, std::size_t weight,
                                  std::size_t N, std::size_t C) {
  constexpr const char* kernel = "rmsnorm_forward";
  require_positive(kernel, "C", C);
  require_size(kernel, "out", out, N * C);
  require_size(kernel, "rstd", rstd, N);
  require_size(kernel, "inp", inp, N * C);
  require_size(kernel, "weight", weight, C);
}

inline void check_rmsnorm_backward(std::size_t dinp, std::size_t dweight, std::size_t dout, std::size_t inp,
                                   std::size_t weight, std::size_t rstd, std::size_t N, std::size_t C) {
  constexpr const char* kernel = "rmsnorm_backward";
  require_positive(kernel, "C", C);
  require_size(kernel, "dinp", dinp, N * C);
  require_size(kernel, "dweight", dweight, C);
  require_size(kernel, "dout", dout, N * C);
  require_size(kernel, "inp", inp, N * C);
  require_size(kernel, "weight", weight, C);
  require_size(kernel, "rstd", rstd, N);
}

// matmul: out (N, OC), inp (N, C), weight (OC, C), bias (OC) optional (empty). Every dimension is
// a positive BLAS integer (int), which is what a GEMM of either backend takes.
namespace kernel_arguments_detail {

inline void check_matmul_dimensions(const char* kernel, std::size_t N, std::size_t C, std::size_t OC) {
  require_blas_dimension(kernel, "N", N);
  require_blas_dimension(kernel, "C", C);
  require_blas_dimension(kernel, "OC", OC);
}

}  // namespace kernel_arguments_detail

inline void check_matmul_forward(std::size_t out, std::size_t inp, std::size_t weight, std::size_t bias, std::size_t N,
                                 std::size_t C, std::size_t OC) {
  constexpr const char* kernel = "matmul_forward";
  kernel_arguments_detail::check_matmul_dimensions(kernel, N, C, OC);
  require_size(kernel, "out", out, N * OC);
  require_size(kernel, "inp", inp, N * C);
  require_size(kernel, "weight", weight, OC * C);
  require_size_or_empty(kernel, "bias", bias, OC);
}

// The sizes of MatmulBackwardOperands' buffers (ops/operands.hpp) in its order; dout_dbias is
// checked only where there is a dbias.
inline void check_matmul_backward(std::size_t dinp, std::size_t dweight, std::size_t dbias, std::size_t dout_dinp,
                                  std::size_t weight, std::size_t dout_dweight, std::size_t inp,
                                  std::size_t dout_dbias, std::size_t N, std::size_t C, std::size_t OC) {
  constexpr const char* kernel = "matmul_backward";
  kernel_arguments_detail::check_matmul_dimensions(kernel, N, C, OC);
  require_size(kernel, "dinp", dinp, N * C);
  require_size(kernel, "dweight", dweight, OC * C);
  require_size_or_empty(kernel, "dbias", dbias, OC);
  require_size(kernel, "dout for dinp", dout_dinp, N * OC);
  require_size(kernel, "dout for dweight", dout_dweight, N * OC);
  require_size(kernel, "inp", inp, N * C);
  require_size(kernel, "weight", weight, OC * C);
  if (dbias != 0) require_size(kernel, "dout for dbias", dout_dbias, N * OC);
}

// attention: out (B, T, C), qkv (B, T, 3C), probs (B, NH, T, T). NH divides C into heads of hs =
// C / NH channels; T, hs, 3C and C are positive BLAS integers (the CPU's GEMM strides), checked
// after the buffers' sizes.
namespace kernel_arguments_detail {

inline void check_heads(const char* kernel, std::size_t C, std::size_t NH) {
  require_positive(kernel, "C", C);
  require_positive(kernel, "NH", NH);
  if (C % NH != 0) {
    throw std::invalid_argument(std::string(kernel) + ": NH = " + std::to_string(NH) +
                                " does not divide C = " + std::to_string(C));
  }
}

inline void check_head_view(const char* kernel, std::size_t T, std::size_t C, std::size_t NH) {
  require_blas_dimension(kernel, "T", T);
  require_blas_dimension(kernel, "hs", C / NH);
  require_blas_dimension(kernel, "3C", 3 * C);
  require_blas_dimension(kernel, "C", C);
}

// A forward call that writes out from probs and qkv (attention_forward, attention_values_forward).
inline void check_attention_outputs(const char* kernel, std::size_t out, std::size_t probs, std::size_t qkv,
                                    std::size_t B, std::size_t T, std::size_t C, std::size_t NH) {
  check_heads(kernel, C, NH);
  require_size(kernel, "out", out, B * T * C);
  require_size(kernel, "probs", probs, B * NH * T * T);
  require_size(kernel, "qkv", qkv, B * T * 3 * C);
  check_head_view(kernel, T, C, NH);
}

}  // namespace kernel_arguments_detail

inline void check_attention_forward(std::size_t out, std::size_t probs, std::size_t qkv, std::size_t B, std::size_t T,
                                    std::size_t C, std::size_t NH) {
  kernel_arguments_detail::check_attention_outputs("attention_forward", out, probs, qkv, B, T, C, NH);
}

inline void check_attention_probs_forward(std::size_t probs, std::size_t qkv, std::size_t B, std::size_t T,
                                          std::size_t C, std::size_t NH) {
  constexpr const char* kernel = "attention_probs_forward";
  kernel_arguments_detail::check_heads(kernel, C, NH);
  require_size(kernel, "probs", probs, B * NH * T * T);
  require_size(kernel, "qkv", qkv, B * T * 3 * C);
  kernel_arguments_detail::check_head_view(kernel, T, C, NH);
}

inline void check_attention_values_forward(std::size_t out, std::size_t probs, std::size_t qkv, std::size_t B,
                                           std::size_t T, std::size_t C, std::size_t NH) {
  kernel_arguments_detail::check_attention_outputs("attention_values_forward", out, probs, qkv, B, T, C, NH);
}

// used_qkv and used_probs: the sizes of AttentionOperands' buffers (ops/operands.hpp).
inline void check_attention_backward(std::size_t dqkv, std::size_t dprobs, std::size_t dout, std::size_t used_qkv,
                                     std::size_t used_probs, std::size_t probs, std::size_t B, std::size_t T,
                                     std::size_t C, std::size_t NH) {
  constexpr const char* kernel = "attention_backward";
  kernel_arguments_detail::check_heads(kernel, C, NH);
  require_size(kernel, "dqkv", dqkv, B * T * 3 * C);
  require_size(kernel, "dout", dout, B * T * C);
  require_size(kernel, "qkv", used_qkv, B * T * 3 * C);
  require_size(kernel, "probs", probs, B * NH * T * T);
  require_size(kernel, "used probs", used_probs, B * NH * T * T);
  require_size(kernel, "dprobs", dprobs, B * NH * T * T);
  kernel_arguments_detail::check_head_view(kernel, T, C, NH);
}

// gelu: out, dinp and dout have inp's size.
inline void check_gelu_forward(std::size_t out, std::size_t inp) {
  require_size("gelu_forward", "out", out, inp);
}

inline void check_gelu_backward(std::size_t dinp, std::size_t inp, std::size_t dout) {
  require_size("gelu_backward", "dinp", dinp, inp);
  require_size("gelu_backward", "dout", dout, inp);
}

// swiglu: inp (N, 2H), out (N, H).
inline void check_swiglu_forward(std::size_t out, std::size_t inp, std::size_t N, std::size_t H) {
  require_size("swiglu_forward", "out", out, N * H);
  require_size("swiglu_forward", "inp", inp, N * 2 * H);
}

inline void check_swiglu_backward(std::size_t dinp, std::size_t inp, std::size_t dout, std::size_t N, std::size_t H) {
  require_size("swiglu_backward", "dinp", dinp, N * 2 * H);
  require_size("swiglu_backward", "inp", inp, N * 2 * H);
  require_size("swiglu_backward", "dout", dout, N * H);
}

// residual: every buffer has out's (or dout's) size.
inline void check_residual_forward(std::size_t out, std::size_t a, std::size_t b) {
  require_size("residual_forward", "a", a, out);
  require_size("residual_forward", "b", b, out);
}

inline void check_residual_backward(std::size_t da, std::size_t db, std::size_t dout) {
  require_size("residual_backward", "da", da, dout);
  require_size("residual_backward", "db", db, dout);
}

// softmax_cross_entropy: logits, probs, dlogits (N, V); losses, dlosses, targets (N).
inline void check_softmax_cross_entropy_forward(std::size_t losses, std::size_t probs, std::size_t logits,
                                                std::size_t targets, std::size_t N, std::size_t V) {
  constexpr const char* kernel = "softmax_cross_entropy_forward";
  require_positive(kernel, "V", V);
  require_size(kernel, "losses", losses, N);
  require_size(kernel, "probs", probs, N * V);
  require_size(kernel, "logits", logits, N * V);
  require_size(kernel, "targets", targets, N);
}

inline void check_softmax_cross_entropy_backward(std::size_t dlogits, std::size_t dlosses, std::size_t probs,
                                                 std::size_t targets, std::size_t N, std::size_t V) {
  constexpr const char* kernel = "softmax_cross_entropy_backward";
  require_size(kernel, "dlogits", dlogits, N * V);
  require_size(kernel, "dlosses", dlosses, N);
  require_size(kernel, "probs", probs, N * V);
  require_size(kernel, "targets", targets, N);
}

}  // namespace altgrad::ops
