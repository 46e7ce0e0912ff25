#include "ops/cpu/blas_kernel_choice.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace altgrad::ops::cpu {
namespace {

constexpr VectorIsa kLevels[] = {VectorIsa::sse3, VectorIsa::avx, VectorIsa::avx2, VectorIsa::avx512};

// OpenBLAS 0.3.21's x86-64 DYNAMIC_ARCH families (driver/others/dynamic.c) by the newest level
// their kernels use. Families for CPUs before SSE3 count as sse3: they never rank above a choice.
constexpr std::array<std::pair<std::string_view, VectorIsa>, 26> kKernelLevels{{
    {"SapphireRapids", VectorIsa::avx512}, {"Cooperlake", VectorIsa::avx512}, {"SkylakeX", VectorIsa::avx512},
    {"Zen", VectorIsa::avx2},              {"Haswell", VectorIsa::avx2},      {"Excavator", VectorIsa::avx2},
    {"Steamroller", VectorIsa::avx},       {"Piledriver", VectorIsa::avx},    {"Bulldozer", VectorIsa::avx},
    {"Sandybridge", VectorIsa::avx},       {"Nehalem", VectorIsa::sse3},      {"Dunnington", VectorIsa::sse3},
    {"Penryn", VectorIsa::sse3},           {"Core2", VectorIsa::sse3},        {"Atom", VectorIsa::sse3},
    {"Prescott", VectorIsa::sse3},         {"Northwood", VectorIsa::sse3},    {"Coppermine", VectorIsa::sse3},
    {"Katmai", VectorIsa::sse3},           {"Banias", VectorIsa::sse3},       {"Athlon", VectorIsa::sse3},
    {"Opteron", VectorIsa::sse3},          {"Opteron(SSE3)", VectorIsa::sse3}, {"Barcelona", VectorIsa::sse3},
    {"Bobcat", VectorIsa::sse3},           {"Nano", VectorIsa::sse3},
}};

}  // namespace

std::optional<VectorIsa> kernel_isa(std::string_view kernel) {
  for (const auto& [name, isa] : kKernelLevels)
    if (name == kernel) return isa;
  return std::nullopt;
}

const char* representative_kernel(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::avx512: return "SkylakeX";
    case VectorIsa::avx2: return "Haswell";
    case VectorIsa::avx: return "Sandybridge";
    case VectorIsa::sse3: return "Prescott";
  }
  return "Prescott";
}

std::optional<VectorIsa> parse_pinned_isa(std::string_view name) {
  for (VectorIsa isa : kLevels)
    if (name == to_string(isa)) return isa;
  return std::nullopt;
}

const char* to_string(BlasKernelSource source) {
  switch (source) {
    case BlasKernelSource::openblas: return "openblas";
    case BlasKernelSource::upgraded: return "altgrad";
    case BlasKernelSource::pinned: return "ALTGRAD_BLAS_KERNEL";
    case BlasKernelSource::user: return "OPENBLAS_CORETYPE";
  }
  return "?";
}

BlasKernelChoice choose_blas_kernel(const CpuFeatures& cpu, std::string_view openblas_pick, std::string_view pin,
                                    bool user_coretype) {
  if (user_coretype) return {"", BlasKernelSource::user};
  if (!pin.empty() && pin != "auto") {
    const std::optional<VectorIsa> isa = parse_pinned_isa(pin);
    const std::string setting = "ALTGRAD_BLAS_KERNEL=" + std::string(pin);
    if (!isa) throw std::invalid_argument(setting + ": not a kernel level (auto, avx512, avx2, avx, sse3)");
    if (!cpu.x86_64) throw std::invalid_argument(setting + ": kernel levels are x86-64's, and this CPU is not");
    if (*isa > best_vector_isa(cpu))
      throw std::invalid_argument(setting + ": this CPU's best level is " + to_string(best_vector_isa(cpu)) +
                                  ", so it cannot run the " + representative_kernel(*isa) + " kernel");
    return {representative_kernel(*isa), BlasKernelSource::pinned};
  }
  const std::optional<VectorIsa> picked = kernel_isa(openblas_pick);
  if (cpu.x86_64 && picked && *picked < best_vector_isa(cpu))
    return {representative_kernel(best_vector_isa(cpu)), BlasKernelSource::upgraded};
  return {std::string(openblas_pick), BlasKernelSource::openblas};
}

}  // namespace altgrad::ops::cpu
