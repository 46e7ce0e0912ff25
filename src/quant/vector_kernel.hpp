#pragma once
// The quantizer's vector kernel: nearest-even and stochastic rounding — the two that training runs
// on every operand — sixteen elements per AVX-512 instruction, on formats with
// format::has_simple_grid(), with the statistics kept in registers. It produces the same bits and
// counts as quantize_block_portable(): a vector of sixteen that holds anything its formulation
// does not cover (Inf, NaN, a product x·s beyond float32 or at least 2^(105 + M), or beyond max
// finite in a format whose overflow gives Inf or NaN) is handed to the portable kernel whole.
// Nothing it returns depends on where the arrays start. AVX2 builds have one too, eight elements per
// instruction, with the same results and sums (quant/vector_kernel_avx2.cpp); other builds have none.
#include <cstddef>
#include <cstdint>

#include "format/rounding.hpp"
#include "format/spec.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant {

// Whether this build has a vector kernel for `rounding` on `f`.
bool has_vector_kernel(const format::Format& f, format::Rounding rounding);

// quantize_block's contract without a histogram, for a (format, rounding) with has_vector_kernel().
// At a scale through which max finite does not come back finite (0, NaN, or tiny enough), the
// portable kernel does the work. The error sums are taken in another order than the portable
// kernel's, so they may differ from its sums in their last bits; every other output is identical.
// Under ErrorSums::skip each kernel runs an instance without the sums (a template argument, so the
// loops carry no test for it).
void quantize_block_vector(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                           std::size_t n, float scale, const std::uint32_t* random, QuantStats& stats,
                           ErrorSums sums = ErrorSums::gather);

// quantize_scaled_blocks' contract, for a (format, rounding) with has_vector_kernel().
void quantize_scaled_blocks_vector(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                                   std::size_t n, std::size_t block, const int* exponents,
                                   const std::uint32_t* random, std::uint64_t* overflows, QuantStats& stats,
                                   std::size_t segment, ErrorSums sums = ErrorSums::gather);

// Blocks down the columns (MX scaling of a matrix's columns): `rows` rows at row stride `stride` of
// `width` ≤ 16 adjacent columns, column j one block at scale 2^−exponents[j], each row's columns in
// one vector. finite_amax[j] is column j's largest finite |x|, all_finite whether the tile holds no
// Inf or NaN; `random` holds row r's words at random[16·r + j]. clipped_columns receives a bit per
// column with an overflow. Returns false, having stored nothing, where a column needs the portable
// kernel (a non-finite input, or a scale whose products pass what the vector kernel rounds), and
// where has_vector_kernel() does not hold.
bool quantize_column_blocks_vector(const format::Format& f, format::Rounding rounding, const float* in, float* out,
                                   std::size_t stride, std::size_t rows, std::size_t width, const float* finite_amax,
                                   bool all_finite, const int* exponents, const std::uint32_t* random,
                                   std::uint32_t& clipped_columns, QuantStats& stats,
                                   ErrorSums sums = ErrorSums::gather);

}  // namespace altgrad::quant
