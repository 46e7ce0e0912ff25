#include "model/sample.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <vector>

#include "format/philox.hpp"
#include "format/philox_key.hpp"
#include "model/activations.hpp"

namespace altgrad::model {
namespace {

// Index drawn from softmax(logits / temperature) restricted to the top k, with uniform u in [0, 1).
std::size_t draw(std::span<const float> logits, const SampleOptions& options, double u) {
  const std::size_t V = logits.size();
  std::vector<std::size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  const std::size_t k = options.top_k == 0 ? V : std::min(options.top_k, V);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
  const double top = logits[order[0]];
  std::vector<double> weights(k);
  for (std::size_t i = 0; i < k; ++i) weights[i] = std::exp((logits[order[i]] - top) / options.temperature);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double target = u * total;
  for (std::size_t i = 0; i < k; ++i) {
    if (target < weights[i]) return order[i];
    target -= weights[i];
  }
  return order[k - 1];
}

}  // namespace

std::string sample(const Gpt<float>& model, std::string_view prompt, const SampleOptions& options,
                   MatmulHooks<float>* hooks) {
  if (!(options.temperature > 0.0)) throw std::invalid_argument("sample: temperature must be > 0");
  const std::size_t block = model.config().block_size;
  const std::size_t V = model.config().vocab_size;
  std::vector<std::int32_t> context(prompt.begin(), prompt.end());
  for (auto& token : context) token = static_cast<std::uint8_t>(token);
  if (context.empty()) context.push_back('\n');  // nanoGPT starts from a newline by default
  std::string generated;
  const std::uint64_t key = format::philox_key(options.seed, format::RandomPurpose::text_sampling);
  // Made anew only while the window grows: once it is block_size long, every token reuses them.
  std::optional<Activations<float>> acts;
  std::vector<float> last(V);  // the last position's logits, on the host
  for (std::size_t i = 0; i < options.tokens; ++i) {
    const std::size_t T = std::min(context.size(), block);
    if (!acts || acts->T != T) {
      acts.emplace(model.config(), 1, T, hooks ? OperandCopies::allocated : OperandCopies::none,
                   *model.backend().memory);
    }
    const std::span<const std::int32_t> window(context.data() + context.size() - T, T);
    gpt_forward(model, *acts, window, {}, hooks);
    ops::download(*model.backend().memory, std::span<float>(last),
                  std::span<const float>(acts->logits.subspan((T - 1) * V, V)));
    const double u = format::philox_word(key, 0, i) * 0x1p-32;
    const auto next = static_cast<std::int32_t>(draw(last, options, u));
    context.push_back(next);
    generated.push_back(static_cast<char>(next));
  }
  return generated;
}

}  // namespace altgrad::model
