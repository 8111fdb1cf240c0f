#include "harness/sweep.hpp"

#include <cstdlib>
#include <stdexcept>

#include "base/errors.hpp"

namespace hpcnn {

const std::string& SweepPoint::str(std::string_view name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return v;
  throw std::logic_error("sweep point has no setting '" + std::string(name) + "'");
}

std::int64_t SweepPoint::integer(std::string_view name) const {
  const std::string& v = str(name);
  return v == "default" ? 0 : std::strtoll(v.c_str(), nullptr, 10);
}

double SweepPoint::real(std::string_view name) const { return std::strtod(str(name).c_str(), nullptr); }

void SweepPoint::set(std::string name, std::string value) {
  for (auto& [k, v] : items_)
    if (k == name) {
      v = std::move(value);
      return;
    }
  items_.emplace_back(std::move(name), std::move(value));
}

const std::string* PointSettings::swept(std::string_view name) const {
  for (const auto& [k, v] : point_.items())
    if (k == name) return &v;
  return nullptr;
}

bool PointSettings::has(std::string_view name) const { return swept(name) || options_.has(name); }

std::string PointSettings::str(std::string_view name) const {
  const std::string* v = swept(name);
  return v ? *v : options_.str(name);
}

std::int64_t PointSettings::integer(std::string_view name) const {
  return swept(name) ? point_.integer(name) : options_.integer(name);
}

double PointSettings::real(std::string_view name) const { return swept(name) ? point_.real(name) : options_.real(name); }

void check_sweep_size(const Options& options, std::span<const OptionSpec> specs) {
  std::size_t points = 1;
  bool over = false;
  std::string lists;
  for (const OptionSpec& spec : specs) {
    if (!spec.list || !options.has(spec.name)) continue;
    const std::size_t n = options.values(spec.name).size();
    if (n > 1) lists.append(lists.empty() ? "" : " x ").append(std::to_string(n)).append(" --").append(spec.name);
    // (compared before multiplying: the product of hostile lists overflows)
    if (n != 0 && points > kMaxSweepPoints / n) over = true;
    else points *= n;
  }
  if (over || points > kMaxSweepPoints)
    throw UsageError("the sweep has more than " + std::to_string(kMaxSweepPoints) + " points (" + lists +
                     "); split it into several runs");
}

std::vector<SweepPoint> sweep_points(const Options& options, std::span<const OptionSpec> specs) {
  check_sweep_size(options, specs);
  std::vector<SweepPoint> points(1);
  for (const OptionSpec& spec : specs) {
    if (!spec.list || !options.has(spec.name)) continue;
    const auto& values = options.values(spec.name);
    std::vector<SweepPoint> next;
    next.reserve(points.size() * values.size());
    for (const SweepPoint& p : points)
      for (const std::string& v : values) {
        SweepPoint q = p;
        q.set(std::string(spec.name), v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

}  // namespace hpcnn
