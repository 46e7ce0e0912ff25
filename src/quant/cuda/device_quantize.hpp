#pragma once
// The quantizer on the GPU: quant::quantize (per-tensor scale) and quant::quantize_mx (MX blocks
// along rows) over arrays in device memory, with the same output bits as the CPU's and the same
// exact statistics. A plain C++ header (no CUDA types), built where ALTGRAD_CUDA is on.
//
// Bit for bit with the CPU because both run the same per-element source: format/'s rounding, which
// is host+device, through quant/cuda/element_quantize.hpp and block_exponent.hpp. Stochastic
// rounding draws the CPU's words: element i takes format::philox_word(seed, stream, first_index + i).
//
// Statistics come from the quantizing pass itself, reduced without atomics in an order fixed by
// the element count (quant/cuda/stats_partial.cuh): count, overflow, underflow, the NaN, Inf and
// zero counts and amax equal the CPU's exactly (a count or a max is order independent), and so
// do MX's blocks and clipped_blocks. The two sums behind relative_error() are taken in double in
// the GPU's order, which is not the CPU's lane order: they differ from the CPU's in their last bits
// (they repeat bit for bit from call to call). Under options.error_sums = ErrorSums::skip a kernel
// instance without them runs, and both are 0, as on the CPU.
//
// Every call runs on the current device's default stream and waits for it (the statistics come
// back to the host). No call allocates: the reduction's scratch is the DeviceQuantizer's, so one
// DeviceQuantizer serves one host thread at a time.
#include <cstddef>
#include <cstdint>
#include <span>

#include "format/spec.hpp"
#include "quant/engine.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/stats.hpp"

namespace altgrad::quant::cuda {

// Also the quantizer's Engine (quant/engine.hpp) for training on the GPU.
class DeviceQuantizer final : public Engine {
 public:
  // Allocates the reduction's scratch on the current device. Throws std::runtime_error, its message
  // starting "no CUDA device: " and ending with CUDA's reason, where the process sees no GPU.
  DeviceQuantizer();
  ~DeviceQuantizer() override;
  DeviceQuantizer(DeviceQuantizer&& other) noexcept;
  DeviceQuantizer& operator=(DeviceQuantizer&& other) noexcept;
  DeviceQuantizer(const DeviceQuantizer&) = delete;
  DeviceQuantizer& operator=(const DeviceQuantizer&) = delete;

  // quant::quantize on device arrays `in` and `out` (out may be in: in place). Every rounding,
  // every format. A code histogram is a feature the GPU lacks: asking for one throws
  // std::invalid_argument, as do mismatched sizes.
  QuantStats quantize(const format::Format& f, std::span<const float> in, std::span<float> out,
                      const QuantizeOptions& options) override;

  // quant::quantize_mx on device arrays: rows of `row_length` elements, each cut into blocks of
  // options.block_size (the last of a row may be shorter) whose E8M0 exponent is computed on the
  // GPU from the block's largest finite |x|. scale_codes, when not empty, is device memory that
  // receives one E8M0 code per block, row-major. Throws std::invalid_argument on the CPU's shape
  // errors.
  MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                      std::size_t row_length, const MxOptions& options, std::span<std::uint8_t> scale_codes);
  MxStats quantize_mx(const format::Format& element, std::span<const float> in, std::span<float> out,
                      std::size_t row_length, const MxOptions& options) override {
    return quantize_mx(element, in, out, row_length, options, {});
  }

  // quant::amax_of on a device array: max |x| over non-NaN elements (Inf included), bit for bit.
  float amax(std::span<const float> x) override;

 private:
  void* partials_ = nullptr;  // device memory: quant/cuda/stats_partial.cuh's StatsPartial[kMaxGrid + 1]
};

}  // namespace altgrad::quant::cuda
