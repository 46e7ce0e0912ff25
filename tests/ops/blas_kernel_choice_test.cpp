// The BLAS kernel choice for each CPU feature set and each user request, with the CPU's facts passed
// in: no particular machine needed. (cli_tests checks that the process then runs the choice.)
#include "ops/cpu/blas_kernel_choice.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace altgrad::ops::cpu {
namespace {

CpuFeatures sse3_cpu() {
  CpuFeatures c;
  c.x86_64 = true;
  c.sse3 = true;
  return c;
}

CpuFeatures avx_cpu() {
  CpuFeatures c = sse3_cpu();
  c.avx = true;
  return c;
}

CpuFeatures avx2_cpu() {
  CpuFeatures c = avx_cpu();
  c.avx2 = c.fma = true;
  return c;
}

CpuFeatures avx512_cpu() {
  CpuFeatures c = avx2_cpu();
  c.avx512f = c.avx512dq = c.avx512cd = c.avx512bw = c.avx512vl = true;
  return c;
}

void expect_choice(const BlasKernelChoice& choice, const char* kernel, BlasKernelSource source) {
  EXPECT_EQ(choice.kernel, kernel);
  EXPECT_EQ(choice.source, source);
}

TEST(VectorIsa, EachLevelNeedsAllItsInstructionSets) {
  EXPECT_EQ(best_vector_isa(sse3_cpu()), VectorIsa::sse3);
  EXPECT_EQ(best_vector_isa(avx_cpu()), VectorIsa::avx);
  EXPECT_EQ(best_vector_isa(avx2_cpu()), VectorIsa::avx2);
  EXPECT_EQ(best_vector_isa(avx512_cpu()), VectorIsa::avx512);
  CpuFeatures no_fma = avx2_cpu();
  no_fma.fma = false;  // AVX2 without FMA (VIA, some emulators): OpenBLAS's Haswell kernels need both
  EXPECT_EQ(best_vector_isa(no_fma), VectorIsa::avx);
  CpuFeatures knights = avx512_cpu();
  knights.avx512bw = knights.avx512vl = false;  // Xeon Phi: AVX-512F without SkylakeX's BW/VL
  EXPECT_EQ(best_vector_isa(knights), VectorIsa::avx2);
}

TEST(KernelIsa, KnowsOpenBlasFamilies) {
  EXPECT_EQ(kernel_isa("SkylakeX"), VectorIsa::avx512);
  EXPECT_EQ(kernel_isa("Cooperlake"), VectorIsa::avx512);
  EXPECT_EQ(kernel_isa("Zen"), VectorIsa::avx2);
  EXPECT_EQ(kernel_isa("Haswell"), VectorIsa::avx2);
  EXPECT_EQ(kernel_isa("Sandybridge"), VectorIsa::avx);
  EXPECT_EQ(kernel_isa("Prescott"), VectorIsa::sse3);
  EXPECT_EQ(kernel_isa("NeoverseN1"), std::nullopt);
  for (VectorIsa isa : {VectorIsa::sse3, VectorIsa::avx, VectorIsa::avx2, VectorIsa::avx512})
    EXPECT_EQ(kernel_isa(representative_kernel(isa)), isa);
}

TEST(ChooseBlasKernel, UpgradesAKernelBelowTheCpusLevel) {
  // An AVX-512 CPU that OpenBLAS 0.3.21 does not know (Zen 4/5, new Xeons): Haswell or Prescott.
  expect_choice(choose_blas_kernel(avx512_cpu(), "Haswell", "", false), "SkylakeX", BlasKernelSource::upgraded);
  expect_choice(choose_blas_kernel(avx512_cpu(), "Prescott", "auto", false), "SkylakeX", BlasKernelSource::upgraded);
  expect_choice(choose_blas_kernel(avx2_cpu(), "Prescott", "", false), "Haswell", BlasKernelSource::upgraded);
  expect_choice(choose_blas_kernel(avx_cpu(), "Nehalem", "", false), "Sandybridge", BlasKernelSource::upgraded);
}

TEST(ChooseBlasKernel, KeepsOpenBlassPickAtTheCpusLevel) {
  expect_choice(choose_blas_kernel(avx512_cpu(), "Cooperlake", "", false), "Cooperlake", BlasKernelSource::openblas);
  expect_choice(choose_blas_kernel(avx2_cpu(), "Zen", "", false), "Zen", BlasKernelSource::openblas);
  expect_choice(choose_blas_kernel(sse3_cpu(), "Prescott", "", false), "Prescott", BlasKernelSource::openblas);
  // A family this table does not know (a newer OpenBLAS) is never second-guessed.
  expect_choice(choose_blas_kernel(avx512_cpu(), "Zen5", "", false), "Zen5", BlasKernelSource::openblas);
  // Off x86-64 there are no levels: OpenBLAS's pick stands.
  expect_choice(choose_blas_kernel(CpuFeatures{}, "NeoverseN1", "", false), "NeoverseN1", BlasKernelSource::openblas);
}

TEST(ChooseBlasKernel, APinRunsTheLevelsRepresentativeEverywhere) {
  // Zen and Haswell CPUs pinned to avx2 both run Haswell's kernel, so they agree bit for bit.
  expect_choice(choose_blas_kernel(avx2_cpu(), "Zen", "avx2", false), "Haswell", BlasKernelSource::pinned);
  expect_choice(choose_blas_kernel(avx512_cpu(), "Cooperlake", "avx2", false), "Haswell", BlasKernelSource::pinned);
  expect_choice(choose_blas_kernel(avx512_cpu(), "Haswell", "avx512", false), "SkylakeX", BlasKernelSource::pinned);
  expect_choice(choose_blas_kernel(avx512_cpu(), "Haswell", "sse3", false), "Prescott", BlasKernelSource::pinned);
}

TEST(ChooseBlasKernel, TheUsersCoretypeAlwaysWins) {
  expect_choice(choose_blas_kernel(avx512_cpu(), "Haswell", "", true), "", BlasKernelSource::user);
  expect_choice(choose_blas_kernel(avx512_cpu(), "Haswell", "avx2", true), "", BlasKernelSource::user);
  expect_choice(choose_blas_kernel(avx2_cpu(), "", "not-a-level", true), "", BlasKernelSource::user);
}

TEST(ChooseBlasKernel, RefusesPinsThatAreNotLevelsOrAboveTheCpu) {
  try {
    choose_blas_kernel(avx512_cpu(), "Haswell", "avx3", false);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ALTGRAD_BLAS_KERNEL=avx3: not a kernel level (auto, avx512, avx2, avx, sse3)");
  }
  try {
    choose_blas_kernel(avx2_cpu(), "Zen", "avx512", false);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ALTGRAD_BLAS_KERNEL=avx512: this CPU's best level is avx2, so it cannot run the SkylakeX kernel");
  }
  EXPECT_THROW(choose_blas_kernel(CpuFeatures{}, "NeoverseN1", "avx2", false), std::invalid_argument);
}

}  // namespace
}  // namespace altgrad::ops::cpu
