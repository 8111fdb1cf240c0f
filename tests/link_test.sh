#!/usr/bin/env bash
# hpcnn-allreduce --links, the link test (docs/ACCEPTANCE.md, "A whole cluster"):
#  1. 5 ranks (odd: one sits out each round): the table is headed by the protocol; per size one
#     point of 5 rounds and 10 pairs, every received byte checked (wrong = 0); --table links shows
#     every pair once with a bandwidth; hpcnn-summary --population judges both tests; --randomize
#     measures every pair in a seeded order of the schedule;
#  2. --rounds 2 of 4 ranks' 3 rounds: 2 rounds, 4 pairs, the other pairs not measured;
#  3. a damaged byte of the last rank's message is found by its partners (exit 1, status failed,
#     wrong > 0, one line);
#  4. bad input: one rank, a 0-byte size, a negative --rounds (one line each, exit 2); --population
#     with nothing to judge (exit 1, one line).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
links() { local np=$1; shift; timeout 120 $MPIRUN -np "$np" ./hpcnn-allreduce --links "$@"; }

links 5 --sizes 8,64K --iters 5 --warmup 1 --output "$out/five" > "$out/five.txt"
status=$?
cat "$out/five.txt"
[ "$status" = 0 ] || { echo "FAIL: hpcnn-allreduce --links on 5 ranks exited $status"; fail=1; }
head -1 "$out/five.txt" | grep -q '^# protocol: every pair of ranks in P-1 rounds' || { echo "FAIL: no protocol line"; fail=1; }
csv=$(./hpcnn-summary --format csv --columns exchange,ranks,size_bytes,link_rounds,link_pairs,wrong,status "$out/five" | tail -n +2)
echo "$csv"
[ "$(grep -c '^links,5,\(8\|65536\),5,10,0,ok$' <<<"$csv")" = 2 ] || { echo "FAIL: want 2 points of 5 rounds, 10 pairs, 0 wrong"; fail=1; }
pairs=$(./hpcnn-summary --format csv --table links --columns size_bytes,pair,pair_bw_gbs,pair_ratio "$out/five" | tail -n +2)
[ "$(wc -l <<<"$pairs")" = 20 ] || { echo "FAIL: --table links: want 20 rows (10 pairs x 2 sizes)"; echo "$pairs"; fail=1; }
[ "$(cut -d, -f1,2 <<<"$pairs" | sort -u | wc -l)" = 20 ] || { echo "FAIL: --table links: a pair twice"; fail=1; }
awk -F, '!($3 > 0 && $4 > 0) { bad = 1 } END { exit bad }' <<<"$pairs" || { echo "FAIL: a pair without a bandwidth"; fail=1; }
# Ranks that share this machine's cores see the scheduler's latency, which can be any multiple of
# the median pair's: what is checked is that both tests are judged and the exit status agrees.
./hpcnn-summary --population "$out/five" > "$out/population.txt"
status=$?
cat "$out/population.txt"
named=$(sed -n 's/^population: 0 per-node point(s), 2 link test(s), \([0-9]*\) named$/\1/p' "$out/population.txt")
[ -n "$named" ] || { echo "FAIL: --population did not judge 2 link tests"; fail=1; }
[ "$status" = "$([ "${named:-0}" = 0 ] && echo 0 || echo 1)" ] || { echo "FAIL: --population named $named and exited $status"; fail=1; }

# --randomize: the same pairs, in another order of the schedule (recorded).
links 4 --sizes 1K --randomize --seed 7 --iters 3 --warmup 1 --output "$out/random" --quiet || { echo "FAIL: --randomize exited $?"; fail=1; }
random=$(./hpcnn-summary --format csv --columns link_order,link_rounds,link_pairs,wrong "$out/random" | tail -n 1)
[ "$random" = seeded,3,6,0 ] || { echo "FAIL: --randomize on 4 ranks: want seeded,3,6,0, got $random"; fail=1; }

links 4 --sizes 1K --rounds 2 --iters 3 --warmup 1 --output "$out/sample" --quiet || { echo "FAIL: --rounds 2 exited $?"; fail=1; }
sample=$(./hpcnn-summary --format csv --columns link_rounds,link_pairs "$out/sample" | tail -n 1)
[ "$sample" = 2,4 ] || { echo "FAIL: --rounds 2 of 4 ranks: want 2 rounds and 4 pairs, got $sample"; fail=1; }

HPCNN_TEST_CORRUPT_ELEMENT=3 links 4 --sizes 1K --iters 3 --warmup 1 --output "$out/damaged" --quiet 2> "$out/damaged.err"
status=$?
cat "$out/damaged.err"
damaged=$(./hpcnn-summary --format csv --columns wrong,status "$out/damaged" | tail -n 1)
[ "$status" = 1 ] || { echo "FAIL: a damaged byte: exit $status, want 1"; fail=1; }
[[ "$damaged" =~ ^[1-9][0-9]*,failed$ ]] || { echo "FAIL: a damaged byte: want wrong > 0 and failed, got $damaged"; fail=1; }
grep -q 'received bytes differ from what the partner sent' "$out/damaged.err" || { echo "FAIL: no line on the damaged byte"; fail=1; }

bad() {  # bad NP WANT_STATUS PATTERN ARGS...
  local np=$1 want=$2 pattern=$3 err status
  shift 3
  err=$(links "$np" "$@" --output "$out/bad" --quiet 2>&1 >/dev/null)
  status=$?
  echo "  $* (np $np): exit $status: $(grep '^hpcnn-allreduce' <<<"$err")"
  [ "$status" = "$want" ] || { echo "FAIL: $* on $np ranks: exit $status, want $want"; fail=1; }
  # One line of hpcnn's (the launcher adds its own about the exit status).
  [ "$(grep -c '^hpcnn-allreduce' <<<"$err")" = 1 ] && grep -q -- "$pattern" <<<"$err" ||
    { echo "FAIL: $* on $np ranks: want one line of hpcnn-allreduce with '$pattern'"; fail=1; }
}
bad 1 2 '1 rank has no link' --sizes 8
bad 2 2 "'0': a link is measured with at least 1 byte" --sizes 0
bad 2 2 '--rounds' --rounds -1
err=$(./hpcnn-summary --population "$out/damaged" 2>&1 >/dev/null); status=$?
[ "$status" = 1 ] && grep -q 'nothing to judge' <<<"$err" || { echo "FAIL: --population on a failed link test alone: exit $status, $err"; fail=1; }
exit $fail
