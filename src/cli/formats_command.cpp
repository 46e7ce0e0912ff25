// `altgrad formats [--json]` and `altgrad formats --codes FORMAT`.
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "format/grid.hpp"
#include "format/parse.hpp"

namespace altgrad::cli {
namespace {

using namespace altgrad::format;

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

nlohmann::json format_row(std::string_view name, const FormatSpec& spec) {
  const Format f = make_format(spec);
  const GridFacts g = grid_facts(f);
  return {{"name", name},
          {"E", spec.exponent_bits},
          {"M", spec.mantissa_bits},
          {"bias", spec.bias},
          {"policy", policy_name(spec.policy)},
          {"max_finite", g.max_finite},
          {"min_normal", g.min_normal},
          {"min_subnormal", g.min_subnormal > 0 ? nlohmann::json(g.min_subnormal) : nlohmann::json()},
          {"finite_values", g.finite_values},
          {"has_inf", g.has_inf},
          {"nan_codes", g.nan_codes}};
}

void print_table(bool json) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& named : named_formats()) rows.push_back(format_row(named.name, named.spec));
  if (json) {
    std::cout << rows.dump(2) << '\n';
    return;
  }
  std::printf("%-9s %2s %2s %4s %-6s %13s %13s %13s %7s %4s %4s\n", "name", "E", "M", "bias", "policy",
              "max_finite", "min_normal", "min_subnorm", "finite", "inf", "nans");
  for (const auto& r : rows) {
    char sub[32] = "-";
    if (!r["min_subnormal"].is_null()) std::snprintf(sub, sizeof sub, "%.7g", r["min_subnormal"].get<double>());
    std::printf("%-9s %2d %2d %4d %-6s %13.7g %13.7g %13s %7u %4s %4u\n",
                r["name"].get<std::string>().c_str(), r["E"].get<int>(), r["M"].get<int>(),
                r["bias"].get<int>(), r["policy"].get<std::string>().c_str(),
                r["max_finite"].get<double>(), r["min_normal"].get<double>(),
                sub,
                r["finite_values"].get<unsigned>(), r["has_inf"].get<bool>() ? "yes" : "no",
                r["nan_codes"].get<unsigned>());
  }
}

// One line per code: hex code, value, the step to the next code toward +Inf (nan where either is
// not finite or there is no next code), and the grid spacing S(value) the bit-space optimizers use
// (format::spacing: the step away from zero, the top binade's step at max finite; nan for NaN and
// Inf). The two differ at negative powers of two and at max finite (docs/formats.md).
void print_codes(const std::string& name) {
  const Format f = make_format(parse_format(name));
  const int digits = (f.width + 3) / 4;
  for (std::uint32_t c = 0; c < f.code_count(); ++c) {
    const double value = decode(f, c);
    double step = std::numeric_limits<double>::quiet_NaN();
    if (const auto next = next_code_up(f, c); next && std::isfinite(value)) {
      const double next_value = decode(f, *next);
      if (std::isfinite(next_value)) step = next_value - value;
    }
    const double stiffness = spacing(f, static_cast<float>(value));
    std::printf("0x%0*x %s %s %s\n", digits, c, g17(value).c_str(), g17(step).c_str(), g17(stiffness).c_str());
  }
}

}  // namespace

void add_formats_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("formats", "List the named formats, or every code of one format");
  auto json = std::make_shared<bool>(false);
  auto codes = std::make_shared<std::string>();
  cmd->add_flag("--json", *json, "Print the table as JSON");
  cmd->add_option("--codes", *codes, "Print every code of FORMAT: code, value, step to the next code up, grid spacing S(value)");
  cmd->callback([json, codes] {
    if (!codes->empty()) {
      print_codes(*codes);
    } else {
      print_table(*json);
    }
  });
}

}  // namespace altgrad::cli
