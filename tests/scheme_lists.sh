#!/usr/bin/env bash
# Every list of exchange schemes a user sees is the registry's (collectives/exchange_registry.cpp),
# so that a new scheme is its file and its registry line, and nothing else goes stale:
#  - hpcnn-scale --list names the registry's schemes; hpcnn-simulate --list names those of them
#    the simulator runs, and refuses each other one with one line naming the simulated ones;
#  - the documented lists: README's hpcnn-scale row (every scheme; nccl only in CUDA builds),
#    jobscripts/simulate_scaling.sh's default SCHEMES and docs/SIMULATION.md's study (the
#    simulated ones);
#  - the SMPI rank program is built from collectives/Makefile.inc's EXCHANGE_SCHEME_SOURCES, which
#    holds every source of collectives/ but the ones the simulator replaces or does not need.
# And every list of backends is the kernels' registry (kernels/registry.cpp), so that a backend is
# its folder and its registry line:
#  - every optional backend folder (kernels/Makefile.inc's BUILD_X_BACKEND) is a configure option
#    (--with-x) and a variant of the Spack package (+x; the cuda one is CudaPackage's);
#  - the BLAS libraries hpcnn-blas measures by default (the registered backends that lower to a
#    BLAS GEMM) are the ReFrame tests' libraries, and the ReFrame tests' schemes are the acceptance
#    set's allreduce schemes.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
src=$HPCNN_SRCDIR

# sorted NAMES...: one per line, sorted (a set to compare)
sorted() { tr ', ' '\n\n' <<<"$*" | sed '/^$/d' | sort -u; }
same() {  # same WHAT WANT GOT
  if [ "$2" = "$3" ]; then echo "ok:   $1: $(echo $3)"; else echo "FAIL: $1: want {$(echo $2)}, got {$(echo $3)}"; fail=1; fi
}

registry=$(./hpcnn-scale --list | sed -n '/^exchange schemes (--exchange):/,/^[^ ]/p' | sed -n 's/^  \([a-z0-9-]*\) .*/\1/p' | sort -u)
simulated=$(./hpcnn-simulate --list | sed -n 's/^simulated exchange schemes: \([a-z0-9, -]*\) (.*/\1/p')
simulated=$(sorted "$simulated")
echo "registry: $(echo $registry); simulated: $(echo $simulated)"
[ "$(wc -l <<<"$registry")" -ge 5 ] || { echo "FAIL: hpcnn-scale --list names fewer than 5 schemes"; fail=1; }
[ -n "$simulated" ] || { echo "FAIL: hpcnn-simulate --list names no simulated scheme"; fail=1; }
same "the simulated schemes are registered" "$simulated" "$(comm -12 <(echo "$simulated") <(echo "$registry"))"

# Every registered scheme the simulator does not run is refused with one line naming the others.
for scheme in $(comm -23 <(echo "$registry") <(echo "$simulated")); do
  expect_error 2 "--exchange $scheme: not simulated (the simulated schemes: " -- \
    ./hpcnn-simulate --compute /nonexistent.h5 --model lenet5 --exchange "$scheme" --nodes 2
done

# The documents and job scripts.
readme=$(grep '^| `hpcnn-scale` |' "$src/README.md" | grep -o -- '--exchange [a-z0-9,-]*' | head -1 | cut -d' ' -f2)
readme=$(sorted "$readme")
missing=$(comm -23 <(echo "$registry") <(echo "$readme"))
[ -z "$missing" ] && echo "ok:   README's hpcnn-scale row names every registered scheme" ||
  { echo "FAIL: README's hpcnn-scale row lacks: $(echo $missing)"; fail=1; }
extra=$(comm -23 <(echo "$readme") <(echo "$registry") | grep -v '^nccl$' || true)
[ -z "$extra" ] || { echo "FAIL: README's hpcnn-scale row names schemes not registered: $(echo $extra)"; fail=1; }
scaling=$(sed -n 's/^SCHEMES=\${SCHEMES:-\([a-z0-9,-]*\)}.*/\1/p' "$src/jobscripts/simulate_scaling.sh")
same "simulate_scaling.sh's default SCHEMES" "$simulated" "$(sorted "$scaling")"
study=$(grep -m1 -o -- '--exchange mpi[a-z0-9,-]*' "$src/docs/SIMULATION.md" | cut -d' ' -f2)
same "docs/SIMULATION.md's study" "$simulated" "$(sorted "$study")"

# The sources: EXCHANGE_SCHEME_SOURCES (libhpcnn and the SMPI rank program) holds every .cpp of
# collectives/ but those the simulator replaces (host_buffers, mpi_allreduce), the GPU-only ones
# (chosen by the build), the link test's schedule and the node's rates (measured by the suites).
listed=$(sed -n '/^EXCHANGE_SCHEME_SOURCES =/,/^[^\t]/p' "$src/collectives/Makefile.inc" | grep -o '%reldir%/[a-z_]*\.cpp' | sed 's@%reldir%/@@' | sort)
present=$(cd "$src/collectives" && ls *.cpp | grep -v -x -E 'host_buffers.cpp|mpi_allreduce.cpp|gpu_exchanges.cpp|nccl_allreduce.cpp|no_gpu_exchanges.cpp|pair_schedule.cpp|float_rates.cpp' | sort)
same "EXCHANGE_SCHEME_SOURCES: every scheme source of collectives/" "$present" "$listed"
grep -q 'EXCHANGE_SCHEME_SOURCES' "$src/simulate/Makefile.inc" ||
  { echo "FAIL: simulate/Makefile.inc does not build the rank program from EXCHANGE_SCHEME_SOURCES"; fail=1; }

# Backends.
folders=$(sed -n 's/^if BUILD_\([A-Z]*\)_BACKEND$/\1/p' "$src/kernels/Makefile.inc" | tr 'A-Z' 'a-z' | sort)
[ "$(wc -l <<<"$folders")" -ge 4 ] || { echo "FAIL: kernels/Makefile.inc names fewer than 4 optional backends: $(echo $folders)"; fail=1; }
options=$(./configure --help 2>/dev/null || "$src/configure" --help)
package=$src/packaging/spack/spack_repo/hpcnn/packages/hpcnn/package.py
for b in $folders; do
  grep -q -- "--with-$b\[=DIR\]" <<<"$options" || { echo "FAIL: no configure option --with-$b for the $b backend"; fail=1; }
  if [ "$b" = cuda ]; then
    grep -q 'CudaPackage' "$package" || { echo "FAIL: the Spack package has no +cuda (CudaPackage)"; fail=1; }
  else
    grep -q "variant(\"$b\"" "$package" || { echo "FAIL: the Spack package has no variant +$b"; fail=1; }
  fi
done
echo "ok:   backend folders with configure options and Spack variants checked: $(echo $folders)"
blas=$(./hpcnn-blas --help | sed -n 's/^  --backend LIST .*(default: \([a-z0-9,-]*\))$/\1/p')
reframe=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$src/reframe'); import hpcnn_points as p; print(','.join(p.LIBRARIES))")
if ./hpcnn-train --list | grep -q '^  openblas ' && ./hpcnn-train --list | grep -q '^  eigen '; then
  same "ReFrame's libraries are hpcnn-blas's default ones" "$(sorted "$blas")" "$(sorted "$reframe")"
else
  echo "ok:   (a build without OpenBLAS or Eigen: ReFrame's libraries not compared with hpcnn-blas's default '$blas')"
fi
accepted=$(grep -o 'hpcnn-allreduce" --exchange [a-z0-9,-]*' "$src/jobscripts/acceptance.sh" | cut -d' ' -f3 | sort -u)
rfm_exchanges=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$src/reframe'); import hpcnn_points as p; print(','.join(p.EXCHANGES))")
same "ReFrame's schemes are the acceptance set's allreduce schemes" "$(sorted "$accepted")" "$(sorted "$rfm_exchanges")"
exit $fail
