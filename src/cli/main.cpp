// altgrad: the command line. Thin by design: parse arguments, call a layer, print.
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"AltGrad: a test bench for low-precision training research"};
  app.require_subcommand(1);
  altgrad::cli::add_formats_command(app);
  altgrad::cli::add_quantize_command(app);
  altgrad::cli::add_bench_command(app);
  altgrad::cli::add_train_command(app);
  altgrad::cli::add_eval_command(app);
  altgrad::cli::add_export_command(app);
  altgrad::cli::add_sample_command(app);
  altgrad::cli::add_sweep_command(app);
  altgrad::cli::add_report_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? 0 : altgrad::cli::kExitBadInput;
  } catch (const altgrad::cli::CommandFailed& failed) {
    return failed.status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "altgrad: error: %s\n", e.what());
    return altgrad::cli::kExitBadInput;
  }
  return 0;
}
