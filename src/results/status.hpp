// The status of a result point. Code passes the enum; the result file (and so hpcnn-summary)
// holds its name, written in one place (harness/suite_runner.cpp).
#pragma once

#include <optional>
#include <string_view>

namespace hpcnn {

enum class PointStatus {
  Ok,        // measured and checked
  Failed,    // could not be measured, or a check failed (exit status 1)
  Diverged,  // a training loss became NaN or Inf: a result, not an error
  Skipped,   // this machine cannot run the point (a GPU backend without a GPU)
  // A signal stopped the run during the point: never written as a result; --resume runs it again.
  Interrupted,
};

// "ok", "failed", "diverged", "skipped": the `status` field of docs/RESULTS.md.
constexpr const char* status_name(PointStatus s) {
  switch (s) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Failed: return "failed";
    case PointStatus::Diverged: return "diverged";
    case PointStatus::Skipped: return "skipped";
    case PointStatus::Interrupted: return "interrupted";
  }
  return "failed";
}

// The status a name stands for, as read back from a result file.
inline std::optional<PointStatus> status_from_name(std::string_view name) {
  for (PointStatus s : {PointStatus::Ok, PointStatus::Failed, PointStatus::Diverged, PointStatus::Skipped,
                        PointStatus::Interrupted})
    if (name == status_name(s)) return s;
  return std::nullopt;
}

}  // namespace hpcnn
