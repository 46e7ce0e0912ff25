#pragma once
// Randomized Hadamard transforms along a GEMM's reduction axis (issue 51; docs/formats.md,
// "Hadamard transforms"). The axis is cut into consecutive groups of n, and each group x, as a row
// vector, becomes y = x·Q with Q = D·H_n/√n: D = diag(signs), H_n Sylvester's Hadamard matrix
// (H[i][j] = (−1)^popcount(i & j)). Q·Qᵀ = I, so transforming both operands of a GEMM along its
// reduction axis with the same Q leaves the product unchanged in exact arithmetic, while it
// spreads an outlier over its group before the operands are quantized (Tseng et al. 2025,
// arXiv:2502.20586; Transformer Engine's NVFP4 recipe applies n = 16 to the weight-gradient GEMM).
//
// Each group is transformed in double (a fast Walsh–Hadamard transform: n·log2 n additions, then
// the factor 1/√n) and rounded once to FP32. Groups are independent, so the bits are the same on
// any thread count.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace altgrad::quant {

// The transform sizes a recipe may name.
inline constexpr std::array<std::size_t, 4> kHadamardSizes = {16, 32, 64, 128};
bool valid_hadamard_size(std::size_t n);

// The 16 signs Transformer Engine uses for every layer and step of its NVFP4 recipe: sign i is −1
// where bit i of 0xD7E8 is set (transformer_engine/pytorch/tensor/nvfp4_tensor.py,
// get_wgrad_sign_vector, at d0067d0).
std::vector<float> transformer_engine_signs();

// n signs drawn from a named seed: sign i is −1 where bit 0 of format::philox_word(seed, stream, i)
// is set. The same seed and stream give the same signs on any machine.
std::vector<float> random_signs(std::size_t n, std::uint64_t seed, std::uint64_t stream);

// Throws std::invalid_argument, naming both numbers, unless n is a valid size and divides the
// length of the axis it runs along.
void check_hadamard_axis(std::size_t n, std::size_t axis_length);

// Rows of `row_length` elements, each row's groups of n = signs.size() consecutive elements
// transformed. in and out may be the same span.
void hadamard_rows(std::span<const float> in, std::span<float> out, std::size_t row_length,
                   std::span<const float> signs);

// The same down the columns of a row-major matrix with `cols` columns: each group is n consecutive
// rows of one column (the axis a weight-gradient GEMM reduces over). in and out may be the same.
void hadamard_columns(std::span<const float> in, std::span<float> out, std::size_t cols,
                      std::span<const float> signs);

}  // namespace altgrad::quant
