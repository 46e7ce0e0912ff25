#pragma once
// A backend: one Memory and the Kernels that run on it (ops/memory.hpp, ops/kernels.hpp), chosen by
// the config's `device` key. The model reaches every kernel and every buffer through one, so adding
// a backend never touches model code.
#include <cstdint>
#include <optional>
#include <string_view>

#include "ops/kernels.hpp"
#include "ops/memory.hpp"

namespace altgrad::ops {

enum class Device : std::uint8_t { cpu, cuda };

std::optional<Device> parse_device(std::string_view name);  // "cpu", "cuda"; nullopt for any other name

template <typename Scalar>
struct Backend {
  Device device;
  Memory* memory;
  Kernels<Scalar>* kernels;
};

// The CPU reference engine: host memory, the kernels of ops/cpu/.
template <typename Scalar>
Backend<Scalar> cpu_backend();

// The backend for `device`. Never falls back to another device: throws std::runtime_error naming
// what is missing (a build without the CUDA engine, no GPU, a Scalar the device does not compute in).
template <typename Scalar>
Backend<Scalar> backend_for(Device device);

}  // namespace altgrad::ops
