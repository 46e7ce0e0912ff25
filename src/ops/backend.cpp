// Choosing a backend by device (ops/backend.hpp).
#include "ops/backend.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "ops/cpu/cpu_backend.hpp"
#if defined(ALTGRAD_CUDA)
#include "ops/cuda/cuda_backend.hpp"
#endif

namespace altgrad::ops {

std::optional<Device> parse_device(std::string_view name) {
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") return Device::cuda;
  return std::nullopt;
}

template <typename Scalar>
Backend<Scalar> cpu_backend() {
  return {Device::cpu, &host_memory(), &cpu::kernels<Scalar>()};
}

template <typename Scalar>
Backend<Scalar> backend_for(Device device) {
  if (device == Device::cpu) return cpu_backend<Scalar>();
#if defined(ALTGRAD_CUDA)
  if constexpr (std::is_same_v<Scalar, float>) {
    try {
      return cuda::backend();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("device \"cuda\": " + std::string(e.what()));
    }
  } else {
    throw std::runtime_error(
        "device \"cuda\" computes in float only; double (the gradient checks' precision) runs on device \"cpu\"");
  }
#else
  throw std::runtime_error(
      "device \"cuda\": this build of AltGrad has no CUDA engine; configure it on a machine with CUDA's "
      "compiler (nvcc) and -DALTGRAD_CUDA=ON, or use device = \"cpu\"");
#endif
}

template Backend<float> cpu_backend<float>();
template Backend<double> cpu_backend<double>();
template Backend<float> backend_for<float>(Device);
template Backend<double> backend_for<double>(Device);

}  // namespace altgrad::ops
