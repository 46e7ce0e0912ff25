#pragma once
// Detectors of sudden jumps in the training signals, called once per step by the trainer.
//
// LossSpikeDetector: step s is flagged when loss_s > ratio · loss_{s−1} (ratio 2 by default). The
//   first observed step is never flagged. Non-finite losses are not its concern (a separate check
//   reports them): comparisons with NaN are false, so a NaN loss is not flagged and the step after
//   it is not either.
//
// GradNormSpikeDetector: step s is flagged when norm_s > ratio · median(the last `window` recorded
//   norms), defaults ratio 100 and window 100, and only once at least `min_history` (default 10)
//   norms are recorded; until then nothing is flagged. The median of an even count is the mean of
//   the two middle values. Every finite norm is recorded after the comparison, flagged or not (the
//   median shrugs off a few spikes). A non-finite norm is neither flagged nor recorded, so it cannot
//   poison the median. The history is a ring buffer of `window` slots allocated at construction;
//   history() and restore() carry it through a checkpoint.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace altgrad::diag {

class LossSpikeDetector {
 public:
  // Throws std::invalid_argument unless ratio > 0.
  explicit LossSpikeDetector(double ratio = 2.0);

  // Records this step's loss; true when it is a spike against the previous step's.
  bool observe(double loss);

  // The previous step's loss (none before the first step), for a checkpoint.
  std::optional<double> previous() const { return previous_; }
  void restore(std::optional<double> previous) { previous_ = previous; }

 private:
  double ratio_;
  std::optional<double> previous_;
};

struct GradNormSpikeOptions {
  double ratio = 100.0;
  std::size_t window = 100;
  std::size_t min_history = 10;
};

class GradNormSpikeDetector {
 public:
  // Throws std::invalid_argument unless ratio > 0 and 1 ≤ min_history ≤ window.
  explicit GradNormSpikeDetector(GradNormSpikeOptions options = {});

  // Compares this step's gradient norm with the history, then records it; true when it is a spike.
  bool observe(double norm);

  // Median of the recorded norms; NaN when none is recorded.
  double median() const;

  // The recorded norms, oldest first (at most `window`).
  std::vector<double> history() const;

  // Replaces the history with `norms`, oldest first; when there are more than `window`, the newest
  // `window` are kept. Throws std::invalid_argument on a non-finite norm.
  void restore(std::span<const double> norms);

  const GradNormSpikeOptions& options() const { return options_; }

 private:
  void record(double norm);

  GradNormSpikeOptions options_;
  std::vector<double> ring_;             // (window) slots, the oldest at next_ once full
  std::size_t next_ = 0;                 // slot the next norm goes to
  std::size_t size_ = 0;                 // norms recorded, ≤ window
  mutable std::vector<double> scratch_;  // (window) working copy for the median's selection
};

}  // namespace altgrad::diag
