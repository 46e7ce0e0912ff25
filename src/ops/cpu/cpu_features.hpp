#pragma once
// What this CPU can execute, as the BLAS kernel choice needs it: the vector instruction sets that
// both the processor (CPUID) and the operating system (XGETBV: it saves the wider registers on a
// context switch) support, and the processor's name for the records.
#include <string>

namespace altgrad::ops::cpu {

// The x86-64 vector levels that separate OpenBLAS's kernel families, lowest first.
enum class VectorIsa { sse3, avx, avx2, avx512 };

const char* to_string(VectorIsa isa);

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD"; "" off x86-64
  std::string brand;   // "AMD EPYC 9B45 ..." as CPUID's brand string gives it (a VM may shorten it)
  int family = 0;      // CPUID's display family and model (extended fields folded in)
  int model = 0;
  bool x86_64 = false;
  bool sse3 = false;
  bool avx = false;
  bool fma = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512dq = false;
  bool avx512cd = false;
  bool avx512bw = false;
  bool avx512vl = false;
};

// The highest level whose every instruction set is present: avx512 needs F, DQ, CD, BW and VL
// (OpenBLAS's SkylakeX kernels use them), avx2 needs AVX2 and FMA. Every x86-64 CPU has sse3 here.
VectorIsa best_vector_isa(const CpuFeatures& cpu);

// Reads this machine's CPU (all false off x86-64).
CpuFeatures read_cpu_features();

// "AMD EPYC (AuthenticAMD family 26 model 2), avx512" for start events, bench and --version.
std::string describe(const CpuFeatures& cpu);

}  // namespace altgrad::ops::cpu
