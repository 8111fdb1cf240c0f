# Sourced by the bash tests: run in the build directory with a scratch folder $out (removed on
# exit), count failures in $fail, and `run CMD...` that echoes CMD and records a failure.
set -u
cd "${HPCNN_BUILDDIR:?}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
run() { echo "+ $*"; "$@" || { echo "FAIL: $* exited $?"; fail=1; }; }
