#pragma once
// The check of token ids and class targets that the CPU kernels make on the host
// (ops/argument_checks.hpp, require_indices_below), for indices in GPU memory: one small
// kernel finds the first index outside [0, limit), and its position and value come back to the
// host, which throws the CPU's message. It waits for the GPU (a copy of 16 bytes), as a check
// before any element is touched must.
#include <cstddef>
#include <cstdint>
#include <span>

namespace altgrad::ops::cuda {

class IndexCheck {
 public:
  IndexCheck();
  ~IndexCheck();
  IndexCheck(const IndexCheck&) = delete;
  IndexCheck& operator=(const IndexCheck&) = delete;

  // Throws std::invalid_argument "kernel: buffer[i] = v is outside [0, limit)" for the first such i.
  void require_below(const char* kernel, const char* buffer, std::span<const std::int32_t> indices, std::size_t limit);

 private:
  long long* found_;  // GPU memory: the first bad position (or −1) and its value
};

}  // namespace altgrad::ops::cuda
