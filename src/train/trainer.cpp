#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/quant_checkpoint.hpp"
#include "checkpoint/warm_start.hpp"
#include "recipe/recipe.hpp"
#include "format/parse.hpp"
#include "io/run_directory.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "monitor/run_log.hpp"
#include "monitor/step_observers.hpp"
#include "monitor/warnings.hpp"
#include "ops/backend.hpp"
#include "ops/cpu_arithmetic.hpp"
#include "optim/adamw.hpp"
#include "optim/make_optimizer.hpp"
#include "optim/schedule.hpp"
#include "precision/code_only_weights.hpp"
#include "precision/phase_switch.hpp"
#include "precision/quant_hooks.hpp"
#include "precision/weight_grids.hpp"
#include "train/device_replica.hpp"
#include "train/gradient_reduction.hpp"
#include "train/non_finite.hpp"
#include "train/optimizer_assignment.hpp"
#include "train/run_cost.hpp"
#include "train/tensorboard_log.hpp"
#include "train/training_data.hpp"


namespace altgrad::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Where the passes run: the config's device (or a test's), never another one in its place.
PassesDevice passes_device(const config::TrainConfig& c, const TrainOptions& options) {
  return options.passes_device ? *options.passes_device : passes_device_for(c.device);
}

// What a device run cannot do yet, refused before step 0 by the key that asks for it: the GPU's
// kernels have no emulated accumulation (docs/accumulation.md), and none runs in their place.
void check_device_support(const config::TrainConfig& c, const recipe::Schedule& schedule) {
  for (const recipe::Phase& p : schedule.phases) {
    if (recipe::emulated(p.recipe.accumulate) || p.recipe.accumulate_attention.emulated()) {
      throw config::ConfigError("device = \"" + std::string(config::kDeviceNames[static_cast<std::size_t>(c.device)]) +
                                "\": [quant] accumulate names a tensor-core accumulator model, which only the CPU "
                                "engine emulates (docs/cuda.md); use device = \"cpu\"");
    }
  }
}

optim::CosineSchedule schedule_of(const config::TrainConfig& c) {
  return {c.learning_rate, c.min_lr, static_cast<int>(c.warmup_iters), static_cast<int>(c.lr_decay_iters)};
}

// Everything one run holds, allocated once before the loop.
struct Session {
  const config::TrainConfig& config;
  // The run's model: the one the passes run on in a CPU run; in a device run its master copy in
  // host memory, beside `device`, the replica that runs the passes (device_replica.hpp).
  model::Gpt<float> model;
  recipe::Schedule schedule;
  std::size_t phase = 0;  // the schedule's phase the hooks, grids and codes are set up for
  recipe::Recipe recipe;  // that phase's
  std::optional<precision::QuantHooks> hooks;  // none when nothing is quantized or profiled: the FP32 path, uncopied
  std::optional<DeviceReplica> device;         // a device run's passes; none in a CPU run
  std::optional<model::Activations<float>> acts;  // a CPU run's passes' activations; none in a device run
  std::unique_ptr<optim::Optimizer> optimizer;
  precision::WeightGrids grids;
  optim::CodeWeights codes;  // master_weights = false: the weights gridwalk updates, as codes
  data::ByteDataset data;
  std::vector<std::int32_t> x, y;
  // grad_reduce_format: the step's micro-batch gradients, kept apart and summed in low precision
  // (gradient_reduction.hpp); none when the passes sum them in FP32.
  std::optional<GradientReduction> reduction;
  ReductionStats reduced;  // what the latest step's reduction did

  // How a sequence of passes sums its micro-batches' gradients: in FP32 as they run (every sum
  // without grad_reduce_format, and the unquantized reference gradient), or by the reduction.
  enum class Sum : bool { fp32, reduction };
  bool reducing = false;  // the passes since begin_passes are summed by the reduction
  int backward_passes = 0;  // since begin_passes

  Session(const config::TrainConfig& c, const PassesDevice& passes, const fs::path& repo_root)
      : config(c),
        model(config::gpt_config(c), passes.backend.memory->host_accessible() ? passes.backend : ops::cpu_backend<float>()),
        schedule(recipe::resolve_schedule(c)),
        recipe(schedule.phases.front().recipe),
        hooks(make_hooks(c, model, recipe)),
        optimizer(optim::make_optimizer(optimizer_spec(c), model.layout().size(), parameter_ranges(model.layout(), c))),
        grids(model.layout(), model.matmuls(), recipe, c.grid_format),
        data(load_training_data(c, repo_root)),
        x(static_cast<std::size_t>(c.batch_size * c.block_size)),
        y(x.size()),
        reduction(make_gradient_reduction(c, model.layout())) {
    const model::OperandCopies copies = hooks ? model::OperandCopies::allocated : model::OperandCopies::none;
    if (passes.backend.memory->host_accessible()) {
      acts.emplace(model.config(), batch(), static_cast<std::size_t>(c.block_size), copies);
    } else {
      check_device_support(c, schedule);
      device.emplace(model, passes, batch(), static_cast<std::size_t>(c.block_size), copies);
    }
    check_code_ranges();
  }

  std::size_t batch() const { return static_cast<std::size_t>(config.batch_size); }

  // Room for hooked operands in the passes' activations, or none.
  void use_copies(model::OperandCopies copies) {
    if (device) {
      device->use_copies(copies);
    } else if (acts->copies != copies) {
      acts.emplace(model.config(), acts->B, acts->T, copies);
    }
  }

  precision::QuantHooks* quant() { return hooks ? &*hooks : nullptr; }

  // Hooks where the recipe quantizes something or points are profiled; none for an FP32 run that
  // profiles nothing, whose path then stays uncopied.
  static std::optional<precision::QuantHooks> make_hooks(const config::TrainConfig& c, const model::Gpt<float>& model,
                                                         const recipe::Recipe& recipe) {
    std::optional<precision::QuantHooks> hooks;
    if (!recipe.any_enabled() && !c.profile_points && !recipe.hadamard.any()) return hooks;
    hooks.emplace(model.matmuls(), recipe);
    if (c.profile_points) hooks->enable_profiles(format::make_format(format::parse_format(c.range_fit_format)));
    return hooks;
  }

  // Code-only weights need a per-tensor or unscaled grid in every phase: found before step 0.
  void check_code_ranges() const {
    for (const recipe::Phase& p : schedule.phases) {
      const precision::WeightGrids phase_grids(model.layout(), model.matmuls(), p.recipe, config.grid_format);
      (void)precision::code_ranges(config, *optimizer, model.layout(), phase_grids, model.parameters());
    }
  }

  // Sets up phase `index` afresh: its recipe, hooks with empty scaling state, operand copies where
  // it quantizes, and its weight grids. Code weights are left as they are.
  void use_phase(std::size_t index) {
    phase = index;
    recipe = schedule.phases[index].recipe;
    hooks = make_hooks(config, model, recipe);
    use_copies(hooks ? model::OperandCopies::allocated : model::OperandCopies::none);
    grids = precision::WeightGrids(model.layout(), model.matmuls(), recipe, config.grid_format);
  }

  // The switch to phase `index` mid-run (docs/quantization.md, "Schedules and warm starts"):
  // scaling state carried where a point keeps it, optimizer state untouched, code weights
  // re-encoded where their grid's format changed. Returns what it did, for the phase event.
  nlohmann::json switch_phase(std::size_t index) {
    std::optional<precision::QuantHooks> before = std::move(hooks);
    use_phase(index);
    nlohmann::json report = {{"scaling_state", precision::carry_scaling_state(before ? &*before : nullptr, quant())}};
    if (!codes.tensors().empty()) {
      auto [reencoded, changes] =
          precision::reencode_weights(codes, config, *optimizer, model.layout(), grids, model.parameters());
      codes = std::move(reencoded);
      precision::bind_code_weights(codes, model.parameters(), grids, quant(), *optimizer);
      report["reencoded"] = std::move(changes);
    }
    return report;
  }

  // Before a sequence of passes: a device run's replica takes the parameters as they are now (the
  // optimizer or an observer may have changed them since), and the gradients start from zero.
  // Sum::reduction keeps each micro-batch's gradient apart where the run has a reduction.
  void begin_passes(Sum sum = Sum::fp32) {
    reducing = sum == Sum::reduction && reduction;
    backward_passes = 0;
    if (device) {
      device->begin(model.parameters());
    } else {
      model.zero_gradients();
    }
  }

  float forward(const data::BatchKey& key, precision::QuantHooks* with) {
    data.get_batch(key, config.batch_size, config.block_size, x, y);
    if (device) return device->forward(x, y, with);
    return model::gpt_forward(model, *acts, x, y, with);
  }

  // One micro-batch's backward pass: its gradient is added to the passes' sum, or, when the
  // reduction sums them, taken as the micro-batch's own, with the gradients zeroed for the next.
  void backward(precision::QuantHooks* with) {
    if (device) {
      device->backward(with);
    } else {
      model::gpt_backward(model, *acts, with);
    }
    if (!reducing) return;
    const std::span<float> own = reduction->micro_batch(backward_passes);
    ++backward_passes;
    if (device) {
      device->gradients_to(own);
      device->zero_gradients();
    } else {
      std::copy(model.gradients().begin(), model.gradients().end(), own.begin());
      model.zero_gradients();
    }
  }

  // After the backward passes: their summed gradients in model.gradients(), averaged over the
  // micro-batches; or the reduction's average of the micro-batch gradients.
  void end_passes() {
    if (reducing) {
      reducing = false;
      reduced = reduction->reduce(model.gradients());
      return;
    }
    if (device) device->gradients_to(model.gradients());
    if (config.gradient_accumulation_steps == 1) return;
    const float inverse = 1.0f / static_cast<float>(config.gradient_accumulation_steps);
    for (float& g : model.gradients()) g *= inverse;
  }

  // The last pass's activations, on the host.
  const model::Activations<float>& activations() { return device ? device->activations_on_host(model) : *acts; }

  // Validation loss with the recipe's forward pass, changing no quantization state.
  double evaluate() {
    if (hooks) hooks->set_frozen(true);
    if (device) device->begin(model.parameters());
    double sum = 0.0;
    for (int i = 0; i < config.eval_iters; ++i) {
      sum += forward(data::BatchKey::evaluation(data::Split::val, static_cast<std::uint64_t>(i)), quant());
    }
    if (hooks) hooks->set_frozen(false);
    return sum / config.eval_iters;
  }

  // Gradients of the step's batch without quantization, at the current parameters, into `out`.
  // Touches no quantization state, and the step's own forward and backward overwrite everything
  // else it writes (activations, model gradients).
  void unquantized_gradient(std::int64_t step, std::span<float> out) {
    begin_passes();
    for (int micro = 0; micro < config.gradient_accumulation_steps; ++micro) {
      forward(data::BatchKey::training(static_cast<std::uint64_t>(step), static_cast<std::uint32_t>(micro)), nullptr);
      backward(nullptr);
    }
    end_passes();
    std::copy(model.gradients().begin(), model.gradients().end(), out.begin());
  }

  // Where the first NaN or Inf of this step was: a quantization point, else a layer. A device
  // run's gradients are brought to the host first, as they stand.
  std::string locate_non_finite() {
    if (hooks && hooks->first_non_finite()) {
      const precision::NonFinitePoint& p = *hooks->first_non_finite();
      return "first non-finite value at quantization point " + p.name +
             (p.injected ? " (NaN injected there by --inject-nan)" : " (" + std::to_string(p.count) + " NaN/Inf inputs)");
    }
    if (const auto layer = first_non_finite_activation(activations())) return "first non-finite activation: " + *layer;
    if (device) device->gradients_to(model.gradients());
    if (const auto tensor = first_non_finite_gradient(model)) return "first non-finite gradient: " + *tensor;
    return "no tensor holds the non-finite value any more";
  }
};

class Progress {
 public:
  Progress(const TrainOptions& o, std::int64_t total) : out_(o.progress), terminal_(o.terminal), total_(total) {}

  void step(std::int64_t step, double loss, double lr, double tokens_per_s, double seconds_left) {
    if (!out_) return;
    char line[160];
    std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  ETA %s",
                  static_cast<long long>(step), static_cast<long long>(total_), loss, lr, tokens_per_s,
                  eta(seconds_left).c_str());
    if (terminal_) {
      *out_ << '\r' << line << "\033[K" << std::flush;
    } else {
      *out_ << line << '\n' << std::flush;
    }
  }

  void note(const std::string& text) {
    if (!out_) return;
    if (terminal_) *out_ << '\r' << "\033[K";
    *out_ << text << '\n' << std::flush;
  }

 private:
  static std::string eta(double seconds) {
    char buf[32];
    const long s = static_cast<long>(seconds + 0.5);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
    return buf;
  }
  std::ostream* out_;
  bool terminal_;
  std::int64_t total_;
};

// The whole run: the session plus what the loop reports to.
class Run {
 public:
  Run(const config::TrainConfig& config, const TrainOptions& options)
      : config_(config),
        options_(options),
        s_(config, passes_device(config, options), options.repo_root),
        state_{0, config.seed, std::nan(""), std::numeric_limits<double>::infinity(), -1, {}, std::nan(""), std::nan(""), {}},
        observers_(monitor::step_observers(config, s_.model.layout().size())) {
    if (options.resume) {
      restore();
    } else if (!config.init_from.empty()) {
      warm_start();
    } else {
      s_.model.initialize(config.seed);
      s_.codes = precision::encode_weights(config, *s_.optimizer, s_.model.layout(), s_.grids, s_.model.parameters());
    }
    precision::bind_code_weights(s_.codes, s_.model.parameters(), s_.grids, s_.quant(), *s_.optimizer);
    if (options.inject_nan) inject(*options.inject_nan);
    // Only now, after every check a start makes: a refused start leaves no directory behind.
    fs::create_directories(options.run_dir);
    config::write_config(options.run_dir / io::run_directory::kConfig, config_with_provenance());
    checkpoint::write_schedule(options.run_dir / "recipe.json", s_.schedule);
    write_optimizer_assignment(options.run_dir / "optimizer.json", *s_.optimizer, s_.model.layout(), &s_.grids);
  }

  TrainOutcome run() {
    if (s_.device) s_.device->memory().reset_peak();
    clock_.emplace(options_.run_dir, options_.resume ? std::optional<std::int64_t>(state_.step) : std::nullopt);
    if (options_.resume) target_event_ = earlier_target_event(options_.run_dir, state_.step);
    monitor::RunLog log(options_.run_dir, options_.resume ? state_.step : -1);
    Progress progress(options_, config_.max_iters);
    monitor::Warnings warnings(log, [&](const std::string& text) { progress.note(text); }, config_.warn_every);
    for (const auto& o : observers_) o->begin_phase(s_.quant(), s_.recipe);
    TensorBoardLog tensorboard(options_.run_dir);
    // The kernel decides the bits (docs/determinism.md): which one ran, why, and on what CPU.
    const ops::CpuArithmetic cpu = ops::cpu_arithmetic();
    nlohmann::json start = {{io::run_directory::kEventKey, options_.resume ? io::run_directory::kResumeEvent : io::run_directory::kStartEvent}, {"step", state_.step},
                            {"parameters", s_.model.layout().size()}, {"recipe", s_.recipe.preset},
                            {"device", config::kDeviceNames[static_cast<std::size_t>(config_.device)]},
                            {"optimizer", s_.optimizer->name()}, {"blas_kernel", cpu.blas_kernel},
                            {"blas_kernel_source", cpu.blas_kernel_source},
                            {"blas_kernel_openblas_pick", cpu.blas_openblas_pick}, {"blas_library", cpu.blas_library},
                            {"gemm_kernel", cpu.gemm_kernel}, {"cpu", cpu.cpu}};
    if (scheduled()) start.update({{"phases", s_.schedule.phases.size()}, {"phase", s_.phase}});
    if (!warm_start_.is_null()) start["init_from"] = warm_start_;
    log.event(start);
    if (s_.device) {
      progress.note("device " + std::string(config::kDeviceNames[static_cast<std::size_t>(config_.device)]) +
                    ": the forward and backward passes run there; the optimizer, the quantizer and the diagnostics "
                    "on the host (docs/cuda.md, \"Training\")");
    }
    Loop loop{log, progress, warnings, tensorboard};
    TrainOutcome outcome{options_.run_dir, {}, state_.step, std::nan(""), std::string(io::run_directory::kCompleted), 0, false, 0, {}};
    const auto started = Clock::now();
    const std::int64_t first_step = state_.step;
    for (std::int64_t step = state_.step; step < config_.max_iters; ++step) {
      if (!train_step(step, loop, outcome)) break;
      if (interrupted(step + 1, loop, outcome)) break;
      const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
      const std::int64_t done = step + 1;
      const double per_step = elapsed / static_cast<double>(done - first_step);
      // A terminal gets a line redrawn every step; a log file one line per log_interval.
      if (options_.terminal || done % config_.log_interval == 0 || done == config_.max_iters) {
        progress.step(done, last_loss_, last_lr_, last_tokens_per_s_,
                      per_step * static_cast<double>(config_.max_iters - done));
      }
    }
    tensorboard.flush();
    outcome.warnings = warnings.emitted();
    outcome.parameters = s_.model.layout().size();
    outcome.memory = optim::memory_footprint(*s_.optimizer, &s_.codes);
    nlohmann::json end = {{io::run_directory::kEventKey, io::run_directory::kEndEvent}, {"step", outcome.steps}, {io::run_directory::kReasonKey, outcome.stop_reason},
                          {"warnings", warnings.emitted()}, {"warnings_suppressed", warnings.suppressed()}};
    // An interrupted run is not finished: a sweep resumes it rather than reporting it stopped.
    if (outcome.interrupted) end[io::run_directory::kInterruptedKey] = true;
    end["memory"] = memory_json(outcome.memory);
    end["cost"] = cost_json(outcome);
    log.event(end);
    return outcome;
  }

 private:
  struct Loop {
    monitor::RunLog& log;
    Progress& progress;
    monitor::Warnings& warnings;
    TensorBoardLog& tensorboard;
  };

  bool scheduled() const { return s_.schedule.phases.size() > 1; }

  // Before step `step`: when a new phase of the schedule begins, switches to it and says so in
  // events.jsonl and on the terminal.
  void enter_phase(std::int64_t step, Loop& loop) {
    const std::size_t index = s_.schedule.phase_at(step);
    if (index == s_.phase) return;
    nlohmann::json event = {{"event", "phase"}, {"step", step}, {"phase", index}, {"from_phase", s_.phase},
                            {"recipe", s_.schedule.phases[index].recipe.preset}};
    event.update(s_.switch_phase(index));
    for (const auto& o : observers_) o->begin_phase(s_.quant(), s_.recipe);
    loop.log.event(event);
    loop.progress.note("phase " + std::to_string(index) + " from step " + std::to_string(step) + ": recipe " +
                       s_.recipe.preset);
  }

  void restore() {
    const fs::path from = checkpoint::resolve_checkpoint(options_.run_dir);
    if (checkpoint::load_checkpoint_config(from) != s_.model.config()) {
      throw io::CheckpointError(from.string() + ": the checkpoint's model config differs from the run's config.toml");
    }
    state_ = checkpoint::load_state(from);
    // The phase that ran the checkpoint's last step: its state is what the checkpoint holds. A
    // switch due at the next step happens in the loop, as in an uninterrupted run.
    s_.use_phase(s_.schedule.phase_at(std::max<std::int64_t>(state_.step - 1, 0)));
    s_.codes = checkpoint::load_model(from, s_.model);
    checkpoint::check_code_weights(
        from, s_.codes, s_.model.layout(),
        precision::code_ranges(config_, *s_.optimizer, s_.model.layout(), s_.grids, s_.model.parameters()));
    checkpoint::load_optimizer(from, *s_.optimizer);
    if (const auto saved = checkpoint::load_checkpoint_recipe(from, s_.model.matmuls());
        saved && recipe::recipe_to_json(*saved) != recipe::recipe_to_json(s_.recipe)) {
      throw io::CheckpointError(from.string() + ": the checkpoint's quantization recipe differs from the run's config.toml" +
                                (scheduled() ? " (phase " + std::to_string(s_.phase) + " of its schedule)" : ""));
    }
    if (s_.hooks) checkpoint::load_quant_state(from, *s_.hooks);
    for (const auto& o : observers_) o->restore(state_);
  }

  // Step 0 from another run's checkpoint (warm_start.hpp): its weights, decoded and re-encoded
  // where this run keeps codes of another format; its optimizer state and scaling histories as
  // init_optimizer and init_quant_state say. The step counter and everything else start afresh.
  void warm_start() {
    const checkpoint::WarmStartSource source = checkpoint::find_warm_start(config_);
    const fs::path& from = source.checkpoint;
    warm_start_ = source.provenance();
    // Every error names init_from and its value, as find_warm_start's do (docs/quantization.md).
    const auto from_source = [&](const std::string& key, const auto& load) {
      try {
        return load();
      } catch (const io::CheckpointError& e) {
        throw config::ConfigError("init_from = \"" + config_.init_from + "\"" + key + ": " + e.what());
      }
    };
    auto [codes, reencoded] = from_source("", [&] {
      return precision::reencode_weights(checkpoint::load_model(from, s_.model), config_, *s_.optimizer,
                                         s_.model.layout(), s_.grids, s_.model.parameters());
    });
    s_.codes = std::move(codes);
    if (!reencoded.empty()) warm_start_["reencoded"] = std::move(reencoded);
    warm_start_["optimizer"] = config_.init_optimizer;
    if (config_.init_optimizer) {
      from_source(", init_optimizer = true",
                  [&] { checkpoint::load_optimizer(from, *s_.optimizer, checkpoint::OptimizerLoad::warm_start); });
    }
    if (config_.init_quant_state) warm_start_["scaling_state"] = source_scaling_state(from);
  }

  // The source checkpoint's delayed-scaling histories, carried where a point keeps them.
  nlohmann::json source_scaling_state(const fs::path& from) {
    std::optional<precision::QuantHooks> source;
    if (const auto recipe = checkpoint::load_checkpoint_recipe(from, s_.model.matmuls());
        recipe && recipe->any_enabled()) {
      source.emplace(s_.model.matmuls(), *recipe);
      checkpoint::load_quant_state(from, *source);
    }
    return precision::carry_scaling_state(source ? &*source : nullptr, s_.quant());
  }

  // The config as run: a warm start's source pinned by its step and checksum, so that rerunning
  // config.toml checks it starts from the same weights.
  config::TrainConfig config_with_provenance() const {
    config::TrainConfig written = config_;
    if (!warm_start_.is_null()) {
      const bool checkpoint_named = fs::exists(fs::path(config_.init_from) / io::run_directory::kModel);
      written.init_from_step = checkpoint_named ? 0 : warm_start_.at("step").get<std::int64_t>();
      written.init_from_checksum = warm_start_.at("model_crc32c").get<std::string>();
    }
    return written;
  }

  void inject(const std::pair<std::string, std::int64_t>& where) {
    if (where.second < 1) throw config::ConfigError("--inject-nan: steps count from 1, got " + std::to_string(where.second));
    const auto points = s_.model.matmuls().operands();
    const auto found = std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.name == where.first; });
    if (found == points.end()) {
      throw config::ConfigError("--inject-nan: no quantization point named \"" + where.first + "\"");
    }
    if (!s_.hooks) s_.hooks.emplace(s_.model.matmuls(), s_.recipe);
    s_.use_copies(model::OperandCopies::allocated);
    // Step N is the N-th optimizer update; the hooks number the step in progress from 0.
    s_.hooks->inject_nan(found->index, where.second - 1);
  }

  // `done` is the failed step's number as metrics count it: the update it would have made.
  bool stop(std::int64_t done, const std::string& what, Loop& loop, TrainOutcome& outcome) {
    return stop_with(done, what + " at step " + std::to_string(done) + "; " + s_.locate_non_finite(), loop, outcome);
  }

  // The stop event and the terminal's note for a run that ends at step `done` for `reason`.
  bool stop_with(std::int64_t done, const std::string& reason, Loop& loop, TrainOutcome& outcome) {
    outcome.stop_reason = reason;
    loop.log.event({{io::run_directory::kEventKey, io::run_directory::kStopEvent}, {"step", done},
                    {io::run_directory::kReasonKey, reason}});
    loop.progress.note("stopped: " + reason + " (the last good checkpoint is kept)");
    return false;
  }

  bool loss_diverged(double loss) const {
    return config_.stop_loss_multiple > 0 && loss > config_.stop_loss_multiple * state_.initial_loss;
  }

  // The stop_loss_multiple criterion: the step's loss, before its update, against the first step's.
  bool stop_diverged(std::int64_t done, double loss, Loop& loop, TrainOutcome& outcome) {
    char text[200];
    std::snprintf(text, sizeof text, "loss diverged at step %lld: loss %.6g is above stop_loss_multiple %g x the first step's loss %.6g",
                  static_cast<long long>(done), loss, config_.stop_loss_multiple, state_.initial_loss);
    return stop_with(done, text, loop, outcome);
  }

  // What step `done` does beyond training: a metrics line every log_interval, at the last step, at
  // each phase's last step (so that no line mixes two phases' statistics) and at evaluations, and
  // whatever the observers ask for.
  monitor::StepPlan plan_step(std::int64_t done) const {
    const bool phase_ends = scheduled() && s_.schedule.phase_at(done) != s_.phase;
    monitor::StepPlan plan;
    plan.logged = done % config_.log_interval == 0 || done == config_.max_iters || phase_ends ||
                  done % config_.eval_interval == 0;
    for (const auto& o : observers_) o->plan(done, plan);
    return plan;
  }

  monitor::RunView view_of(std::int64_t step, Loop& loop) {
    const auto unquantized_gradient = [this, step](std::span<float> out) { s_.unquantized_gradient(step, out); };
    const auto activations = [this]() -> const model::Activations<float>& { return s_.activations(); };
    return {config_, s_.model, activations, s_.quant(), *s_.optimizer, s_.grids, loop.warnings, unquantized_gradient};
  }

  // Every observer's `phase` of this step, in their order.
  template <typename Phase>
  void observe(Phase phase, monitor::RunView& run, monitor::StepRecord& record) {
    for (const auto& o : observers_) ((*o).*phase)(run, record);
  }

  // One optimizer step; false when the run must stop.
  bool train_step(std::int64_t step, Loop& loop, TrainOutcome& outcome) {
    const std::int64_t done = step + 1;
    enter_phase(step, loop);
    monitor::StepRecord record;
    record.step = step;
    record.done = done;
    record.plan = plan_step(done);
    monitor::RunView run = view_of(step, loop);
    observe(&monitor::StepObserver::before_step, run, record);
    const auto t0 = Clock::now();
    observe(&monitor::StepObserver::before_forward, run, record);
    // The error sums behind rel_error only where a metrics line will report them
    // (docs/quantization.md, "Which steps gather what"); they change no bit of the step.
    const quant::ErrorSums error_sums = record.plan.logged ? quant::ErrorSums::gather : quant::ErrorSums::skip;
    if (s_.hooks) s_.hooks->begin_step(step, record.plan.point_details, record.plan.point_details, error_sums);
    if (s_.hooks) s_.hooks->gather_hadamard_statistics(record.plan.logged);
    s_.begin_passes(Session::Sum::reduction);
    double loss = 0.0;
    for (int micro = 0; micro < config_.gradient_accumulation_steps; ++micro) {
      const float micro_loss = s_.forward(data::BatchKey::training(static_cast<std::uint64_t>(step), static_cast<std::uint32_t>(micro)), s_.quant());
      if (!std::isfinite(micro_loss)) return stop(done, "non-finite loss", loop, outcome);
      loss += micro_loss;
      s_.backward(s_.quant());
    }
    loss /= config_.gradient_accumulation_steps;
    if (!std::isfinite(state_.initial_loss)) state_.initial_loss = loss;
    if (loss_diverged(loss)) return stop_diverged(done, loss, loop, outcome);
    s_.end_passes();
    if (s_.reduction) {  // docs/optimizers.md, "Low-precision gradient reduction"
      const auto pct = [&](std::uint64_t n) {
        return 100.0 * static_cast<double>(n) / static_cast<double>(s_.reduced.roundings);
      };
      record.metrics["grad_reduce"] = {{"overflow_pct", pct(s_.reduced.overflow)},
                                       {"underflow_pct", pct(s_.reduced.underflow)}};
    }
    if (s_.hooks) s_.hooks->end_step();
    record.loss = loss;
    observe(&monitor::StepObserver::after_backward, run, record);

    record.grad_norm = optim::clip_grad_norm(s_.model.gradients(), config_.grad_clip);
    if (!std::isfinite(record.grad_norm)) return stop(done, "non-finite gradient norm", loop, outcome);
    observe(&monitor::StepObserver::after_clip, run, record);

    const double lr = schedule_of(config_).at(static_cast<int>(step));
    s_.grids.update(*s_.optimizer, s_.quant(), s_.model.parameters());
    observe(&monitor::StepObserver::before_update, run, record);
    s_.optimizer->step(s_.model.parameters(), s_.model.gradients(), static_cast<float>(lr));
    observe(&monitor::StepObserver::after_update, run, record);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    last_loss_ = loss;
    last_lr_ = lr;
    last_tokens_per_s_ = static_cast<double>(config_.batch_size) * config_.block_size *
                         config_.gradient_accumulation_steps / seconds;
    persist(record, lr, loop, outcome);
    return true;
  }

  // The step's metrics line, evaluation and checkpoint.
  void persist(monitor::StepRecord& record, double lr, Loop& loop, TrainOutcome& outcome) {
    const std::int64_t done = record.done;
    nlohmann::json& metrics = record.metrics;
    metrics.update({{"step", done}, {"loss", record.loss}, {"lr", lr}, {"grad_norm", record.grad_norm},
                    {"tokens_per_s", last_tokens_per_s_}});
    if (scheduled()) metrics["phase"] = s_.phase;
    const bool last = done == config_.max_iters;
    state_.val_loss = std::nan("");  // until this step is evaluated
    if (done % config_.eval_interval == 0 || last) evaluate(done, metrics, loop, outcome);
    if (record.plan.logged) {
      monitor::add_scalars_of(metrics, record.scalars);
      loop.log.metrics(metrics);
      loop.tensorboard.write(done, record.scalars);
    }
    state_.step = done;
    const bool checkpoint_due = config_.checkpoint_interval > 0 && done % config_.checkpoint_interval == 0;
    if (checkpoint_due || last || done == state_.best_step) checkpoint(done, loop, outcome);
    outcome.steps = done;
  }

  // The end event's cost of the result (run_cost.hpp): "not reached" is reached = false with null
  // step, tokens and seconds.
  nlohmann::json cost_json(const TrainOutcome& outcome) const {
    const bool reached = !target_event_.is_null();
    const auto field = [&](const char* key) { return reached ? target_event_.at(key) : nlohmann::json(); };
    nlohmann::json cost = {{"target_loss", config_.target_loss > 0 ? nlohmann::json(config_.target_loss) : nlohmann::json()},
            {"reached", reached},
            {"step", field("step")},
            {"tokens", field("tokens")},
            {"seconds", field("seconds")},
            {"train_seconds", clock_->seconds()},
            {"peak_rss_bytes", peak_rss_bytes()},
            {"checkpoint_bytes", outcome.last_checkpoint.empty() ? 0 : directory_bytes(outcome.last_checkpoint)}};
    if (s_.device) {
      if (const auto peak = s_.device->memory().peak_allocated_bytes()) cost["peak_device_bytes"] = *peak;
    }
    return cost;
  }

  static nlohmann::json memory_json(const optim::MemoryFootprint& m) {
    nlohmann::json state = nlohmann::json::object();
    for (const optim::StateBytes& s : m.state) state[s.name] = s.bytes;
    return {{"weight_bytes", m.weight_bytes}, {"optimizer_state_bytes", m.state_bytes()},
            {"total_bytes", m.total_bytes()}, {"state_bytes", state}, {"code_weights", m.code_weights},
            {"decoded_weight_bytes", m.decoded_weight_bytes}};
  }

  void evaluate(std::int64_t done, nlohmann::json& metrics, Loop& loop, TrainOutcome& outcome) {
    state_.val_loss = s_.evaluate();
    metrics["val_loss"] = state_.val_loss;
    metrics["val_perplexity"] = std::exp(state_.val_loss);
    if (state_.val_loss < state_.best_val_loss) {
      state_.best_val_loss = state_.val_loss;
      state_.best_step = done;
    }
    outcome.final_val_loss = state_.val_loss;
    if (config_.target_loss > 0 && target_event_.is_null() && state_.val_loss <= config_.target_loss) {
      const std::int64_t tokens = done * config_.batch_size * config_.block_size * config_.gradient_accumulation_steps;
      target_event_ = {{"event", "target"}, {"step", done}, {"val_loss", state_.val_loss},
                       {"target_loss", config_.target_loss}, {"tokens", tokens}, {"seconds", clock_->seconds()}};
      loop.log.event(target_event_);
    }
    char line[96];
    std::snprintf(line, sizeof line, "step %lld: val loss %.4f (perplexity %.2f)", static_cast<long long>(done),
                  state_.val_loss, std::exp(state_.val_loss));
    loop.progress.note(line);
  }

  void checkpoint(std::int64_t done, Loop& loop, TrainOutcome& outcome) {
    for (const auto& o : observers_) o->save(state_);
    outcome.last_checkpoint = checkpoint::save_checkpoint(
        options_.run_dir, s_.model, *s_.optimizer, state_,
        [&](const fs::path& dir) { checkpoint::save_quant_state(dir, s_.recipe, s_.quant()); }, &s_.codes);
    checkpoint::prune_checkpoints(options_.run_dir, config_.keep_checkpoints, state_.best_step);
    loop.log.event({{"event", "checkpoint"}, {"step", done}, {"path", outcome.last_checkpoint.string()},
                    {"train_seconds", clock_->seconds()}});
    checkpointed_step_ = done;
  }

  // At the boundary after step `done`: when the caller asks to stop (a signal), checkpoints this
  // step unless it just did, so a resumed run continues from exactly here. The last step needs no
  // interruption: the run completes.
  bool interrupted(std::int64_t done, Loop& loop, TrainOutcome& outcome) {
    if (!options_.interruption || done == config_.max_iters) return false;
    const std::optional<std::string> cause = options_.interruption();
    if (!cause) return false;
    if (checkpointed_step_ != done) checkpoint(done, loop, outcome);
    outcome.interrupted = true;
    outcome.stop_reason = "interrupted by " + *cause + " after step " + std::to_string(done) +
                          "; checkpoint step_" + std::to_string(done) + " written, continue with --resume";
    loop.log.event({{io::run_directory::kEventKey, io::run_directory::kStopEvent}, {"step", done}, {io::run_directory::kReasonKey, outcome.stop_reason}, {io::run_directory::kInterruptedKey, true}});
    loop.progress.note("stopped: " + outcome.stop_reason);
    return true;
  }

  const config::TrainConfig& config_;
  const TrainOptions& options_;
  Session s_;
  checkpoint::CheckpointState state_;
  std::vector<std::unique_ptr<monitor::StepObserver>> observers_;  // the monitors (step_observers.hpp)
  nlohmann::json warm_start_;                  // the source of a warm start (provenance), else null
  std::optional<RunClock> clock_;              // training seconds, across resumes
  nlohmann::json target_event_;                // when target_loss was first reached, else null
  double last_loss_ = 0, last_lr_ = 0, last_tokens_per_s_ = 0;
  std::int64_t checkpointed_step_ = -1;  // the step of this process's latest checkpoint
};

}  // namespace

TrainOutcome train(const config::TrainConfig& config, const TrainOptions& options) { return Run(config, options).run(); }

}  // namespace altgrad::train
