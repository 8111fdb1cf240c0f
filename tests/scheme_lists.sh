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
# (chosen by the build), and the link test's schedule.
listed=$(sed -n '/^EXCHANGE_SCHEME_SOURCES =/,/^[^\t]/p' "$src/collectives/Makefile.inc" | grep -o '%reldir%/[a-z_]*\.cpp' | sed 's@%reldir%/@@' | sort)
present=$(cd "$src/collectives" && ls *.cpp | grep -v -x -E 'host_buffers.cpp|mpi_allreduce.cpp|gpu_exchanges.cpp|nccl_allreduce.cpp|no_gpu_exchanges.cpp|pair_schedule.cpp' | sort)
same "EXCHANGE_SCHEME_SOURCES: every scheme source of collectives/" "$present" "$listed"
grep -q 'EXCHANGE_SCHEME_SOURCES' "$src/simulate/Makefile.inc" ||
  { echo "FAIL: simulate/Makefile.inc does not build the rank program from EXCHANGE_SCHEME_SOURCES"; fail=1; }
exit $fail
