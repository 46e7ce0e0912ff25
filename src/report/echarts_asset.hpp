#pragma once
// Where the report finds echarts.min.js, which it inlines into every page: $ALTGRAD_ECHARTS when
// set, else the copy scripts/setup_echarts.sh installs in the source tree the binary was built from
// (data/echarts/echarts.min.js, a path compiled in), so `altgrad report` works from any directory.
#include <filesystem>
#include <string>

namespace altgrad::report {

std::filesystem::path echarts_path();

// The file's contents; throws ReportError naming the missing file and the setup command.
std::string read_echarts();

// The NOTICE file installed beside it (Apache-2.0 asks redistributions to carry it), or "".
std::string read_echarts_notice();

}  // namespace altgrad::report
