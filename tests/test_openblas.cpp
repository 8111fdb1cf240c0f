// The openblas backend against OpenBLAS's own thread getter and limit (built only with the
// openblas backend: tests/Makefile.inc).
#include <cblas.h>
#include <gtest/gtest.h>

#include "base/errors.hpp"
#include "engine/backend.hpp"
#include "kernels/registry.hpp"

namespace hpcnn {
namespace {

TEST(BlasBackends, OpenblasThreadsAsTheLibraryReports) {
  auto be = make_backend("openblas");
  for (int n : {1, 2}) {
    be->set_threads(n);
    EXPECT_EQ(be->threads(), n);
    EXPECT_EQ(openblas_get_num_threads(), n);
  }
}

TEST(BlasBackends, OpenblasLimitIsTheLibrarys) {
  auto be = make_backend("openblas");
  const int before = openblas_get_num_threads();
  openblas_set_num_threads(1 << 20);
  const int max = openblas_get_num_threads();  // OpenBLAS clamps to its compile-time MAX_THREADS
  openblas_set_num_threads(before);
  EXPECT_THROW(be->set_threads(max + 1), UsageError);
  // The registry's limit (read from openblas_get_config(), which the suites check --threads
  // against before any work) is the one the library clamps to.
  for (const BackendInfo& b : backends())
    if (b.name == "openblas") {
      EXPECT_EQ(b.max_threads.at_most, max);
      EXPECT_NO_THROW(check_thread_limit(b, max));
      EXPECT_THROW(check_thread_limit(b, max + 1), UsageError);
    }
  EXPECT_NO_THROW(be->set_threads(max));
  EXPECT_EQ(be->threads(), max);
  be->set_threads(before);
}

}  // namespace
}  // namespace hpcnn
