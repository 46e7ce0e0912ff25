#pragma once
// The report of a sweep or run directory: report.html, summary.csv and report.md, each written to
// a temporary file and renamed, so a page opened while a sweep runs is never half-written.
#include <filesystem>

namespace altgrad::report {

struct ReportFiles {
  std::filesystem::path html, csv, markdown;
};

// Writes the HTML to `html_out` (default DIR/report.html) and summary.csv and report.md beside it.
// Throws ReportError for unreadable input or a missing echarts.min.js, before writing anything.
ReportFiles write_report(const std::filesystem::path& dir, const std::filesystem::path& html_out = {});

}  // namespace altgrad::report
