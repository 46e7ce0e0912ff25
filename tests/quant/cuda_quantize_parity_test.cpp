// The GPU quantizer (quant/cuda/device_quantize.hpp) against the CPU's, on a GPU: for every named
// format (and a few variants), every rounding, per-tensor scales and MX blocks, the device output
// equals quant::quantize's / quant::quantize_mx's bit for bit, as do the E8M0 codes and every
// statistic that is a count or a maximum; the two error sums agree to 1e-9 (their summation orders
// differ) and repeat bit for bit from call to call, and without them (ErrorSums::skip) both sides'
// are 0. Inputs: tests/quant/device_parity.hpp's edges (±0, subnormals, max finite and beyond,
// ties, NaN, Inf) and random values and bit patterns, at aligned and unaligned addresses, in place
// and not, and large enough for every CUDA block of a launch to loop.
//
// Label gpu. Where the process sees no GPU the tests skip, naming CUDA's error; with
// ALTGRAD_REQUIRE_GPU=1 (scripts/gpu_check.sh) that is a failure instead.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_parity.hpp"
#include "quant/cuda/device_quantize.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "quant/scaling.hpp"
#include "support/bit_identical.hpp"
#include "test_tensors.hpp"

namespace altgrad::quant_test {
namespace {

using format::Rounding;
using quant::cuda::DeviceQuantizer;
using test_support::bit_identical;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// n elements of T in device memory, with one element of slack in front so that a view can start
// off the 16-byte alignment the kernels' wide accesses need.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) {
    void* p = nullptr;
    check(cudaMalloc(&p, (n + 1) * sizeof(T)), "cudaMalloc");
    base_ = static_cast<T*>(p);
  }
  ~DeviceArray() { cudaFree(base_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // The n elements from offset 0 (aligned) or 1 (not).
  std::span<T> view(std::size_t offset = 0) { return {base_ + offset, n_}; }

  void upload(const std::vector<T>& host, std::size_t offset = 0) {
    check(cudaMemcpy(base_ + offset, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<T> download(std::size_t offset = 0) const {
    std::vector<T> host(n_);
    check(cudaMemcpy(host.data(), base_ + offset, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }

 private:
  T* base_ = nullptr;
  std::size_t n_;
};

class DeviceQuantizeParity : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      quantizer_.emplace();
    } catch (const std::runtime_error& error) {
      const char* required = std::getenv("ALTGRAD_REQUIRE_GPU");
      // ctest's skip pattern is "skipped: no CUDA device: " (tests/CMakeLists.txt): the failure's
      // message must not match it.
      if (required != nullptr && std::string(required) == "1") FAIL() << "ALTGRAD_REQUIRE_GPU=1 but " << error.what();
      GTEST_SKIP() << "skipped: " << error.what();
    }
  }

  DeviceQuantizer& gpu() { return *quantizer_; }

  // One per-tensor call on the GPU (from `offset`, in place or not) against quant::quantize.
  void expect_tensor_parity(const format::Format& f, const std::vector<float>& in, const quant::QuantizeOptions& o,
                            const std::string& where, std::size_t offset = 0, bool in_place = false) {
    std::vector<float> cpu(in.size());
    const quant::QuantStats cpu_stats = quant::quantize(f, in, cpu, o);
    DeviceArray<float> x(in.size()), y(in.size());
    x.upload(in, offset);
    const std::span<float> out = in_place ? x.view(offset) : y.view(offset);
    const quant::QuantStats gpu_stats = gpu().quantize(f, x.view(offset), out, o);
    const std::vector<float> got = in_place ? x.download(offset) : y.download(offset);
    ASSERT_TRUE(bit_identical(got, cpu)) << where;
    expect_same_stats(gpu_stats, cpu_stats, where);
  }

  // One MX call on the GPU against quant::quantize_mx, the E8M0 codes included.
  void expect_mx_parity(const format::Format& f, const std::vector<float>& in, std::size_t row_length,
                        const quant::MxOptions& o, const std::string& where, std::size_t offset = 0) {
    const std::size_t blocks = in.size() / row_length * ((row_length + o.block_size - 1) / o.block_size);
    std::vector<float> cpu(in.size());
    std::vector<std::uint8_t> cpu_codes(blocks);
    const quant::MxStats cpu_stats = quant::quantize_mx(f, in, cpu, row_length, o, cpu_codes);
    DeviceArray<float> x(in.size()), y(in.size());
    DeviceArray<std::uint8_t> codes(blocks);
    x.upload(in, offset);
    const quant::MxStats gpu_stats = gpu().quantize_mx(f, x.view(offset), y.view(offset), row_length, o, codes.view());
    ASSERT_TRUE(bit_identical(y.download(offset), cpu)) << where;
    ASSERT_EQ(codes.download(), cpu_codes) << where;
    expect_same_mx_stats(gpu_stats, cpu_stats, where);
  }

 private:
  std::optional<DeviceQuantizer> quantizer_;
};

quant::QuantizeOptions tensor_options(Rounding rounding, float scale) {
  quant::QuantizeOptions o;
  o.rounding = rounding;
  o.scale = scale;
  o.seed = 0x5EED'0000'0000'0042ull;
  o.stream = 12;
  o.first_index = 4 * 12345 + 1;  // quads straddle Philox groups
  return o;
}

quant::MxOptions mx_options(Rounding rounding, quant::MxScaleRule rule, std::size_t block) {
  quant::MxOptions o;
  o.block_size = block;
  o.rule = rule;
  o.rounding = rounding;
  o.seed = 99;
  o.stream = 0xABCD'0000'0001ull;
  o.first_index = 2;
  return o;
}

TEST_F(DeviceQuantizeParity, PerTensorEveryFormatRoundingAndScale) {
  constexpr std::size_t kN = 4099;  // not a multiple of 4: a tail quad
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    for (const float scale : kParityScales) {
      const std::vector<float> in = tensor_inputs(f, scale, kN, 21);
      for (const Rounding rounding : format::kAllRoundings) {
        const std::string where = describe_case(name, rounding, "scale " + std::to_string(scale));
        expect_tensor_parity(f, in, tensor_options(rounding, scale), where);
      }
    }
  }
}

// Off the 16-byte alignment (element by element) and in place, where the kernel reads and writes
// the same array.
TEST_F(DeviceQuantizeParity, PerTensorUnalignedAndInPlace) {
  for (const char* name : {"e4m3", "e5m2", "e2m1", "bf16", "e8m0fnu"}) {
    const format::Format f = parity_format(name);
    const std::vector<float> in = tensor_inputs(f, 0.37f, 1001, 23);
    for (const Rounding rounding : format::kAllRoundings) {
      const quant::QuantizeOptions o = tensor_options(rounding, 0.37f);
      expect_tensor_parity(f, in, o, describe_case(name, rounding, "unaligned"), 1);
      expect_tensor_parity(f, in, o, describe_case(name, rounding, "in place"), 0, true);
      expect_tensor_parity(f, in, o, describe_case(name, rounding, "unaligned, in place"), 1, true);
    }
  }
}

// Millions of elements: every CUDA block of a capped grid loops, and the partials' second pass
// has a full grid to fold. Twice, for the same bits, sums included.
TEST_F(DeviceQuantizeParity, PerTensorLargeArrayRepeatsBitForBit) {
  constexpr std::size_t kN = (std::size_t{1} << 23) + 7;
  const format::Format f = parity_format("e4m3");
  const std::vector<float> in = tensor_inputs(f, 2.0f, kN, 25);
  for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic, Rounding::toward_zero}) {
    const quant::QuantizeOptions o = tensor_options(rounding, 2.0f);
    expect_tensor_parity(f, in, o, describe_case("e4m3", rounding, "8M elements"));
    DeviceArray<float> x(kN), y(kN);
    x.upload(in);
    const quant::QuantStats first = gpu().quantize(f, x.view(), y.view(), o);
    const quant::QuantStats second = gpu().quantize(f, x.view(), y.view(), o);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(first.sum_sq_error), std::bit_cast<std::uint64_t>(second.sum_sq_error));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(first.sum_sq_input), std::bit_cast<std::uint64_t>(second.sum_sq_input));
  }
}

// Rows that are whole quads and blocks (float4 accesses) and rows that are not (element by
// element, a short last block), blocks of 32, 16, 64 (two passes) and a whole 1000-element row.
TEST_F(DeviceQuantizeParity, MxEveryFormatRoundingAndRule) {
  struct Shape {
    std::size_t rows, row_length, block;
  };
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    for (const Shape shape :
         {Shape{8, 256, 32}, Shape{3, 100, 32}, Shape{4, 64, 16}, Shape{2, 200, 64}, Shape{2, 1000, 1000}}) {
      const std::vector<float> in = mx_inputs(f, shape.rows * shape.row_length, 27);
      for (const Rounding rounding : format::kAllRoundings) {
        for (const quant::MxScaleRule rule : {quant::MxScaleRule::floor, quant::MxScaleRule::round_up,
                                              quant::MxScaleRule::ceil, quant::MxScaleRule::even}) {
          const std::string where = describe_case(
              name, rounding, std::to_string(shape.row_length) + "-element rows, blocks of " + std::to_string(shape.block));
          expect_mx_parity(f, in, shape.row_length, mx_options(rounding, rule, shape.block), where);
        }
      }
    }
  }
}

// ErrorSums::skip (quant/stats.hpp), as training's unlogged steps ask for it: the GPU's kernel
// instances without the error sums write the CPU's bits and counts, and their sums are 0 as the
// CPU's are (expect_same_stats then holds them to exactly 0), per tensor and in MX blocks, aligned
// or not, in place or not.
TEST_F(DeviceQuantizeParity, WithoutTheErrorSumsEveryFormatAndRounding) {
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    const std::vector<float> tensor = tensor_inputs(f, 0.37f, 4099, 41);
    const std::vector<float> blocks = mx_inputs(f, 3 * 100, 43);
    for (const Rounding rounding : format::kAllRoundings) {
      quant::QuantizeOptions o = tensor_options(rounding, 0.37f);
      o.error_sums = quant::ErrorSums::skip;
      expect_tensor_parity(f, tensor, o, describe_case(name, rounding, "no error sums"));
      expect_tensor_parity(f, tensor, o, describe_case(name, rounding, "no error sums, unaligned, in place"), 1, true);
      quant::MxOptions m = mx_options(rounding, quant::MxScaleRule::round_up, 32);
      m.error_sums = quant::ErrorSums::skip;
      expect_mx_parity(f, blocks, 100, m, describe_case(name, rounding, "MX, no error sums"));
    }
  }
  const format::Format f = parity_format("e4m3");
  const std::vector<float> large = mx_inputs(f, 2048 * 768, 45);
  quant::MxOptions m = mx_options(Rounding::stochastic, quant::MxScaleRule::floor, 32);
  m.error_sums = quant::ErrorSums::skip;
  expect_mx_parity(f, large, 768, m, describe_case("e4m3", Rounding::stochastic, "1.5M elements, no error sums"));
}

// Stochastic rounding with fewer random bits (quant/random_bits.hpp): the same masked words.
TEST_F(DeviceQuantizeParity, StochasticRoundingWithFewerRandomBits) {
  for (const std::string& name : parity_format_names()) {
    const format::Format f = parity_format(name);
    const std::vector<float> tensor = tensor_inputs(f, 0.37f, 4099, 47);
    const std::vector<float> blocks = mx_inputs(f, 3 * 100, 49);
    for (const int bits : {1, 8, 23}) {
      quant::QuantizeOptions o = tensor_options(Rounding::stochastic, 0.37f);
      o.random_bits = bits;
      expect_tensor_parity(f, tensor, o, describe_case(name, Rounding::stochastic, std::to_string(bits) + " random bits"));
      quant::MxOptions m = mx_options(Rounding::stochastic, quant::MxScaleRule::floor, 32);
      m.random_bits = bits;
      expect_mx_parity(f, blocks, 100, m, describe_case(name, Rounding::stochastic, "MX, " + std::to_string(bits) + " random bits"));
    }
  }
}

// FP32 and E4M3 block scales run on the CPU only (quant/block_scale.hpp): the GPU says so.
TEST_F(DeviceQuantizeParity, MxRefusesScaleFormatsOtherThanE8m0) {
  const format::Format f = parity_format("e2m1");
  const std::vector<float> in = mx_inputs(f, 64, 5);
  quant::MxOptions o = mx_options(Rounding::nearest_even, quant::MxScaleRule::floor, 16);
  o.scale_format = quant::BlockScaleFormat::e4m3;
  DeviceArray<float> x(in.size()), y(in.size());
  x.upload(in);
  EXPECT_THROW((void)gpu().quantize_mx(f, x.view(), y.view(), 64, o), std::invalid_argument);
}

TEST_F(DeviceQuantizeParity, MxUnalignedAndLarge) {
  const format::Format f = parity_format("e4m3");
  const std::vector<float> small = mx_inputs(f, 16 * 256, 29);
  for (const Rounding rounding : format::kAllRoundings) {
    expect_mx_parity(f, small, 256, mx_options(rounding, quant::MxScaleRule::floor, 32),
                     describe_case("e4m3", rounding, "unaligned"), 1);
  }
  // 2048 rows of 768: every group of lanes loops over many blocks.
  const std::vector<float> large = mx_inputs(f, 2048 * 768, 31);
  for (const Rounding rounding : {Rounding::nearest_even, Rounding::stochastic}) {
    expect_mx_parity(f, large, 768, mx_options(rounding, quant::MxScaleRule::round_up, 32),
                     describe_case("e4m3", rounding, "1.5M elements"));
  }
}

// max |x| over non-NaN x, Inf included, as quant::amax_of: on edges, on random bit patterns (NaNs
// of every payload), unaligned, and over millions of elements.
TEST_F(DeviceQuantizeParity, AmaxMatchesAmaxOf) {
  const format::Format f = parity_format("e5m2");
  std::vector<std::vector<float>> cases = {tensor_inputs(f, 1.0f, 10007, 33), {},
                                           {std::numeric_limits<float>::quiet_NaN()}};
  TensorRng rng(35);
  std::vector<float> finite(3'000'001);
  for (float& v : finite) v = rng.log_uniform(-149, 100);
  finite[2'999'999] = -0x1.8p110f;  // the largest, negative, near the end
  cases.push_back(finite);
  for (const std::vector<float>& x : cases) {
    const float want = quant::amax_of(x);
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      DeviceArray<float> d(x.size());
      if (!x.empty()) d.upload(x, offset);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(gpu().amax(d.view(offset))), std::bit_cast<std::uint32_t>(want))
          << x.size() << " elements, offset " << offset;
    }
  }
}

TEST_F(DeviceQuantizeParity, RejectsWhatTheCpuRejectsAndAHistogram) {
  const format::Format f = parity_format("e4m3");
  DeviceArray<float> x(64), y(63);
  quant::QuantizeOptions o;
  EXPECT_THROW(gpu().quantize(f, x.view(), y.view(), o), std::invalid_argument);
  std::vector<std::uint64_t> histogram(256);
  o.code_histogram = histogram;
  EXPECT_THROW(gpu().quantize(f, x.view(), x.view(), o), std::invalid_argument);
  EXPECT_THROW(gpu().quantize_mx(f, x.view(), x.view(), 60, quant::MxOptions{}), std::invalid_argument);
  quant::MxOptions big;
  big.block_size = quant::kMaxMxBlock + 1;
  EXPECT_THROW(gpu().quantize_mx(f, x.view(), x.view(), 64, big), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::quant_test
