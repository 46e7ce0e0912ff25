#include "optim/adamw.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "format/parse.hpp"
#include "format/philox_key.hpp"
#include "optim/adam_moments.hpp"
#include "quant/chunked_reduction.hpp"

namespace altgrad::optim {
namespace {

// The gradient norm's chunks: at least 2^16 elements, at most 4096 chunks.
constexpr quant::Chunking kNormChunking{std::size_t{1} << 16, 4096};

// A moment kept as codes of `format_name`; exp_avg takes both signs, so it refuses unsigned formats.
QuantizedState moment_codes(const std::string& name, const std::string& format_name, bool needs_sign,
                            const StateGroups& groups, std::size_t size) {
  const format::Format f = format::make_format(format::parse_format(format_name));
  if (needs_sign && !f.has_sign) {
    throw std::invalid_argument("AdamW: " + name + " takes both signs, but format '" + format_name + "' is unsigned");
  }
  return {name, f, format::format_name(f.spec), groups, size};
}

// Where one group's moments live during a step: the FP32 state itself, or a copy decoded from codes.
struct MomentPlace {
  float* fp32;            // the FP32 state tensor, or null
  QuantizedState* codes;  // else the codes
  std::uint64_t stream;   // the Philox stream of this step's writes
};

float* moments_of_group(const MomentPlace& place, std::size_t g, std::size_t begin, float* scratch) {
  if (place.fp32) return place.fp32 + begin;
  place.codes->decode_group(g, scratch);
  return scratch;
}

// One group of AdamW's step with its moments decoded: the update in FP32, then the new moments
// rounded onto their format (the update reads the unrounded ones).
void adam_update_group(std::size_t g, const StateGroups& groups, float* p, const float* grad, float decay,
                       const AdamScalars& s, const MomentPlace& m_place, const MomentPlace& v_place,
                       const MomentStorage& storage, std::uint64_t key) {
  std::array<float, kMaxStateGroup> m_scratch, v_scratch;
  const std::size_t begin = groups.begin(g), count = groups.end(g) - begin;
  float* m = moments_of_group(m_place, g, begin, m_scratch.data());
  float* v = moments_of_group(v_place, g, begin, v_scratch.data());
  for (std::size_t k = 0; k < count; ++k) {
    p[begin + k] *= decay;
    p[begin + k] += -s.step_size * adam_direction(grad[begin + k], m[k], v[k], s);
  }
  if (m_place.codes) m_place.codes->encode_group(g, m, storage.rounding, key, m_place.stream);
  if (v_place.codes) v_place.codes->encode_group(g, v, storage.rounding, key, v_place.stream);
}

}  // namespace

AdamW::AdamW(std::size_t parameter_count, const AdamWConfig& config, std::vector<ParameterRange> ranges,
             const MomentStorage& storage)
    : Optimizer("AdamW", parameter_count, std::move(ranges)), config_(config), storage_(storage) {
  if (storage_.m_quantized() || storage_.v_quantized()) {
    if (storage_.group == 0 || storage_.group > kMaxStateGroup) {
      throw std::invalid_argument("AdamW: moment group size " + std::to_string(storage_.group) + " is not in [1, " +
                                  std::to_string(kMaxStateGroup) + "]");
    }
    groups_.emplace(this->ranges(), storage_.group);
  }
  m_ = storage_.m_quantized()
           ? add_quantized_state(moment_codes("exp_avg", storage_.m_format, true, *groups_, parameter_count))
           : add_state("exp_avg");
  v_ = storage_.v_quantized()
           ? add_quantized_state(moment_codes("exp_avg_sq", storage_.v_format, false, *groups_, parameter_count))
           : add_state("exp_avg_sq");
}

std::vector<Hyperparameter> AdamW::hyperparameters() const {
  return {{"beta1", config_.beta1}, {"beta2", config_.beta2}, {"eps", config_.eps}, {"weight_decay", config_.weight_decay}};
}

void AdamW::step(std::span<float> params, std::span<const float> grads, float lr) {
  check_step_sizes("AdamW", params.size(), grads.size());
  if (groups_) return step_quantized(params, grads, lr);
  const AdamScalars s = adam_scalars(config_, lr, advance_step());
  float* p = params.data();
  const float* g = grads.data();
  float* m = state_values(m_).data();
  float* v = state_values(v_).data();
  for (const auto& range : ranges()) {
    const float decay = range.decay ? static_cast<float>(1.0 - static_cast<double>(lr) * config_.weight_decay) : 1.0f;
    const std::size_t end = range.offset + range.size;
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = range.offset; i < end; ++i) {
      p[i] *= decay;
      p[i] += -s.step_size * adam_direction(g[i], m[i], v[i], s);
    }
  }
}

// Groups are independent (each reads and writes only its own elements, codes and scale) and the
// rounding draws depend on the element's offset, so any thread count gives the same bits.
void AdamW::step_quantized(std::span<float> params, std::span<const float> grads, float lr) {
  const std::int64_t step = advance_step();
  const AdamScalars s = adam_scalars(config_, lr, step);
  const auto place = [&](bool quantized, std::size_t index, std::uint64_t moment) {
    const auto stream = 2 * static_cast<std::uint64_t>(step) + moment;
    return quantized ? MomentPlace{nullptr, &quantized_values(index), stream}
                     : MomentPlace{state_values(index).data(), nullptr, stream};
  };
  const MomentPlace m_place = place(storage_.m_quantized(), m_, 0), v_place = place(storage_.v_quantized(), v_, 1);
  const std::uint64_t key = format::philox_key(storage_.seed, format::RandomPurpose::adam_state_rounding);
  const StateGroups& groups = *groups_;
  for (std::size_t r = 0; r < ranges().size(); ++r) {
    const float decay =
        ranges()[r].decay ? static_cast<float>(1.0 - static_cast<double>(lr) * config_.weight_decay) : 1.0f;
    const std::size_t first = groups.first_of_range(r), last = groups.first_of_range(r + 1);
#pragma omp parallel for schedule(static)
    for (std::size_t g = first; g < last; ++g) {
      adam_update_group(g, groups, params.data(), grads.data(), decay, s, m_place, v_place, storage_, key);
    }
  }
}

bool clips(double norm, double max_norm) { return max_norm > 0.0 && max_norm / (norm + 1e-6) < 1.0; }

double clip_grad_norm(std::span<float> grads, double max_norm) {
  const std::size_t n = grads.size();
  const double total = quant::reduce_in_chunks<double, kNormChunking>(n, [&](std::size_t begin, std::size_t end) {
    double sum = 0.0;
    for (std::size_t i = begin; i < end; ++i) sum += static_cast<double>(grads[i]) * grads[i];
    return sum;
  });
  const double norm = std::sqrt(total);
  if (clips(norm, max_norm)) {
    const auto scale = static_cast<float>(max_norm / (norm + 1e-6));
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) grads[i] *= scale;
  }
  return norm;
}

}  // namespace altgrad::optim
