// `altgrad report DIR [-o report.html]`: the report of a sweep directory (index.json) or of one run
// directory: report.html (self-contained, works offline), summary.csv and report.md beside it.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "report/report_model.hpp"
#include "report/text_summary.hpp"
#include "report/write_report.hpp"

namespace altgrad::cli {
namespace {

struct ReportArgs {
  std::string dir;
  std::string out;  // empty: DIR/report.html
  bool summary = false;
};

void run(const ReportArgs& args) {
  const report::ReportFiles files = report::write_report(args.dir, args.out);
  std::printf("wrote %s\nwrote %s\nwrote %s\n", files.html.c_str(), files.csv.c_str(), files.markdown.c_str());
  if (args.summary) std::fputs(report::text_summary(report::build_report(args.dir)).c_str(), stdout);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "HTML/CSV/Markdown report of a sweep or run directory");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("dir", args->dir, "Sweep directory (with index.json) or run directory")->required();
  cmd->add_option("-o,--out", args->out, "HTML file to write (default DIR/report.html); summary.csv and report.md go beside it");
  cmd->add_flag("--summary", args->summary, "Also print one line per recipe (final val loss with its 95% interval, gap to bf16, paired by seed) and every verdict");
  cmd->callback([args] { run(*args); });
}

}  // namespace altgrad::cli
