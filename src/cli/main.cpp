// altgrad: the command line. Thin by design: parse arguments, call a layer, print.
#include <cstdio>
#include <exception>
#include <string>

#include "cli/commands.hpp"
#include "ops/cpu_arithmetic.hpp"

namespace {

// `altgrad --version`: the build, the CPU, the own GEMM's kernel, and the BLAS kernel this process
// runs and why.
std::string version_text() {
  const altgrad::ops::CpuArithmetic cpu = altgrad::ops::cpu_arithmetic();
  return "altgrad " ALTGRAD_VERSION "\ncpu   " + cpu.cpu + "\ngemm  own float GEMM, " + cpu.gemm_kernel +
         " kernel\nblas  " + cpu.blas_summary;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before any output or thread: may re-execute this program once on another BLAS kernel.
  try {
    altgrad::ops::select_cpu_kernels();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "altgrad: error: %s\n", e.what());
    return altgrad::cli::kExitBadInput;
  }
  CLI::App app{"AltGrad: a test bench for low-precision training research"};
  app.set_version_flag("--version", version_text);
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
