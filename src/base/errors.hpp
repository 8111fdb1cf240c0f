// Error kinds that map to exit statuses: UsageError -> 2 (bad command line), RuntimeError -> 1.
// Thrown anywhere; caught once in suites' main (harness/main_wrapper.hpp), printed as one line.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace hpcnn {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A setting a component cannot honour, said in the component's own terms: the setting (a result
// field's name: "threads", "precision", "cudnn_benchmark"), its value ("" for a flag) and what is
// wrong ("backend 'openblas' accepts at most 2 threads"). The suites, which know the command
// line, name the option: harness/main_wrapper.hpp's option_message.
struct SettingError : UsageError {
  SettingError(std::string setting_name, std::string setting_value, std::string what_is_wrong)
      : UsageError(setting_name + (setting_value.empty() ? "" : " " + setting_value) + ": " + what_is_wrong),
        setting(std::move(setting_name)),
        value(std::move(setting_value)),
        detail(std::move(what_is_wrong)) {}
  std::string setting, value, detail;
};

}  // namespace hpcnn
