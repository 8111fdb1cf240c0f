#!/usr/bin/env bash
# A night of a whole cluster names the node or link that went bad, and only that one:
# jobscripts/acceptance.sh under sbatch on 8 hosts (tests/cluster/cluster_up.sh), every host's link
# shaped to the same rate (tests/cluster/cluster_shape.sh), one smoke night judged by the population
# (hpcnn-summary --population: every node against the median node, every pair against the median
# pair), faults applied from outside the processes measured:
#  - n3 given 3/4 of a CPU (a CPU quota on its slurmd's cgroup, tests/cluster/cluster_slow.sh) and
#    n5's link shaped to half the others' rate: n3 and n5 named;
#  - n2's SGEMM step slowed in both rounds of the night and not after (its hpcnn-blas run under
#    bench/slow_node.sh slices 50 twice, as a passing disturbance would): the second look (the
#    night measures a named node's step once more) takes it back, n2 is not named;
#  - no other node named, no link between two other nodes; under acceptance_cron.sh n3 and n5
#    flagged for their first night, the night failed for want of a reference, its page linked.
# The one-node steps run in waves of 2 hosts with 1 thread each (the 8 hosts share this machine's
# cores), each night's figures are the best of 2 rounds, a node or pair is named below 85% of the
# median, and the link test measures bandwidth (1 MiB) only: the namespace hosts share 2 cores, so
# a pair's latency is the scheduler's (docs/ACCEPTANCE.md has the rates measured with
# bench/cluster_nights.sh, nights without faults included). Also: a HOSTFILE that names a host
# twice is refused with one line, exit 2.
source "$(dirname "$0")/cluster_test_lib.sh"

# Bad input first (no cluster needed): a host file with a duplicate.
printf 'h1 slots=1\nh2 slots=1\nh1 slots=1\n' > "$work/dup-hosts"
out=$(env -u SLURM_JOB_ID HOSTFILE="$work/dup-hosts" OUT="$work/dup" "$src/jobscripts/acceptance.sh" smoke dup 2>&1) && status=0 || status=$?
echo "$out" | sed 's/^/  dup: /'
check "a HOSTFILE naming h1 twice: exit 2" test "$status" = 2
check "a HOSTFILE naming h1 twice: one line naming it" test "$(grep -c "host 'h1' twice" <<<"$out")" = 1

cluster_start 8
rate=200mbit half=100mbit
for ((k = 1; k <= 8; k++)); do "$src/tests/cluster/cluster_shape.sh" "$cluster" "n$k" "$rate" >/dev/null || { echo "FAIL: shape n$k"; exit 1; }; done
echo "every host's link at $rate"

# night NAME [cron]: one smoke night on all 8 hosts (acceptance.sh, or with `cron` the history's
# night of acceptance_cron.sh, both under sbatch); $work/NAME/out is the night's folder; prints its
# population.txt; fails when it has none.
night() {
  local dir=$work/$1 id start=$SECONDS script=acceptance.sh
  [ "${2:-}" != cron ] || script=acceptance_cron.sh
  id=$(submit "$dir" HPCNN_BIN="$work/bin" ACCEPT_ROUNDS=2 ACCEPT_POPULATION_THRESHOLD=15% ACCEPT_NODE_WAVE=2 THREADS=1 ACCEPT_DATA=none ACCEPT_LINK_SIZES=1M \
         OUT="$dir/out" HISTORY="$dir/history" REFERENCE_DIR="$work/no-reference" --nodes=8 "$src/jobscripts/$script" smoke testcluster) ||
    return 1
  wait_job "$id" 900 || return 1
  echo "night $1: $((SECONDS - start)) s"
  # acceptance_cron.sh chooses the night's folder in its history (OUT is acceptance.sh's alone).
  [ "${2:-}" != cron ] || ln -sfn "$(find "$dir/history/testcluster/smoke" -mindepth 1 -maxdepth 1 -type d -name '2*' | head -n 1)" "$dir/out"
  if [ ! -s "$dir/out/population.txt" ]; then
    echo "FAIL: night $1 wrote no population.txt"; tail -n 30 "$dir"/slurm-*.out; fail=1; return 1
  fi
  sed "s/^/  $1: /" "$dir/out/population.txt"
}
# named NAME: the nodes the night named, and the nodes of every link it named, one per line
named_nodes() { sed -n 's/^population: \(n[0-9]*\): .*REGRESSION$/\1/p' "$work/$1/out/population.txt" | sort -u; }
named_links() { sed -n 's/^population: link \(n[0-9]*-n[0-9]*\): .*REGRESSION$/\1/p' "$work/$1/out/population.txt" | sort -u; }
# other_links NAME NODE: named links that do not touch NODE
other_links() { named_links "$1" | grep -v -E "(^|-)$2(-|$)" || true; }

# The night's executables: the build's, except that n2's first two SGEMM steps (the night's two
# rounds) run with half their time taken away (bench/slow_node.sh slices: stopped and continued
# from outside), its third (the second look) as it is.
mkdir -p "$work/bin"
for exe in "$build"/hpcnn-*; do [ -x "$exe" ] && [ -f "$exe" ] && ln -sf "$exe" "$work/bin/"; done
rm -f "$work/bin/hpcnn-blas"
cat > "$work/bin/hpcnn-blas" <<EOF
#!/usr/bin/env bash
if [ "\${SLURMD_NODENAME:-}" = n2 ] && [[ " \$* " == *" --sweep gemm "* ]]; then
  echo x >> "$work/n2-gemm-runs"
  [ "\$(wc -l < "$work/n2-gemm-runs")" -gt 2 ] || SLOW_NODE_QUIET=1 exec "$src/bench/slow_node.sh" slices 50 "$build/hpcnn-blas" "\$@"
fi
exec "$build/hpcnn-blas" "\$@"
EOF
chmod +x "$work/bin/hpcnn-blas"

# Three faults in one night, through acceptance_cron.sh under sbatch (the Slurm path keeps the
# history's rules: a node named the first night is flagged; no reference is a failure; its index
# page): n3 given 3/4 of a CPU (a CPU quota on its slurmd's cgroup), n5's link at half rate, and
# n2's SGEMM slowed for the night's two rounds only.
"$src/tests/cluster/cluster_slow.sh" "$cluster" n3 0.75; slow=$?
if [ "$slow" = 77 ]; then
  echo "(no cgroup CPU limit here: n3 is left at full speed, only n5's link is slowed)"
elif [ "$slow" != 0 ]; then
  echo "FAIL: cluster_slow.sh n3 0.75"; fail=1
fi
bad="n5"
[ "$slow" = 0 ] && bad="n3 n5"
check "shape n5 to $half" "$src/tests/cluster/cluster_shape.sh" "$cluster" n5 "$half"
night faults cron && {
  for node in $bad; do
    check "faults night: $node named" test "$(named_nodes faults | grep -c "^$node$")" = 1
  done
  check "faults night: n2's SGEMM slowed in both rounds, looked at again" grep -q '^second look: gemm on .*(named: .*n2' "$work/faults/out/second_look.txt"
  check "faults night: n2's SGEMM ran three times (two rounds and the second look)" test "$(wc -l < "$work/n2-gemm-runs")" = 3
  others=$(named_nodes faults | grep -v -x -E "$(tr ' ' '|' <<<"$bad")" || true)
  check "faults night: no other node named ($(echo $others))" test -z "$others"
  links=$(named_links faults | grep -v -E "(^|-)($(tr ' ' '|' <<<"$bad"))(-|$)" || true)
  check "faults night: no link between two other nodes named ($(echo $links))" test -z "$links"
  sed 's/^/  night.txt: /' "$work/faults/out/night.txt"
  for node in $bad; do
    check "under sbatch, acceptance_cron.sh flags $node for its first night" \
      grep -q "^flagged (fails if it lasts): named by the population tonight only: $node " "$work/faults/out/night.txt"
  done
  check "under sbatch, acceptance_cron.sh fails a night without a reference" \
    grep -q '^failed: acceptance.sh exited 1 with no verdict against a reference' "$work/faults/out/night.txt"
  check "the history's index links the night's nodes and links page" \
    grep -q 'population.html">nodes and links</a>' "$work/faults/history/testcluster/smoke/index.html"
}
[ "$slow" != 0 ] || check "lift n3's limit" "$src/tests/cluster/cluster_slow.sh" "$cluster" n3 off

# The faults night's page as a person sees it: the node map and the link matrix, n5 first in the
# matrix (worst first), and a screenshot kept in the build folder (cluster_pages/).
page=$work/faults/out/population.html
first_in_matrix() {
  python3 - "$page" <<'EOF'
import re, sys
html = open(sys.argv[1]).read()
part = html.split("Link matrix: links at 1 MiB", 1)
first = re.search(r"<tbody>\s*<tr><td>([^<]*)</td>", part[1]) if len(part) == 2 else None
sys.exit(0 if first and first.group(1) == "n5" and "Node map" in html else 1)
EOF
}
check "the faults night's page: a node map, and n5 first in the 1 MiB link matrix" first_in_matrix
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ] && [ -s "$page" ]; then
  shots=$build/cluster_pages
  mkdir -p "$shots"
  isolate=()
  unshare -n true 2>/dev/null && isolate=(unshare -n)
  timeout 120 "${isolate[@]}" "$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$work/browser" --window-size=1280,1100 --screenshot="$shots/population.png" "file://$page" >/dev/null 2>&1
  check "the faults night's page: a screenshot ($shots/population.png)" test -s "$shots/population.png"
else
  echo "(no chromium: the page is checked, not photographed)"
fi
exit $fail
