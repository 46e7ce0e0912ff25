#pragma once
// One element of a product summed as the CPU's float GEMM sums it (ops/cpu/float_gemm.hpp), for
// the CUDA kernels that compute products element by element (attention), so that they give the
// CPU's bits: the depth is cut into blocks of kGemmDepth from where the CPU's product starts; in a
// block the products are added in order by fused multiply-adds from +0 into s; the first block
// gives C = alpha·s, each later one C = C + alpha·s.
#include <cmath>
#include <cstddef>

#include "ops/cpu/float_gemm.hpp"
#include "ops/cuda/host_device.hpp"

namespace altgrad::ops::cuda {

// Σ a(i)·b(i) over i in [begin, end), times alpha, in the order of the CPU's product whose depth
// is that range. With begin >= end the sum is 0.
template <typename A, typename B>
ALTGRAD_OPS_HD float gemm_order_dot(std::size_t begin, std::size_t end, float alpha, A&& a, B&& b) {
  constexpr std::size_t kDepth = cpu::kGemmDepth;
  float c = 0.0f;
  for (std::size_t block = begin; block < end; block += kDepth) {
    const std::size_t stop = end - block < kDepth ? end : block + kDepth;
    float s = 0.0f;
    for (std::size_t i = block; i < stop; ++i) s = fmaf(a(i), b(i), s);
    c = block == begin ? alpha * s : c + alpha * s;
  }
  return c;
}

}  // namespace altgrad::ops::cuda
