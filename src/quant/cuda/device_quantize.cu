// Per-tensor quantization and amax on the GPU (quant/cuda/device_quantize.hpp): kernels first, then
// the DeviceQuantizer's scratch and launchers. quantize_mx is in device_quantize_mx.cu.
#include "quant/cuda/device_quantize.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "format/codec.hpp"
#include "quant/cuda/cuda_status.cuh"
#include "quant/cuda/element_quantize.hpp"
#include "quant/cuda/launch_grid.cuh"
#include "quant/cuda/quad_access.cuh"
#include "quant/cuda/random_quad.hpp"
#include "quant/cuda/stats_partial.cuh"

namespace altgrad::quant::cuda {
namespace {

using format::Rounding;

// What every thread of a per-tensor launch reads: the call's constants, decided once on the host.
struct TensorLaunch {
  format::Format format;
  bool simple_grid;  // format::has_simple_grid(format)
  bool vector;       // in and out 16-byte aligned: quads move as float4
  float scale;
  Unscale unscale;
  std::uint64_t seed, stream, first_index;
  std::uint32_t random_mask;  // quant/random_bits.hpp: set in every word
};

// x → Q(x·scale)/scale for every element, four per thread per step, statistics from the same
// pass (the error sums with kSums only); one StatsPartial per CUDA block into partials[blockIdx.x].
// The quad at element i draws the Philox words of indices first_index + i .. + 3, as the CPU's
// elements i .. i + 3 do.
template <Rounding R, bool kSums>
__global__ void __launch_bounds__(kThreads)
    quantize_tensor(TensorLaunch p, const float* in, float* out, std::size_t n, StatsPartial* partials) {
  ElementStats stats;
  for (std::size_t i = 4 * thread_index(); i < n; i += 4 * grid_threads()) {
    float x[4], y[4];
    const unsigned count = load_quad(in, i, n, p.vector, x);
    std::uint32_t words[4] = {};
    if constexpr (format::is_stochastic(R)) random_quad(p.seed, p.stream, p.first_index + i, words, p.random_mask);
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) {
      if (j >= count) break;
      const QuantizedElement q = quantize_element<R>(p.format, p.simple_grid, x[j], p.scale, p.unscale, words[j]);
      y[j] = q.value;
      stats.template add<kSums>(x[j], q);
    }
    store_quad(out, i, count, p.vector, y);
  }
  const StatsPartial total = block_total(partial_of(stats, 0));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// max |x| over non-NaN x, as magnitude bits, in each partial's amax_bits (the rest zero).
__global__ void __launch_bounds__(kThreads)
    amax_of_tensor(const float* x, std::size_t n, bool vector, StatsPartial* partials) {
  std::uint32_t amax = 0;
  for (std::size_t i = 4 * thread_index(); i < n; i += 4 * grid_threads()) {
    float v[4];
    const unsigned count = load_quad(x, i, n, vector, v);
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) {
      const std::uint32_t a = j < count ? format::float_bits(v[j]) & ~format::kSignBit : 0u;
      amax = a <= format::kFloatInfBits && a > amax ? a : amax;
    }
  }
  StatsPartial mine{};
  mine.amax_bits = amax;
  const StatsPartial total = block_total(mine);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <Rounding R>
void launch_tensor(unsigned grid, const TensorLaunch& p, const float* in, float* out, std::size_t n,
                   StatsPartial* partials, ErrorSums sums) {
  if (sums == ErrorSums::gather) {
    quantize_tensor<R, true><<<grid, kThreads>>>(p, in, out, n, partials);
  } else {
    quantize_tensor<R, false><<<grid, kThreads>>>(p, in, out, n, partials);
  }
}

void launch_tensor(Rounding rounding, unsigned grid, const TensorLaunch& p, const float* in, float* out,
                   std::size_t n, StatsPartial* partials, ErrorSums sums) {
  switch (rounding) {
    case Rounding::nearest_even: return launch_tensor<Rounding::nearest_even>(grid, p, in, out, n, partials, sums);
    case Rounding::nearest_away: return launch_tensor<Rounding::nearest_away>(grid, p, in, out, n, partials, sums);
    case Rounding::toward_zero: return launch_tensor<Rounding::toward_zero>(grid, p, in, out, n, partials, sums);
    case Rounding::toward_positive:
      return launch_tensor<Rounding::toward_positive>(grid, p, in, out, n, partials, sums);
    case Rounding::toward_negative:
      return launch_tensor<Rounding::toward_negative>(grid, p, in, out, n, partials, sums);
    case Rounding::odd: return launch_tensor<Rounding::odd>(grid, p, in, out, n, partials, sums);
    case Rounding::stochastic: return launch_tensor<Rounding::stochastic>(grid, p, in, out, n, partials, sums);
    case Rounding::stochastic_equal:
      return launch_tensor<Rounding::stochastic_equal>(grid, p, in, out, n, partials, sums);
  }
  throw std::invalid_argument("device quantize: unknown rounding " + std::to_string(static_cast<int>(rounding)));
}

}  // namespace

DeviceQuantizer::DeviceQuantizer() {
  constexpr const char* kCaller = "DeviceQuantizer";
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) throw std::runtime_error(std::string("no CUDA device: ") + cudaGetErrorString(status));
  if (devices == 0) throw std::runtime_error("no CUDA device: cudaGetDeviceCount found none");
  check_cuda(cudaMalloc(&partials_, sizeof(StatsPartial) * (kMaxGrid + 1)), kCaller,
             "allocation of the reduction's scratch");
}

DeviceQuantizer::~DeviceQuantizer() {
  if (partials_ != nullptr) cudaFree(partials_);  // nothing to do about a failure here
}

DeviceQuantizer::DeviceQuantizer(DeviceQuantizer&& other) noexcept
    : partials_(std::exchange(other.partials_, nullptr)) {}

DeviceQuantizer& DeviceQuantizer::operator=(DeviceQuantizer&& other) noexcept {
  std::swap(partials_, other.partials_);
  return *this;
}

QuantStats DeviceQuantizer::quantize(const format::Format& f, std::span<const float> in, std::span<float> out,
                                     const QuantizeOptions& options) {
  constexpr const char* kCaller = "device quantize";
  if (in.size() != out.size()) {
    throw std::invalid_argument(std::string(kCaller) + ": input has " + std::to_string(in.size()) +
                                " elements but output has " + std::to_string(out.size()));
  }
  if (!options.code_histogram.empty()) {
    throw std::invalid_argument(std::string(kCaller) + ": the GPU quantizer has no code histogram; "
                                "count codes with the CPU's quant::quantize");
  }
  const std::size_t n = in.size();
  if (n == 0) return {};
  const TensorLaunch p{f,
                       format::has_simple_grid(f),
                       quad_aligned(in.data()) && quad_aligned(out.data()),
                       options.scale,
                       Unscale::for_scale(options.scale),
                       options.seed,
                       options.stream,
                       options.first_index,
                       random_bits_mask(options.random_bits)};
  auto* partials = static_cast<StatsPartial*>(partials_);
  const unsigned grid = grid_for((n + 3) / 4);
  launch_tensor(options.rounding, grid, p, in.data(), out.data(), n, partials, options.error_sums);
  check_cuda(cudaGetLastError(), kCaller, "launch of the quantizing kernel");
  return quant_stats_of(reduce_partials(partials, grid, kCaller), n);
}

float DeviceQuantizer::amax(std::span<const float> x) {
  if (x.empty()) return 0.0f;
  auto* partials = static_cast<StatsPartial*>(partials_);
  const unsigned grid = grid_for((x.size() + 3) / 4);
  amax_of_tensor<<<grid, kThreads>>>(x.data(), x.size(), quad_aligned(x.data()), partials);
  check_cuda(cudaGetLastError(), "device amax", "launch of the amax kernel");
  return format::bits_float(reduce_partials(partials, grid, "device amax").amax_bits);
}

}  // namespace altgrad::quant::cuda
