#include "model/activations.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/parameter_layout.hpp"

namespace altgrad::model {
namespace {

// Hands out consecutive views of one buffer. Run once over an empty buffer to count, then again
// over the allocated one: the same sequence of take() calls describes the layout both times.
template <typename Scalar>
class Carver {
 public:
  explicit Carver(std::span<Scalar> storage) : storage_(storage) {}

  std::span<Scalar> take(std::size_t n) {
    const std::size_t at = used_;
    used_ += n;
    return storage_.empty() ? std::span<Scalar>{} : storage_.subspan(at, n);
  }
  std::span<Scalar> take_if(bool present, std::size_t n) { return take(present ? n : 0); }
  std::size_t used() const { return used_; }

 private:
  std::span<Scalar> storage_;
  std::size_t used_ = 0;
};

template <typename Scalar>
void carve(Activations<Scalar>& a, Carver<Scalar>& carver) {
  const GptConfig& config = a.config;
  const std::size_t N = a.B * a.T, C = config.n_embd, V = config.vocab_size;
  const std::size_t H = hidden_size(config), I = mlp_inner_size(config);
  const bool layernorm = config.norm == Norm::layernorm;
  const bool copies = a.copies == OperandCopies::allocated;

  a.encoded = carver.take(N * C);
  for (LayerActivations<Scalar>& l : a.layers) {
    l.ln_1 = carver.take(N * C);
    l.ln_1_mean = carver.take_if(layernorm, N);
    l.ln_1_rstd = carver.take(N);
    l.qkv = carver.take(N * 3 * C);
    l.att_y = carver.take(N * C);
    l.att_probs = carver.take(a.B * config.n_head * a.T * a.T);
    l.att_proj = carver.take(N * C);
    l.residual2 = carver.take(N * C);
    l.ln_2 = carver.take(N * C);
    l.ln_2_mean = carver.take_if(layernorm, N);
    l.ln_2_rstd = carver.take(N);
    l.fc = carver.take(N * I);
    l.fc_act = carver.take(N * H);
    l.fc_proj = carver.take(N * C);
    l.residual3 = carver.take(N * C);
    l.ln_1_hooked = carver.take_if(copies, N * C);
    l.att_y_hooked = carver.take_if(copies, N * C);
    l.ln_2_hooked = carver.take_if(copies, N * C);
    l.fc_act_hooked = carver.take_if(copies, N * H);
    l.qkv_hooked = carver.take_if(copies, N * 3 * C);
    l.att_probs_hooked = carver.take_if(copies, a.B * config.n_head * a.T * a.T);
  }
  a.ln_f = carver.take(N * C);
  a.ln_f_mean = carver.take_if(layernorm, N);
  a.ln_f_rstd = carver.take(N);
  a.ln_f_hooked = carver.take_if(copies, N * C);
  a.logits = carver.take(N * V);
  a.probs = carver.take(N * V);
  a.losses = carver.take(N);
  a.hooked_weights = carver.take_if(copies, ParameterLayout(config).size());
  a.qkv_third = carver.take_if(copies, N * C);
  a.qkv_third_hooked = carver.take_if(copies, N * C);
  a.inp_hooked_scratch = carver.take_if(copies, N * std::max(C, H));

  ActivationGradients<Scalar>& g = a.grad;
  g.residual = carver.take(N * C);
  g.ln = carver.take(N * C);
  g.qkv = carver.take(N * 3 * C);
  g.att_y = carver.take(N * C);
  g.att_probs = carver.take(a.B * config.n_head * a.T * a.T);
  g.fc = carver.take(N * I);
  g.fc_act = carver.take(N * H);
  g.logits = carver.take(N * V);
  g.losses = carver.take(N);
  g.dout_hooked = carver.take_if(copies, N * std::max({3 * C, I, V}));
  g.dout_hooked_columns = carver.take_if(copies, N * std::max({3 * C, I, V}));
  g.inp_hooked_columns = carver.take_if(copies, N * std::max(C, H));
  g.weight_hooked_columns = carver.take_if(copies, C * std::max({3 * C, I, H, V}));
  g.qkv_hooked = carver.take_if(copies, N * 3 * C);
  g.att_probs_hooked = carver.take_if(copies, a.B * config.n_head * a.T * a.T);
}

void check_shape(const GptConfig& config, std::size_t B, std::size_t T) {
  validate(config);
  if (B == 0) throw std::invalid_argument("Activations: batch size B must be positive");
  if (T == 0 || T > config.block_size) {
    throw std::invalid_argument("Activations: sequence length T = " + std::to_string(T) +
                                " must be in [1, block_size = " + std::to_string(config.block_size) + "]");
  }
}

}  // namespace

template <typename Scalar>
Activations<Scalar>::Activations(const GptConfig& config_in, std::size_t B_in, std::size_t T_in,
                                 OperandCopies copies_in, ops::Memory& memory)
    : config(config_in), B(B_in), T(T_in), copies(copies_in) {
  check_shape(config, B, T);
  tokens = ops::Buffer<std::int32_t>(memory, B * T);
  targets = ops::Buffer<std::int32_t>(memory, B * T);
  host_rows.assign(B * T, Scalar{0});
  layers.resize(config.n_layer);
  Carver<Scalar> counter{std::span<Scalar>{}};
  carve(*this, counter);
  storage = ops::Buffer<Scalar>(memory, counter.used());
  Carver<Scalar> carver{storage.span()};
  carve(*this, carver);
}

template struct Activations<float>;
template struct Activations<double>;

}  // namespace altgrad::model
