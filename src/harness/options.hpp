// Command-line options: ONE table (OptionSpec) drives parsing, validation, --help and the echo of
// every effective setting into the result file. Every setting marked `list` takes a comma list
// and the sweep (sweep.hpp) runs the cartesian product of all lists.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpcnn {

enum class OptType {
  Flag,       // --quiet
  Int,        // integer within [min, max]
  Threads,    // integer >= 1, or "default" (the library's own choice), stored as 0
  Float,      // finite number within [min, max]
  String,     // free text (paths)
  Choice,     // one of `choices` ("relu|tanh")
};

struct OptionSpec {
  std::string_view name;           // long name without dashes: "batch"
  OptType type = OptType::String;
  bool list = false;               // comma list; each element is a sweep value
  std::string_view default_value;  // "" = none (and the option is then unset)
  std::string_view metavar;        // "N", "LIST", "DIR"
  std::string_view help;
  std::string_view choices = {};   // Choice: "a|b|c"
  double min = -1e300, max = 1e300;
  // Given several times, the values add up (hpcnn-summary --where) instead of being an error.
  bool repeatable = false;
  // The arguments that are not options (hpcnn-summary's FILE|DIR...); at most one spec is, and
  // "--" ends the options. Without one, such an argument is a usage error.
  bool positional = false;
};

// The parsed command line: immutable after parse_options().
class Options {
 public:
  bool has(std::string_view name) const;  // given or defaulted
  bool flag(std::string_view name) const;
  const std::vector<std::string>& values(std::string_view name) const;  // list elements
  std::string str(std::string_view name) const;  // single value
  std::int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  // Every option with its effective value(s), in table order (for the result file).
  std::vector<std::pair<std::string, std::string>> effective() const;
  const std::vector<std::string>& argv() const { return argv_; }
  std::string command_line() const;  // argv joined, shell-quoted where needed

 private:
  friend Options parse_options(std::span<const OptionSpec>, int, const char* const*);
  std::span<const OptionSpec> specs_;
  std::vector<std::vector<std::string>> values_;  // [spec index]
  std::vector<bool> set_;                         // given or defaulted
  std::vector<std::string> argv_;
  std::size_t index(std::string_view name) const;
};

// Parses `--name value`, `--name=value`, flags and, with a positional spec, the other arguments
// ("--" ends the options). Throws UsageError naming the option and the bad value: unknown option,
// missing value, empty list element, non-numeric or out-of-range number, unknown choice, an option
// given twice (unless repeatable).
Options parse_options(std::span<const OptionSpec> specs, int argc, const char* const* argv);

// --help text generated from the table (a positional spec is the usage line's last word).
std::string help_text(std::string_view program, std::string_view summary,
                      std::span<const OptionSpec> specs);

// Validate one value against a spec (used by the parser; exposed for tests). Throws UsageError.
void check_value(const OptionSpec& spec, std::string_view value);

// Quote one argument for a POSIX shell when it needs it.
std::string shell_quote(std::string_view arg);

}  // namespace hpcnn
