#pragma once
// Where a run's forward and backward passes run: a backend (ops/backend.hpp) and, for a device
// whose memory the host cannot read, the engine that quantizes hooked operands there
// (quant/engine.hpp; docs/cuda.md, "Training"). Without one, every hooked operand goes through the
// host's quantizer and back (train/staged_hooks.hpp).
#include "config/config.hpp"
#include "ops/backend.hpp"
#include "quant/engine.hpp"

namespace altgrad::train {

struct PassesDevice {
  ops::Backend<float> backend;
  quant::Engine* quantizer = nullptr;  // lives as long as the process
};

// The device a config names: the CPU's backend, or the GPU's with its quantizer
// (quant/cuda/device_quantize.hpp). Throws std::runtime_error naming what this build or this
// machine lacks; never another device in its place.
PassesDevice passes_device_for(config::Device device);

}  // namespace altgrad::train
