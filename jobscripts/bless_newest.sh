# shellcheck shell=bash
# Sourced by jobscripts/acceptance_cron.sh and bench/acceptance_noise.sh: a reference made of the
# newest clean nights, each a run of its own (docs/ACCEPTANCE.md, "Runs from separate nights").
bless_newest_script=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bless.sh

# bless_newest N ROOT SYSTEM SET LOG RUN_DIR...: blesses the newest N of the RUN_DIRs (given newest
# first) into ROOT/SYSTEM/SET with bless.sh (BLESS_MIN_RUNS, BLESS_ARGS and BLESS_MAX_STALLS from
# the environment), again only when ROOT/SYSTEM/SET/NIGHTS lists other runs. A run bless.sh
# refuses is left out (its reason appended to LOG.refused) and an older one taken. Prints the runs
# the reference holds, oldest first. Exit 1 when fewer than N usable runs are left (printing their
# number), 2 when bless.sh fails otherwise (its reason in LOG: runs of several builds, say).
bless_newest() {
  local n=$1 root=$2 system=$3 set_name=$4 log=$5 refused
  shift 5
  local -a candidates=("$@") window
  while :; do
    [ "${#candidates[@]}" -ge "$n" ] || { echo "${#candidates[@]}"; return 1; }
    mapfile -t window < <(printf '%s\n' "${candidates[@]:0:$n}" | sort -V)
    if [ "$(cat "$root/$system/$set_name/NIGHTS" 2>/dev/null)" = "$(printf '%s\n' "${window[@]}")" ]; then
      printf '%s\n' "${window[@]}"
      return 0
    fi
    if REFERENCE_DIR=$root "$bless_newest_script" "${window[@]}" "$system" "$set_name" > "$log" 2>&1; then
      printf '%s\n' "${window[@]}" > "$root/$system/$set_name/NIGHTS"
      printf '%s\n' "${window[@]}"
      return 0
    fi
    refused=$(bless_refused "$log" | head -n 1)
    [ -n "$refused" ] || return 2
    cat "$log" >> "$log.refused"
    mapfile -t candidates < <(printf '%s\n' "${candidates[@]}" | grep -Fxv -- "$refused")
  done
}

# bless_refused LOG: the runs bless.sh refused in LOG, one per line.
bless_refused() { sed -n 's/^bless\.sh: \(.*\) is not blessed: .*/\1/p' "$1" 2>/dev/null; }
