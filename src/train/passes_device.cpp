#include "train/passes_device.hpp"

#include <string>

#if ALTGRAD_CUDA
#include "quant/cuda/device_quantize.hpp"
#endif

namespace altgrad::train {

PassesDevice passes_device_for(config::Device device) {
  const std::string_view name = config::kDeviceNames[static_cast<std::size_t>(device)];
  PassesDevice passes{ops::backend_for<float>(*ops::parse_device(name))};
#if ALTGRAD_CUDA
  if (device == config::Device::cuda) {
    // One for the process, made on the first device run (the backend's engine is one too).
    static quant::cuda::DeviceQuantizer quantizer;
    passes.quantizer = &quantizer;
  }
#endif
  return passes;
}

}  // namespace altgrad::train
