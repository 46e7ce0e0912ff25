#include "report/page_html.hpp"

#include "report/page_data.hpp"

namespace altgrad::report {
namespace {

// Text inside <script> must not contain "</": in JSON, "<\/" is the same string.
std::string script_safe_json(const nlohmann::json& data) {
  std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 1280px; padding: 0 16px 40px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.chart { width: 100%; margin: 8px 0; }
#curves, #diagnostics { display: grid; grid-template-columns: repeat(auto-fill, minmax(580px, 1fr)); gap: 8px; }
#diagnostics h3 { grid-column: 1 / -1; margin: 12px 0 0; }
#errors { background: #fdd; border: 1px solid #c00; padding: 8px; white-space: pre-wrap; }
.note { color: #555; }
.wide { overflow-x: auto; }
#group-table td { white-space: nowrap; }
)css";

// Runs before any other script, so an error anywhere (ECharts included) and every console.error
// show in the page's error box, where a reader (and the browser test) sees them.
constexpr const char* kErrorCatcher = R"js(
(function () {
  const box = document.getElementById('errors');
  function show(message) { box.hidden = false; box.textContent += message + '\n'; }
  window.addEventListener('error', (e) => show('script error: ' + e.message));
  const consoleError = console.error;
  console.error = function () { show('console.error: ' + Array.from(arguments).join(' ')); consoleError.apply(console, arguments); };
})();
)js";

}  // namespace

std::string page_html(const Report& report, const std::string& echarts, const std::string& notice) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>AltGrad report: " +
          html_escape(report.dir.string()) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  html += "<h1 id=\"title\">AltGrad report</h1>\n<pre id=\"errors\" hidden></pre>\n";
  html += "<h2>Gaps to the baseline</h2>\n<p class=\"note\">Each group the sweep's criteria compare: its final "
          "validation loss's gap to the baseline, paired seed by seed, with its 95% interval; the criteria's "
          "thresholds as dashed lines; the marker's colour is the verdict on the loosest criterion (each verdict in "
          "the tooltip and the verdict table).</p>\n<div id=\"forest\"></div>\n";
  html += "<h2>Groups: final validation loss</h2>\n<p class=\"note\">Each group as the sweep file names it, with "
          "the preset its recipe starts from. Mean over the group's seeds with its 95% Student t half width; gaps in % "
          "of the baseline's mean, and paired seed by seed with their 95% interval (docs/experiments.md, "
          "\"Statistics and verdicts\"); warnings in all and per run.</p>\n<div id=\"groups\" class=\"wide\"></div>\n";
  html += "<h2>Verdicts</h2>\n<p class=\"note\">Pass: the paired gap's 95% interval lies within the threshold; "
          "fail: above it, or a run diverged; inconclusive: otherwise. The sign of the gap is resolved when its "
          "interval excludes 0.</p>\n<div id=\"verdicts\"></div>\n";
  html += "<h2>Runs</h2>\n<p class=\"note\">Early warning: the first warning a run's diagnostics raised "
          "(events.jsonl), and its step; start-up events are not warnings (below).</p>\n<div id=\"runs\"></div>\n";
  html += "<h2>Training curves</h2>\n<p>Band around each group's mean: <select id=\"band\"><option value=\"minmax\">"
          "min–max over seeds</option><option value=\"ci\">95% CI of the mean</option></select></p>\n"
          "<div id=\"curves\"></div>\n";
  html += "<h2>Final metrics across runs</h2>\n<div id=\"finals\"></div>\n";
  html += "<h2>Stability thresholds</h2>\n<div id=\"searches\"></div>\n<div id=\"thresholds\"></div>\n";
  html += "<h2>Range fit</h2>\n<p class=\"note\">Each group's first profiled run, its last profiled step: every "
          "quantization point ranked by how many of its values the candidate format would lose to overflow or flush "
          "to zero at the scale its scaling would choose, best fit first.</p>\n<div id=\"range-fit\"></div>\n";
  html += "<h2>Warnings and stop reasons</h2>\n<p class=\"note\">Click a run to show its group's diagnostics "
          "with the step marked.</p>\n<div id=\"events\"></div>\n";
  html += "<h2>Start-up events</h2>\n<p class=\"note\">Statistics past a threshold that training expects at its "
          "start (delayed scaling's first step, with no amax history yet): neither early warnings nor counted as "
          "warnings.</p>\n<div id=\"start-up\"></div>\n";
  html += "<h2 id=\"diagnostics-head\">Diagnostics per group</h2>\n<p>Group: <select id=\"group\"></select> "
          "<span class=\"note\">(mean over the group's seeds; one line per point or tensor)</span></p>\n"
          "<div id=\"diagnostics\"></div>\n";
  html += "<h2>Log2 histograms</h2>\n<p class=\"note\">Weights by tensor; every quantization point's values on "
          "diagnostic steps (value profiles) by point name.</p>\n<p>Tensor or point: <select id=\"tensor\"></select>"
          "</p>\n<div id=\"heatmap\"></div>\n";
  html += "<footer class=\"note\"><p>Charts drawn with Apache ECharts (Apache License 2.0), inlined in this page.</p><pre>" +
          html_escape(notice) + "</pre></footer>\n";
  html += std::string("<script>") + kErrorCatcher + "</script>\n";
  html += "<script type=\"application/json\" id=\"report-data\">" + script_safe_json(page_data(report)) + "</script>\n";
  html += "<script>" + echarts + "</script>\n";
  html += "<script>" + std::string(kPageScript) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace altgrad::report
