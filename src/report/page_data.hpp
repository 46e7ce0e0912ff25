#pragma once
// The data behind report.html, as one JSON object the page's script draws from. Series are
// downsampled (downsample_indices) and rounded to 4 significant digits so a 50-run sweep stays a
// few MB: top-level metrics (loss, val_loss, grad_norm, ...) keep at most kCurvePoints points per
// group (downsample_indices on the seeds' mean); the lines of every other chart share at most
// about kDiagnosticPoints steps (downsample_indices on the largest and on the smallest value over
// the lines, half the budget each); histograms keep at most kHistogramSteps evenly spaced steps.
#include <cstddef>

#include <nlohmann/json.hpp>

#include "report/report_model.hpp"

namespace altgrad::report {

inline constexpr std::size_t kCurvePoints = 300;
inline constexpr std::size_t kDiagnosticPoints = 100;
inline constexpr std::size_t kHistogramSteps = 40;

nlohmann::json page_data(const Report& report);

}  // namespace altgrad::report
