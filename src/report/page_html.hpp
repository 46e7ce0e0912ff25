#pragma once
// report.html: one self-contained page (ECharts, the page's script and the data all inline; it
// makes no network request).
#include <string>

#include "report/report_model.hpp"

namespace altgrad::report {

// `echarts` is the text of echarts.min.js, `notice` its NOTICE file (shown in the page's footer).
std::string page_html(const Report& report, const std::string& echarts, const std::string& notice);

// The page's script (src/report/page_script.js, embedded at build time).
extern const char* const kPageScript;

}  // namespace altgrad::report
