// Sweeps: the cartesian product of every list option, in option-table order (the first list
// option varies slowest). The harness owns this loop; suites never nest their own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/options.hpp"

namespace hpcnn {

// One combination: a single value for every list option.
class SweepPoint {
 public:
  const std::string& str(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;  // "default" -> 0
  double real(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  void set(std::string name, std::string value);

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// One point's effective settings: the point's value for an option that is swept, the option's
// own value otherwise. Only the builders of typed points read it (suites' *_point functions).
class PointSettings {
 public:
  PointSettings(const Options& options, const SweepPoint& point) : options_(options), point_(point) {}
  bool has(std::string_view name) const;  // swept, given or defaulted
  bool flag(std::string_view name) const { return options_.flag(name); }
  std::string str(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;  // "default" -> 0
  double real(std::string_view name) const;

 private:
  const std::string* swept(std::string_view name) const;
  const Options& options_;
  const SweepPoint& point_;
};

// Most points one sweep may have. Every point is a measurement, so a product of lists in the
// millions is a slip (or a hostile command line) that would exhaust memory building the points
// before the first one runs (seen while writing fuzz/options_target.cpp).
inline constexpr std::size_t kMaxSweepPoints = 100000;

// Throws UsageError naming every list option and its length when the sweep would have more than
// kMaxSweepPoints points. run_suite calls it before any work; sweep_points calls it too.
void check_sweep_size(const Options& options, std::span<const OptionSpec> specs);

std::vector<SweepPoint> sweep_points(const Options& options, std::span<const OptionSpec> specs);

}  // namespace hpcnn
