#pragma once
// The report's tables as text: summary.csv (one row per run, every final metric) and report.md.
#include <string>
#include <vector>

#include "report/report_model.hpp"

namespace altgrad::report {

// Every series key any run logged, sorted (the columns of summary.csv after the fixed ones).
std::vector<std::string> metric_keys(const Report& report);

// Columns: run, group, seed, status, last_step, final_val_loss, then each metric key's last logged
// value ("" where the run never logged it). Numbers are printed with 9 significant digits.
std::string summary_csv(const Report& report);

// Groups (group_table.hpp), verdicts, runs (status, first warning), stability searches, range fits,
// the warnings and stop reasons, and the start-up events, as Markdown tables.
std::string report_markdown(const Report& report);

// Number formatting shared by the writers: 9 significant digits (%.9g), "" for no value.
std::string format_number(double value);

}  // namespace altgrad::report
