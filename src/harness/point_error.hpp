// How a point ends early on one rank: a status (results/status.hpp) and its reason. The suite
// runner agrees on it over the ranks (suite_runner.hpp, agree_on_failure).
#pragma once

#include <exception>
#include <string>

#include "base/errors.hpp"
#include "results/status.hpp"

namespace hpcnn {

// Why a point ends without figures, as one rank sees it: a status and its reason.
struct PointError {
  PointStatus status = PointStatus::Ok;  // Ok: no error
  std::string reason;
  bool none() const { return status == PointStatus::Ok; }
  // An exception caught while running a point: a StatusError keeps its status, anything else failed.
  static PointError from(const std::exception& e);
};

// Thrown where the status is known at the throw: a backend this machine cannot run (skipped), a
// training loss that is no longer finite (diverged). The message is the reason.
struct StatusError : RuntimeError {
  StatusError(PointStatus s, const std::string& reason) : RuntimeError(reason), status(s) {}
  PointStatus status;
};

}  // namespace hpcnn
