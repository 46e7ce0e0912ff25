// `altgrad quantize`: numbers on stdin, one `0x<code> <dequantized>` line per number on stdout.
#include <cctype>
#include <cstdio>
#include <iostream>
#include <cmath>
#include <vector>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"
#include "cli/number_token.hpp"
#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"
#include "quant/scaled_input.hpp"

namespace altgrad::cli {
namespace {

using namespace altgrad::format;

struct QuantizeArgs {
  std::string format;
  std::string rounding = "nearest";
  float scale = 1.0f;
  std::uint64_t seed = 0;
  bool no_saturate = false;
  bool no_subnormals = false;
};

int run(const QuantizeArgs& args) {
  FormatSpec spec = parse_format(args.format);
  if (args.no_saturate) spec.overflow = Overflow::special;
  if (args.no_subnormals) spec.subnormals = false;
  if (auto why = validation_error(spec); !why.empty()) throw FormatError(why);
  if (!(args.scale > 0.0f) || !std::isfinite(args.scale)) {
    throw std::invalid_argument("--scale must be a positive finite number, got " + std::to_string(args.scale));
  }
  const Format f = make_format(spec);
  const Rounding mode = *format::parse_rounding(args.rounding);
  const int digits = (f.width + 3) / 4;

  std::string token;
  std::uint64_t index = 0;
  while (std::cin >> token) {
    float x = 0.0f;
    if (!parse_number_token(token, x)) {
      std::fflush(stdout);
      std::fprintf(stderr, "altgrad quantize: error: token %llu ('%s') is not a number (expected a decimal, nan, inf or -inf)\n",
                   static_cast<unsigned long long>(index + 1), token.c_str());
      return kExitBadInput;
    }
    // The same random word quant::quantize() gives element `index` of stream 0.
    const std::uint32_t word = is_stochastic(mode) ? philox_word(args.seed, 0, index) : 0u;
    RoundFlags flags;
    const std::uint32_t bits = round_bits(f, mode, quant::scale_input(x, args.scale).bits, word, flags);
    const double dequantized = bits_float(bits) / args.scale;
    std::printf("0x%0*x %.17g\n", digits, code_of_grid_value(f, bits), dequantized);
    ++index;
  }
  return 0;
}

}  // namespace

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("quantize", "Quantize numbers read from stdin; print code and dequantized value");
  auto args = std::make_shared<QuantizeArgs>();
  cmd->add_option("--format", args->format, "Format name, e.g. e4m3, e5m2, e2m1, bf16, e4m3fnuz,bias=9")->required();
  cmd->add_option("--rounding", args->rounding, "Rounding mode")
      ->check(CLI::IsMember(std::vector<std::string>(format::kRoundingNames.begin(), format::kRoundingNames.end())))
      ->capture_default_str();
  cmd->add_option("--scale", args->scale, "Multiply by S before quantizing and divide after")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of stochastic rounding")->capture_default_str();
  cmd->add_flag("--no-saturate", args->no_saturate, "Overflow to Inf (or NaN where there is no Inf)");
  cmd->add_flag("--no-subnormals", args->no_subnormals, "Run the format without subnormals");
  cmd->callback([args] {
    const int status = run(*args);
    if (status != 0) throw CommandFailed{status};
  });
}

}  // namespace altgrad::cli
