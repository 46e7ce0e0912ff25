#pragma once
// Checks made once at kernel entry, before any element is touched, by every backend. A wrong buffer
// size or an index out of range is a bug in the caller; the message names the kernel and the buffer
// so that the model code that passed it can be found. The loops themselves never throw (an
// exception must not leave an OpenMP region or cross a kernel launch). Each kernel's list of checks
// is ops/kernel_arguments.hpp.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace altgrad::ops {

inline void require_size(const char* kernel, const char* buffer, std::size_t size, std::size_t expected) {
  if (size != expected) {
    throw std::invalid_argument(std::string(kernel) + ": " + buffer + " has " + std::to_string(size) +
                                " elements, expected " + std::to_string(expected));
  }
}

// An optional buffer (a bias, its gradient): empty means absent.
inline void require_size_or_empty(const char* kernel, const char* buffer, std::size_t size, std::size_t expected) {
  if (size != 0) require_size(kernel, buffer, size, expected);
}

inline void require_positive(const char* kernel, const char* dimension, std::size_t value) {
  if (value == 0) throw std::invalid_argument(std::string(kernel) + ": " + dimension + " must be positive");
}

// The error of an index outside [0, limit): buffer[position] = value. Backends that find the
// position elsewhere (the GPU's, ops/cuda/index_check.hpp) throw it too.
[[noreturn]] inline void throw_index_outside(const char* kernel, const char* buffer, std::size_t position,
                                             std::int64_t value, std::size_t limit) {
  throw std::invalid_argument(std::string(kernel) + ": " + buffer + "[" + std::to_string(position) + "] = " +
                              std::to_string(value) + " is outside [0, " + std::to_string(limit) + ")");
}

// Token ids and class targets index rows of a table: each must lie in [0, limit). It reads the
// indices, so it runs where they are: in host memory.
inline void require_indices_below(const char* kernel, const char* buffer, std::span<const std::int32_t> indices,
                                  std::size_t limit) {
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || static_cast<std::size_t>(indices[i]) >= limit) {
      throw_index_outside(kernel, buffer, i, indices[i], limit);
    }
  }
}

// BLAS takes dimensions as int: a positive one that fits.
inline void require_blas_dimension(const char* kernel, const char* dimension, std::size_t value) {
  require_positive(kernel, dimension, value);
  if (value > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument(std::string(kernel) + ": " + dimension + " = " + std::to_string(value) +
                                " exceeds the BLAS integer range");
  }
}

}  // namespace altgrad::ops
