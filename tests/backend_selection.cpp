#include "backend_selection.hpp"
#include "kernels/registry.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace hpcnn::test {

namespace {
bool g_gpu = false;
}

bool gpu_mode() { return g_gpu; }

namespace {
// The variants of one backend: CPU backends as registered and in bf16 where the backend computes
// it on this CPU, GPU ones in each layout and precision.
void add_variants(const BackendInfo& b, std::vector<BackendVariant>& out) {
  BackendSettings nchw, nhwc, tf32, bf16;
  bf16.precision = Precision::Bf16;
  const BackendVariant bf16_variant{b.name + "_bf16", b.name, bf16, 3e-2, 50.0};
  if (!b.gpu) {
    out.push_back({b.name, b.name, {}, 0.0, 1.0});
    if (b.precision_problem && b.precision_problem(Precision::Bf16).empty()) out.push_back(bf16_variant);
    return;
  }
  nchw.layout = "nchw";
  nhwc.layout = "nhwc";
  tf32.precision = Precision::Tf32;
  out.push_back({b.name, b.name, nchw, 2e-5, 1.0});
  out.push_back({b.name + "_nhwc", b.name, nhwc, 2e-5, 1.0});
  out.push_back({b.name + "_tf32", b.name, tf32, 4e-3, 10.0});
  out.push_back(bf16_variant);
}
}  // namespace

std::vector<BackendVariant> variants_under_test(bool include_reference) {
  std::vector<BackendVariant> out;
  for (const BackendInfo& b : backends()) {
    // The reference is the oracle of CPU runs; GPU runs compare against it but do not test it.
    if (b.name == "reference" ? (!include_reference || g_gpu) : b.gpu != g_gpu) continue;
    add_variants(b, out);
  }
  return out;
}

std::unique_ptr<Backend> make_variant(const BackendVariant& v) {
  std::unique_ptr<Backend> be = make_backend(v.backend);
  be->configure(v.settings);
  return be;
}

const BackendVariant& find_variant(const std::string& name) {
  static const std::vector<BackendVariant> all = [] {
    std::vector<BackendVariant> v;
    for (const BackendInfo& b : backends()) add_variants(b, v);
    return v;
  }();
  for (const BackendVariant& v : all)
    if (v.name == name) return v;
  throw std::logic_error("no backend variant " + name);
}

}  // namespace hpcnn::test

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--gpu") == 0) hpcnn::test::g_gpu = true;
  if (hpcnn::test::g_gpu) {
    std::string why = "this build has no GPU backend";
    for (const hpcnn::BackendInfo& b : hpcnn::backends())
      if (b.gpu) why = b.unavailable ? b.unavailable() : std::string();
    if (!why.empty()) {
      std::printf("SKIPPED: GPU backend tests: %s\n", why.c_str());
      return 77;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
