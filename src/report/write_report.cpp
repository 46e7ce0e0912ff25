#include "report/write_report.hpp"

#include "io/atomic_file.hpp"
#include "report/echarts_asset.hpp"
#include "report/page_html.hpp"
#include "report/report_model.hpp"
#include "report/tables.hpp"

namespace altgrad::report {
namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  try {
    io::write_file_atomically(path, [&](std::ostream& out) { out << text; });
  } catch (const std::exception& e) {
    throw ReportError(e.what());
  }
}

}  // namespace

ReportFiles write_report(const std::filesystem::path& dir, const std::filesystem::path& html_out) {
  const std::string echarts = read_echarts();
  const Report report = build_report(dir);
  ReportFiles files;
  files.html = html_out.empty() ? dir / "report.html" : html_out;
  const auto beside = files.html.has_parent_path() ? files.html.parent_path() : std::filesystem::path(".");
  files.csv = beside / "summary.csv";
  files.markdown = beside / "report.md";
  std::error_code ignored;
  std::filesystem::create_directories(beside, ignored);  // a failure shows in the first write
  write_text(files.csv, summary_csv(report));
  write_text(files.markdown, report_markdown(report));
  write_text(files.html, page_html(report, echarts, read_echarts_notice()));
  return files;
}

}  // namespace altgrad::report
