#include "ops/cpu/cpu_features.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace altgrad::ops::cpu {
namespace {

#if defined(__x86_64__)
struct Registers {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Registers cpuid(unsigned leaf, unsigned subleaf = 0) {
  Registers r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

bool bit(unsigned word, int index) { return (word >> index) & 1u; }

// XCR0, the register states the OS saves; only readable where CPUID says OSXSAVE.
std::uint64_t xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

std::string brand_string() {
  if (cpuid(0x80000000).eax < 0x80000004) return "";
  char text[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const Registers r = cpuid(0x80000002 + i);
    std::memcpy(text + 16 * i, &r, 16);
  }
  std::string s(text);
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}
#endif

}  // namespace

const char* to_string(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::sse3: return "sse3";
    case VectorIsa::avx: return "avx";
    case VectorIsa::avx2: return "avx2";
    case VectorIsa::avx512: return "avx512";
  }
  return "?";
}

VectorIsa best_vector_isa(const CpuFeatures& c) {
  if (c.avx512f && c.avx512dq && c.avx512cd && c.avx512bw && c.avx512vl && c.avx2 && c.fma) return VectorIsa::avx512;
  if (c.avx2 && c.fma) return VectorIsa::avx2;
  if (c.avx) return VectorIsa::avx;
  return VectorIsa::sse3;
}

CpuFeatures read_cpu_features() {
  CpuFeatures c;
#if defined(__x86_64__)
  c.x86_64 = true;
  const Registers leaf0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  c.vendor = vendor;
  c.brand = brand_string();
  const Registers leaf1 = cpuid(1);
  const int base_family = static_cast<int>((leaf1.eax >> 8) & 0xF);
  const int base_model = static_cast<int>((leaf1.eax >> 4) & 0xF);
  c.family = base_family == 0xF ? base_family + static_cast<int>((leaf1.eax >> 20) & 0xFF) : base_family;
  c.model = base_family == 0x6 || base_family == 0xF ? (static_cast<int>((leaf1.eax >> 16) & 0xF) << 4) + base_model
                                                      : base_model;
  c.sse3 = bit(leaf1.ecx, 0);
  // The OS must save the YMM (bits 1, 2) and, for AVX-512, the opmask and ZMM states (bits 5-7).
  const std::uint64_t saved = bit(leaf1.ecx, 27) ? xcr0() : 0;
  const bool ymm_saved = (saved & 0x6) == 0x6;
  const bool zmm_saved = ymm_saved && (saved & 0xE0) == 0xE0;
  c.avx = bit(leaf1.ecx, 28) && ymm_saved;
  c.fma = bit(leaf1.ecx, 12) && ymm_saved;
  if (leaf0.eax >= 7) {
    const Registers leaf7 = cpuid(7, 0);
    c.avx2 = bit(leaf7.ebx, 5) && ymm_saved;
    c.avx512f = bit(leaf7.ebx, 16) && zmm_saved;
    c.avx512dq = bit(leaf7.ebx, 17) && zmm_saved;
    c.avx512cd = bit(leaf7.ebx, 28) && zmm_saved;
    c.avx512bw = bit(leaf7.ebx, 30) && zmm_saved;
    c.avx512vl = bit(leaf7.ebx, 31) && zmm_saved;
  }
#endif
  return c;
}

std::string describe(const CpuFeatures& c) {
  if (!c.x86_64) return "not x86-64";
  return (c.brand.empty() ? std::string("unnamed CPU") : c.brand) + " (" + c.vendor + " family " +
         std::to_string(c.family) + " model " + std::to_string(c.model) + "), " + to_string(best_vector_isa(c));
}

}  // namespace altgrad::ops::cpu
