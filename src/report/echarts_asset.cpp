#include "report/echarts_asset.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "report/run_data.hpp"

namespace altgrad::report {

std::filesystem::path echarts_path() {
  if (const char* path = std::getenv("ALTGRAD_ECHARTS"); path != nullptr && *path != '\0') return path;
  return std::filesystem::path(ALTGRAD_SOURCE_DIR) / "data" / "echarts" / "echarts.min.js";
}

std::string read_echarts() {
  const auto path = echarts_path();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ReportError(path.string() + " is missing: the report inlines ECharts from it; install it with " +
                      "`bash scripts/setup_echarts.sh` (or point ALTGRAD_ECHARTS at a copy of echarts.min.js)");
  }
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string read_echarts_notice() {
  std::ifstream in(echarts_path().parent_path() / "NOTICE", std::ios::binary);
  if (!in) return "";
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace altgrad::report
