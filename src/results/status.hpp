// The status of a result point. Code passes the enum; the result file (and so hpcnn-summary)
// holds its name, written in one place (harness/suite_runner.cpp).
#pragma once

namespace hpcnn {

enum class PointStatus {
  Ok,        // measured and checked
  Failed,    // could not be measured, or a check failed (exit status 1)
  Diverged,  // a training loss became NaN or Inf: a result, not an error
  Skipped,   // this machine cannot run the point (a GPU backend without a GPU)
};

// "ok", "failed", "diverged", "skipped": the `status` field of docs/RESULTS.md.
constexpr const char* status_name(PointStatus s) {
  switch (s) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Failed: return "failed";
    case PointStatus::Diverged: return "diverged";
    case PointStatus::Skipped: return "skipped";
  }
  return "failed";
}

}  // namespace hpcnn
