#pragma once
// Four consecutive elements per thread: one 16-byte load or store where the array's alignment
// allows it (`vector`: the base pointer is 16-byte aligned and i is a multiple of 4), element by
// element otherwise and at the array's end. Wide accesses halve the memory instructions of a
// quantizer that is bound by memory where its rounding is cheap.
#include <cstddef>
#include <cstdint>

namespace altgrad::quant::cuda {

// Whether every quad at a multiple of 4 from p can move as one float4.
inline bool quad_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// x[j] = in[i + j] for the j < 4 below end; returns how many.
__device__ inline unsigned load_quad(const float* in, std::size_t i, std::size_t end, bool vector, float (&x)[4]) {
  if (vector && i + 4 <= end) {
    const float4 v = *reinterpret_cast<const float4*>(in + i);
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    return 4;
  }
  const unsigned count = end - i < 4 ? static_cast<unsigned>(end - i) : 4u;
  // Unrolled with a guard rather than a loop to `count`: x stays in registers.
#pragma unroll
  for (unsigned j = 0; j < 4; ++j) x[j] = j < count ? in[i + j] : 0.0f;
  return count;
}

// out[i + j] = y[j] for j < count.
__device__ inline void store_quad(float* out, std::size_t i, unsigned count, bool vector, const float (&y)[4]) {
  if (vector && count == 4) {
    *reinterpret_cast<float4*>(out + i) = make_float4(y[0], y[1], y[2], y[3]);
    return;
  }
#pragma unroll
  for (unsigned j = 0; j < 4; ++j) {
    if (j < count) out[i + j] = y[j];
  }
}

}  // namespace altgrad::quant::cuda
