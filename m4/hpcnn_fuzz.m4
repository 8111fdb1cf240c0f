# hpcnn_fuzz.m4: HPCNN_CHECK_FUZZ, a C++ compiler that builds libFuzzer targets (fuzz/, `make fuzz`,
# the CTest fuzz_smoke). Optional: without one, `make fuzz` says so and stops, fuzz_smoke is
# skipped, and everything else (the corpus replay, fuzz_replay, included) is built as usual.
# FUZZ_CXX is a precious variable: ./configure FUZZ_CXX=clang++-17 picks the compiler,
# FUZZ_CXX=no turns fuzzing off; by default the first of clang++, clang++-19 ... clang++-14 that
# compiles and links a fuzz target with -fsanitize=fuzzer,address,undefined in C++20 is used.
# Sets FUZZ_CXX (empty when none works), FUZZ_CXXFLAGS, and AM_CONDITIONAL HAVE_FUZZ_CXX.
AC_DEFUN([HPCNN_CHECK_FUZZ], [
AC_REQUIRE([HPCNN_CXX_FLAGS])
AC_ARG_VAR([FUZZ_CXX], [clang++ with libFuzzer, for `make fuzz' (default: the first that works of clang++, clang++-NN; no: none)])
FUZZ_CXXFLAGS="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
hpcnn_fuzz_candidates=${FUZZ_CXX:-clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14}
FUZZ_CXX=
AS_IF([test "x$hpcnn_fuzz_candidates" != xno], [
  cat > conftest_fuzz.cpp <<_HPCNN_EOF
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  return std::string(bytes.begin(), bytes.end()) == "x" ? 0 : 0;
}
_HPCNN_EOF
  for hpcnn_fuzz_cxx in $hpcnn_fuzz_candidates; do
    AC_MSG_CHECKING([whether $hpcnn_fuzz_cxx builds libFuzzer targets])
    AS_IF([$hpcnn_fuzz_cxx $HPCNN_CXXSTD $FUZZ_CXXFLAGS conftest_fuzz.cpp -o conftest_fuzz >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes])
       FUZZ_CXX=$hpcnn_fuzz_cxx
       break],
      [AC_MSG_RESULT([no])])
  done
  rm -f conftest_fuzz.cpp conftest_fuzz
])
AC_SUBST([FUZZ_CXX])
AC_SUBST([FUZZ_CXXFLAGS])
AM_CONDITIONAL([HAVE_FUZZ_CXX], [test -n "$FUZZ_CXX"])
AS_IF([test -n "$FUZZ_CXX"],
  [hpcnn_fuzz_summary="$FUZZ_CXX (make fuzz; the smoke test runs in make check)"],
  [hpcnn_fuzz_summary="no (needs clang++ with libFuzzer; Debian/Ubuntu: apt-get install clang)"])
])
