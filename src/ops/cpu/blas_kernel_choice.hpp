#pragma once
// Which OpenBLAS kernel family a process should run, from the CPU's facts, what OpenBLAS picked on
// its own, and the user's requests. Pure: the CPU is passed in, so every case is testable anywhere.
//
// Debian's OpenBLAS (DYNAMIC_ARCH) picks a kernel family per CPU model when it loads. A CPU newer
// than the OpenBLAS release, or one a virtual machine hides, gets an older family: OpenBLAS 0.3.21
// runs AMD Zen 4/5 and recent Xeons on Haswell's AVX2 kernel or the generic SSE3 one, at a half to a
// fifth of the speed the CPU's AVX-512 allows. The choice therefore goes by instruction set.
#include <optional>
#include <string>
#include <string_view>

#include "ops/cpu/cpu_features.hpp"

namespace altgrad::ops::cpu {

// The instruction set an OpenBLAS x86-64 kernel family needs ("SkylakeX" → avx512, "Zen" → avx2);
// nullopt for a name this table does not know (another architecture, a newer OpenBLAS).
std::optional<VectorIsa> kernel_isa(std::string_view openblas_kernel);

// The kernel that represents a level everywhere: SkylakeX, Haswell, Sandybridge, Prescott. Pinning a
// level runs this one on every CPU, so two CPUs with the level give the same bits.
const char* representative_kernel(VectorIsa isa);

// The values ALTGRAD_BLAS_KERNEL takes: "auto" (or unset) or a level's name.
std::optional<VectorIsa> parse_pinned_isa(std::string_view name);

enum class BlasKernelSource {
  openblas,  // OpenBLAS's own pick already uses the CPU's best level: kept
  upgraded,  // OpenBLAS's pick is below the CPU's level: the level's representative kernel instead
  pinned,    // ALTGRAD_BLAS_KERNEL names a level
  user,      // OPENBLAS_CORETYPE set by the user: always wins, never changed
};

const char* to_string(BlasKernelSource source);

struct BlasKernelChoice {
  std::string kernel;  // the kernel to run; "" where the user's OPENBLAS_CORETYPE decides
  BlasKernelSource source = BlasKernelSource::openblas;
};

// `openblas_pick`: the kernel OpenBLAS loads by itself on this CPU. `pin`: ALTGRAD_BLAS_KERNEL ("" when
// unset). `user_coretype`: OPENBLAS_CORETYPE is set by the user. Throws std::invalid_argument for a pin
// that is not a level, or one this CPU cannot run (its kernel would stop on an illegal instruction).
BlasKernelChoice choose_blas_kernel(const CpuFeatures& cpu, std::string_view openblas_pick, std::string_view pin,
                                    bool user_coretype);

}  // namespace altgrad::ops::cpu
