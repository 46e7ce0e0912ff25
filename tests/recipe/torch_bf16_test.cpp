// The bf16 preset rounds exactly as PyTorch's float32 → bfloat16 conversion (Debian's
// python3-torch), bit for bit, over every kind of float32: ties in both directions, values near
// the top of the range and beyond, subnormals, zeros, infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "recipe/recipe.hpp"
#include "format/bits.hpp"
#include "format/philox.hpp"
#include "quant/point_quantizer.hpp"
#include "support/scratch_dir.hpp"
#include "support/torch_reference.hpp"

namespace altgrad::recipe {
namespace {



// Random bit patterns (every exponent), exact bf16 midpoints and their neighbours, edges.
std::vector<float> test_values() {
  std::vector<float> v;
  for (std::uint64_t i = 0; i < (1u << 18); ++i) v.push_back(format::bits_float(format::philox_word(3, 0, i)));
  for (std::uint64_t i = 0; i < (1u << 14); ++i) {
    const std::uint32_t midpoint = (format::philox_word(3, 1, i) & 0xFFFF0000u) | 0x8000u;
    for (const std::uint32_t bits : {midpoint - 1, midpoint, midpoint + 1}) v.push_back(format::bits_float(bits));
  }
  for (const std::uint32_t bits : {0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u, 0x00018000u, 0x007FFFFFu,
                                   0x7F7F7FFFu, 0x7F7F8000u, 0x7F7FFFFFu, 0x7F800000u, 0xFF800000u, 0xFF7FFFFFu}) {
    v.push_back(format::bits_float(bits));
  }
  return v;
}

TEST(Bf16Preset, RoundsExactlyAsTorchBfloat16) {
  if (!test_support::python_imports("torch, numpy")) GTEST_SKIP() << test_support::kPython << " cannot import torch and numpy (scripts/setup.sh installs python3-torch)";
  test_support::ScratchDir dir;
  const std::vector<float> values = test_values();
  {
    std::ofstream out(dir.path() / "in.f32", std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  }
  const std::string command = std::string(test_support::kPython) + " " + ALTGRAD_SOURCE_DIR + "/tests/reference/torch_bfloat16.py " +
                              (dir.path() / "in.f32").string() + " " + (dir.path() / "out.f32").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<float> torch_rounded(values.size());
  std::ifstream in(dir.path() / "out.f32", std::ios::binary);
  in.read(reinterpret_cast<char*>(torch_rounded.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  ASSERT_TRUE(in) << "short output from " << command;

  model::GptConfig g;
  g.n_layer = 1;
  g.n_head = 1;
  g.n_embd = 8;
  g.block_size = 8;
  const recipe::Recipe bf16 = recipe::preset_recipe(model::MatmulPoints(g), "bf16", 0);
  quant::PointQuantizer point(bf16.points.front().settings, 0, 0);
  std::vector<float> ours(values.size());
  point.begin_step(0);
  point.apply(values, ours, values.size());

  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bool both_nan = std::isnan(ours[i]) && std::isnan(torch_rounded[i]);
    if (!both_nan && format::float_bits(ours[i]) != format::float_bits(torch_rounded[i])) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << std::hex << "input 0x" << format::float_bits(values[i]) << ": ours 0x" << format::float_bits(ours[i])
                      << ", torch 0x" << format::float_bits(torch_rounded[i]);
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << values.size();
}

}  // namespace
}  // namespace altgrad::recipe
