#include "harness/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "base/errors.hpp"

namespace hpcnn {

namespace {

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string option_label(const OptionSpec& spec) { return std::string("--") + std::string(spec.name); }

std::string range_text(const OptionSpec& spec) {
  std::ostringstream os;
  if (spec.min > -1e299 && spec.max < 1e299) os << "between " << spec.min << " and " << spec.max;
  else if (spec.min > -1e299) os << "at least " << spec.min;
  else os << "at most " << spec.max;
  return os.str();
}

}  // namespace

void check_value(const OptionSpec& spec, std::string_view value) {
  const std::string v(value);
  const std::string where = option_label(spec) + ": ";
  if (v.empty()) throw UsageError(where + "empty value");
  switch (spec.type) {
    case OptType::Flag:
    case OptType::String:
      return;
    case OptType::Choice: {
      for (const std::string& c : split(spec.choices, '|'))
        if (c == v) return;
      throw UsageError(where + std::string("unknown value '") + v + std::string("' (choose from ") + std::string(spec.choices) + ")");
    }
    case OptType::Threads:
      if (v == "default") return;
      [[fallthrough]];
    case OptType::Int: {
      errno = 0;
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (errno != 0 || end == v.c_str() || *end != '\0')
        throw UsageError(where + std::string("'") + v + "' is not an integer" +
                         (spec.type == OptType::Threads ? " (or 'default')" : ""));
      const double lo = spec.type == OptType::Threads ? std::max(spec.min, 1.0) : spec.min;
      if (static_cast<double>(n) < lo || static_cast<double>(n) > spec.max) {
        OptionSpec bounded = spec;
        bounded.min = lo;
        throw UsageError(where + std::string("'") + v + "' out of range (must be " + range_text(bounded) + ")");
      }
      return;
    }
    case OptType::Float: {
      errno = 0;
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (errno != 0 || end == v.c_str() || *end != '\0' || !std::isfinite(x))
        throw UsageError(where + std::string("'") + v + "' is not a number");
      if (x < spec.min || x > spec.max)
        throw UsageError(where + std::string("'") + v + "' out of range (must be " + range_text(spec) + ")");
      return;
    }
  }
}

namespace {

std::size_t positional_spec(std::span<const OptionSpec> specs) {
  for (std::size_t k = 0; k < specs.size(); ++k)
    if (specs[k].positional) return k;
  return specs.size();
}

// A value of `spec` (split when it is a list, each element checked), added to what it has.
void add_value(std::vector<std::string>& into, const OptionSpec& spec, const std::string& value) {
  std::vector<std::string> items = spec.list ? split(value, ',') : std::vector<std::string>{value};
  for (const std::string& item : items) {
    if (item.empty()) throw UsageError(option_label(spec) + ": empty element in '" + value + "'");
    check_value(spec, item);
  }
  into.insert(into.end(), items.begin(), items.end());
}

}  // namespace

Options parse_options(std::span<const OptionSpec> specs, int argc, const char* const* argv) {
  Options o;
  o.specs_ = specs;
  o.values_.resize(specs.size());
  o.set_.assign(specs.size(), false);
  std::vector<bool> given(specs.size(), false);
  for (int i = 0; i < argc; ++i) o.argv_.emplace_back(argv[i]);
  const std::size_t positional = positional_spec(specs);
  bool options_ended = false;

  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!options_ended && arg == "--" && positional < specs.size()) {
      options_ended = true;
      continue;
    }
    const bool is_option = !options_ended && arg.size() >= 3 && arg.substr(0, 2) == "--";
    if (!is_option) {
      if (positional == specs.size() || (!options_ended && arg.size() > 1 && arg[0] == '-'))
        throw UsageError(std::string(positional == specs.size() ? "unexpected argument '" : "unknown option '") +
                         std::string(arg) + (positional == specs.size() ? "' (options start with --)" : "' (see --help)"));
      o.set_[positional] = true;
      o.values_[positional].emplace_back(arg);
      continue;
    }
    arg.remove_prefix(2);
    std::string_view name = arg, inline_value;
    bool has_inline = false;
    if (const auto eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline = true;
    }
    std::size_t k = specs.size();
    for (std::size_t s = 0; s < specs.size(); ++s)
      if (specs[s].name == name && !specs[s].positional) k = s;
    if (k == specs.size()) throw UsageError(std::string("unknown option '--") + std::string(name) + "' (see --help)");
    const OptionSpec& spec = specs[k];
    if (given[k] && !spec.repeatable) throw UsageError(option_label(spec) + " given twice");
    given[k] = true;
    o.set_[k] = true;
    if (spec.type == OptType::Flag) {
      if (has_inline) throw UsageError(option_label(spec) + " takes no value");
      o.values_[k] = {"true"};
      continue;
    }
    std::string value;
    if (has_inline) {
      value = std::string(inline_value);
    } else {
      if (i + 1 >= argc) throw UsageError(option_label(spec) + std::string(" needs a value (") + std::string(spec.metavar) + ")");
      value = argv[++i];
    }
    add_value(o.values_[k], spec, value);
  }
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (o.set_[k] || specs[k].default_value.empty()) continue;
    o.values_[k] = specs[k].list ? split(specs[k].default_value, ',')
                                 : std::vector<std::string>{std::string(specs[k].default_value)};
    o.set_[k] = true;
  }
  return o;
}

std::size_t Options::index(std::string_view name) const {
  for (std::size_t k = 0; k < specs_.size(); ++k)
    if (specs_[k].name == name) return k;
  throw std::logic_error(std::string("no option named '") + std::string(name) + "' in this suite's table");
}

bool Options::has(std::string_view name) const { return set_[index(name)]; }
bool Options::flag(std::string_view name) const { return set_[index(name)] && specs_[index(name)].type == OptType::Flag; }
const std::vector<std::string>& Options::values(std::string_view name) const { return values_[index(name)]; }

std::string Options::str(std::string_view name) const {
  const auto& v = values(name);
  return v.empty() ? std::string() : v.front();
}

std::int64_t Options::integer(std::string_view name) const {
  const std::string v = str(name);
  if (v == "default") return 0;
  return std::strtoll(v.c_str(), nullptr, 10);
}

double Options::real(std::string_view name) const { return std::strtod(str(name).c_str(), nullptr); }

std::vector<std::pair<std::string, std::string>> Options::effective() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t k = 0; k < specs_.size(); ++k) {
    if (!set_[k]) continue;
    std::string joined;
    for (const std::string& v : values_[k]) joined += (joined.empty() ? "" : ",") + v;
    out.emplace_back(std::string(specs_[k].name), joined);
  }
  return out;
}

std::string shell_quote(std::string_view arg) {
  const bool plain = !arg.empty() && arg.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%") == std::string_view::npos;
  if (plain) return std::string(arg);
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Options::command_line() const {
  std::string out;
  for (const std::string& a : argv_) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

std::string help_text(std::string_view program, std::string_view summary, std::span<const OptionSpec> specs) {
  std::ostringstream os;
  bool lists = false;
  std::string operands;
  for (const OptionSpec& s : specs) {
    lists = lists || s.list;
    if (s.positional) operands.append(" ").append(s.metavar).append("...");
  }
  os << "usage: " << program << " [options]" << operands << "\n" << summary << "\n\n";
  if (lists) os << "Options marked [list] take comma-separated values; every combination is run.\n\n";
  for (const OptionSpec& s : specs) {
    if (s.positional) continue;
    std::string left = "  --";
    left.append(s.name);
    if (s.type != OptType::Flag) left.append(" ").append(s.metavar.empty() ? "VALUE" : s.metavar);
    os << left;
    os << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << s.help;
    if (s.list) os << " [list]";
    if (s.repeatable) os << " (repeatable)";
    if (!s.choices.empty()) os << " {" << s.choices << "}";
    if (!s.default_value.empty()) os << " (default: " << s.default_value << ")";
    os << "\n";
  }
  return os.str();
}

}  // namespace hpcnn
