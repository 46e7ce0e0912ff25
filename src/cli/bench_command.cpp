// `altgrad bench quantize`: benchmarks that print ratios against a baseline from the same run.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "quantize_bench.hpp"

namespace altgrad::cli {

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks, each against a baseline measured in the same run");
  bench->require_subcommand(1);
  auto* quantize = bench->add_subcommand("quantize", "Quantizer throughput vs memcpy of the same buffer");
  auto options = std::make_shared<altgrad::bench::QuantizeBenchOptions>();
  quantize->add_option("--values", options->values, "Values per buffer")->capture_default_str();
  quantize->add_option("--repeats", options->repeats, "Timed passes per case (best is kept)")->capture_default_str();
  quantize->callback([options] { altgrad::bench::run_quantize_bench(*options, std::cout); });
}

}  // namespace altgrad::cli
