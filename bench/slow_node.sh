#!/usr/bin/env bash
# Slows a command down from outside its process, the way a compute node really gets slow, so that
# an acceptance test can check that hpcnn's figures see it:
#
#   bench/slow_node.sh KIND PCT COMMAND [ARGS...]
#
# runs COMMAND (its stdin, stdout, stderr and environment inherited) while a fault of KIND takes
# away about PCT percent (an integer 1 to 90; "25" and "25%" alike) of what the command gets,
# tears the fault down however it ends (COMMAND exiting or failing, this script getting SIGINT,
# SIGTERM or SIGHUP) and exits with COMMAND's exit status. Those three signals are passed on to
# COMMAND's process after the fault is gone; the script still waits for COMMAND and exits with its
# status.
#
# Kinds (each works in periods of SLOW_NODE_PERIOD_MS, default 20 ms, from 2 to 1000):
#   none    COMMAND as it is (PCT may then also be 0), so that callers can loop over kinds.
#   quota   A CPU share taken away in short regular slices, as a CFS bandwidth limit does (a cgroup
#           cpu limit, a container sharing the node). COMMAND runs in a new cgroup hpcnn-slow-PID
#           whose CPU bandwidth is (100-PCT)% of the CPUs this script may use (nproc): quota
#           = period * nproc * (100-PCT)/100 per period. cgroup v1 (a cpu hierarchy:
#           cpu.cfs_period_us, cpu.cfs_quota_us) or cgroup v2 (cpu.max; "+cpu" is added to the
#           parent's cgroup.subtree_control where missing, and left there). The cgroup is made
#           under this script's own cgroup, or for v2 under the root where the own one cannot hold
#           it. COMMAND's process joins it before it execs, so that everything COMMAND starts
#           (threads, the ranks an mpirun starts) is inside. At the end anything still in it is
#           moved back to this script's cgroup and the cgroup is removed. Needs write access to
#           the cgroup file system (root, or a delegated cgroup).
#   slices  The same share taken without cgroups, by stopping COMMAND: a controller sends SIGSTOP
#           to COMMAND's process and all its descendants for PCT% of every period and SIGCONT for
#           the rest. The processes are looked up every 100 ms (/proc/PID/task/*/children; a new
#           one is stopped once it has been seen for 100 ms), so that ranks an mpirun starts are
#           caught (Open MPI puts each rank in a process group of its own, so stopping COMMAND's
#           process group would miss them). Left running is a process that handles SIGCONT
#           itself: a launcher such as mpirun, which would pass every SIGCONT on to its ranks with
#           a message (its ranks are stopped; a program of COMMAND's own that handles SIGCONT is
#           not slowed). A process that leaves the tree (a daemon, reparented) escapes. A stop
#           lasts its share from when it is sent, so it can be a little longer than PCT% when the
#           controller wakes late. Everything stopped is always continued.
#   hog     A competing process, as a stray daemon or a co-scheduled job: one per CPU (nproc),
#           spinning on the CPU (a bash loop, no system calls but reading the clock) for
#           min(2*PCT, 100)% of every period and sleeping the rest, at COMMAND's nice level. The
#           duty assumes the kernel shares a CPU fairly between two runnable processes: a hog busy
#           d of the time takes about d/2 of a CPU whose other process (a rank of COMMAND) also
#           wants it. What COMMAND loses really depends on how many CPUs it keeps busy and on the
#           scheduler (a waking hog may be favoured): measure, do not assume.
#   membw   A neighbour streaming through memory: one process per two CPUs (at least one), each
#           copying a 256 MiB buffer (half to half, in 4 MiB pieces, far beyond any cache; python3)
#           for min(2*PCT, 100)% of every period and sleeping the rest. It takes memory bandwidth
#           (and the CPU it runs on) from COMMAND; how much that slows COMMAND depends on how
#           memory-bound COMMAND is and on how much of the machine's bandwidth the copiers can
#           take (on a VM with few CPUs, little): the PCT sets the copiers' duty, not a loss.
#
# Output: nothing on stdout. One line on stderr at the start, "slow_node.sh: KIND PCT%: <what was
# set up>", unless SLOW_NODE_QUIET=1.
# Exit status: COMMAND's; 2 for bad usage (unknown KIND, PCT not an integer in 1..90, no COMMAND,
# a bad SLOW_NODE_PERIOD_MS), with one line on stderr naming the bad value; 3 when the fault cannot
# be set up on this machine (no writable cgroup cpu controller, bash older than 5, no python3),
# with one line on stderr saying what is missing, COMMAND not run (a caller may skip).
# The helpers (hog, membw copiers, slices controller) carry "hpcnn-slow-KIND-PID" in their command
# line (PID: this script's) and end by themselves within a period if this script dies. Only a
# SIGKILL of this script can leave something behind: an empty cgroup hpcnn-slow-PID (rmdir it).
set -u
me=slow_node.sh
usage_line="usage: $me KIND PCT COMMAND [ARGS...] (KIND: quota, slices, hog, membw or none)"

bad() { echo "$me: $*; $usage_line" >&2; exit 2; }
cannot() { echo "$me: $kind: $*" >&2; exit 3; }
say() { [[ ${SLOW_NODE_QUIET:-0} == 1 ]] || echo "$me: $kind $pct%: $*" >&2; }

# --- arguments -----------------------------------------------------------------------------------
(( $# >= 1 )) || bad "no KIND given"
kind=$1
case $kind in
  quota|slices|hog|membw|none) ;;
  *) bad "unknown KIND '$kind'" ;;
esac
(( $# >= 2 )) || bad "no PCT given"
pct=${2%\%}
lo=1; [[ $kind == none ]] && lo=0
if ! [[ $pct =~ ^[0-9]{1,3}$ ]] || (( 10#$pct < lo || 10#$pct > 90 )); then
  bad "PCT '$2' is not an integer from $lo to 90"
fi
pct=$(( 10#$pct ))
(( $# >= 3 )) || bad "no COMMAND given"
shift 2
period_ms=${SLOW_NODE_PERIOD_MS:-20}
if ! [[ $period_ms =~ ^[0-9]{1,4}$ ]] || (( 10#$period_ms < 2 || 10#$period_ms > 1000 )); then
  bad "SLOW_NODE_PERIOD_MS '$period_ms' is not an integer from 2 to 1000"
fi
period=$(( 10#$period_ms * 1000 ))             # microseconds
duty=$(( 2 * pct > 100 ? 100 : 2 * pct ))      # hog and membw: busy share of each period, in %

if [[ $kind == none ]]; then
  say "nothing set up"
  exec "$@"
fi

ncpu=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
[[ $ncpu =~ ^[1-9][0-9]*$ ]] || ncpu=1
tag=hpcnn-slow-$kind-$$

# --- state and teardown --------------------------------------------------------------------------
helpers=()        # PIDs of the helper processes this script started
cmd_pid=          # COMMAND's PID
cg=               # the cgroup made for quota
cg_home=          # the cgroup this script was in (where leftovers go back to)
torn=0
sig_pending=

# shellcheck disable=SC2317  # called from the traps
remove_cgroup() {
  local i p
  for (( i = 0; i < 50; i++ )); do
    rmdir "$cg" 2>/dev/null && { cg=; return 0; }
    [[ -d $cg ]] || { cg=; return 0; }
    if [[ -r $cg/cgroup.procs ]]; then
      while read -r p; do
        [[ -n $p ]] && { echo "$p" >"$cg_home/cgroup.procs"; } 2>/dev/null
      done <"$cg/cgroup.procs"
    fi
    sleep 0.1
  done
  echo "$me: could not remove cgroup $cg" >&2
}

# shellcheck disable=SC2317
teardown() {
  (( torn )) && return 0
  torn=1
  local p
  for p in "${helpers[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${helpers[@]}"; do wait "$p" 2>/dev/null; done
  [[ -n $cg ]] && remove_cgroup
  return 0
}

# A signal before COMMAND runs ends the script; after, the main loop tears the fault down, passes
# the signal on and waits on for COMMAND.
# shellcheck disable=SC2317
on_signal() {   # SIG NUMBER
  [[ -n $cmd_pid ]] || exit $(( 128 + $2 ))
  sig_pending=$1
}
trap teardown EXIT
trap 'on_signal INT 2' INT
trap 'on_signal TERM 15' TERM
trap 'on_signal HUP 1' HUP

# --- what the duty-cycle helpers share -----------------------------------------------------------
# Bash code for a sleep without a process (read on a pipe nobody writes) and for the check that
# this script (the parent) is still there: a helper whose parent died has been given another.
# shellcheck disable=SC2016  # code for another bash: expands there
nap_code='exec {nap_fd}<> <(:)
nap_until() { local d=$(( $1 - ${EPOCHREALTIME/[.,]/} )) t
  (( d > 0 )) || return 0
  printf -v t "%d.%06d" $(( d / 1000000 )) $(( d % 1000000 ))
  read -r -t "$t" -u "$nap_fd"; return 0; }
parent_alive() { local s; read -r s </proc/self/stat || return 1
  s=${s##*) }; s=${s#* }; [[ ${s%% *} == "$parent" ]]; }'
need_bash5() {
  [[ -n ${EPOCHREALTIME:-} ]] || cannot "needs bash 5 or newer (EPOCHREALTIME), this is $BASH_VERSION"
}

# hog: ARGS busy_us period_us parent_pid. Spins for its busy time from when it wakes (woken late,
# it spins on into the next period), then sleeps to the end of the period; a period missed as a
# whole (the machine away) restarts the schedule.
# shellcheck disable=SC2016
hog_code=$nap_code'
busy=$1 period=$2 parent=$3
trap '\''exit 0'\'' TERM HUP
n=${EPOCHREALTIME/[.,]/}
while parent_alive; do
  end=$(( ${EPOCHREALTIME/[.,]/} + busy ))
  while (( ${EPOCHREALTIME/[.,]/} < end )); do :; done
  n=$(( n + period ))
  nap_until "$n"
  now=${EPOCHREALTIME/[.,]/}
  (( now - n > period )) && n=$now
done'

# slices controller: ARGS root_pid run_us stop_us parent_pid. find_targets sets targets to ROOT
# and its descendants seen for 100 ms (a process just started may not have set its signal
# handlers yet); it runs every 100 ms (reading /proc costs), and at once when a target has
# gone (a PID is not reused that soon). Each period stops the targets but those that handle SIGCONT
# themselves (launchers): a process is looked at every period during its first second (when it
# sets its handlers), then taken as it was.
# shellcheck disable=SC2016
slices_code=$nap_code'
root=$1 run=$2 stop=$3 parent=$4 period=$(( $2 + $3 ))
stopped=() targets=() scanned=0 rescan=1
declare -A cont_checks=() seen=()
trap '\''kill -CONT "${stopped[@]}" 2>/dev/null; exit 0'\'' TERM HUP INT
handles_cont() {
  local st c=${cont_checks[$1]:-0}
  (( c < 0 )) && return 0
  (( c * period >= 1000000 )) && return 1
  IFS= read -r -d "" st <"/proc/$1/status"
  if [[ $st =~ SigCgt:[[:space:]]*([0-9a-fA-F]+) ]] && (( (16#${BASH_REMATCH[1]} >> 17) & 1 )); then
    cont_checks[$1]=-1; return 0
  fi
  cont_checks[$1]=$(( c + 1 )); return 1; }
find_targets() { local todo=("$root") p t c kids
  targets=()
  while (( ${#todo[@]} )); do
    p=${todo[-1]}; unset "todo[-1]"
    kids=""
    for t in /proc/"$p"/task/*/children; do
      c=""; { read -r c <"$t"; } 2>/dev/null; kids+=" $c"
    done
    read -r -a c <<<"$kids"
    todo+=("${c[@]}")
    [[ -d /proc/$p ]] || continue
    [[ -n ${seen[$p]:-} ]] || seen[$p]=$now
    (( now - seen[$p] >= 100000 )) && targets+=("$p")
  done; }
n=${EPOCHREALTIME/[.,]/}
while parent_alive && [[ -d /proc/$root ]]; do
  # The looking up while COMMAND runs; the stop lasts its time from when it was sent (a controller
  # woken late shortens the run that follows, not the stop).
  now=${EPOCHREALTIME/[.,]/}
  if (( rescan || now - scanned >= 100000 )); then find_targets; scanned=$now rescan=0; fi
  stopped=()
  for p in "${targets[@]}"; do handles_cont "$p" 2>/dev/null || stopped+=("$p"); done
  n=$(( n + run ))
  nap_until "$n"
  if (( ${#stopped[@]} )); then
    kill -STOP "${stopped[@]}" 2>/dev/null || rescan=1
    nap_until $(( ${EPOCHREALTIME/[.,]/} + stop ))
    kill -CONT "${stopped[@]}" 2>/dev/null
  else
    nap_until $(( n + stop ))
  fi
  stopped=()
  n=$(( n + stop ))
  now=${EPOCHREALTIME/[.,]/}
  (( now - n > period )) && n=$now
done'

# membw copier: ARGS busy_us period_us parent_pid.
membw_code='
import os, sys, time
busy, period, parent = int(sys.argv[1]) / 1e6, int(sys.argv[2]) / 1e6, int(sys.argv[3])
MiB = 1 << 20
size, chunk = 256 * MiB, 4 * MiB
half = size // 2
buf = bytearray(size)
mv = memoryview(buf)
pattern = bytes(range(256)) * (chunk // 256)
for off in range(0, size, chunk):      # real pages, not the shared zero page
    mv[off:off + chunk] = pattern
src, dst, off = 0, half, 0
clock = time.monotonic
n = clock()
while True:
    end = clock() + busy
    while clock() < end:
        mv[dst + off:dst + off + chunk] = mv[src + off:src + off + chunk]
        off += chunk
        if off >= half:
            off, src, dst = 0, dst, src
    n += period
    now = clock()
    if n > now:
        time.sleep(n - now)
    elif now - n > period:
        n = now
    if os.getppid() != parent:
        break
'

start_helper() {   # start one helper from the arguments, remember its PID
  "$@" </dev/null >/dev/null &
  helpers+=("$!")
}

# --- quota: the cgroup ---------------------------------------------------------------------------
write_file() {   # VALUE FILE: prints the reason on failure
  local err
  err=$( { printf '%s\n' "$1" >"$2"; } 2>&1 ) && return 0
  echo "${err##*: }"
  return 1
}

setup_quota() {
  local quota=$(( period * ncpu * (100 - pct) / 100 ))
  local name=hpcnn-slow-$$ mnt fstype opts rest ctrls path v1mnt='' v1own=/ v2mnt='' v2own=/ p why candidates
  (( quota >= 1000 )) || bad "SLOW_NODE_PERIOD_MS '$period_ms' too short for quota $pct% (a quota of $quota us, below 1000 us)"
  while read -r _ mnt fstype opts rest; do
    if [[ $fstype == cgroup && ,$opts, == *,cpu,* && -z $v1mnt ]]; then
      v1mnt=$mnt
    elif [[ $fstype == cgroup2 && -z $v2mnt && -r $mnt/cgroup.controllers ]]; then
      read -r p <"$mnt/cgroup.controllers"
      [[ " $p " == *" cpu "* ]] && v2mnt=$mnt
    fi
  done </proc/mounts
  while IFS=: read -r _ ctrls path; do
    [[ ,$ctrls, == *,cpu,* ]] && v1own=$path
    [[ -z $ctrls ]] && v2own=$path
  done </proc/self/cgroup
  if [[ -n $v1mnt ]]; then
    p=$v1mnt${v1own%/}
    [[ -d $p ]] || p=$v1mnt
    cg_home=$p
    cg=$p/$name
    [[ -d $cg ]] && rmdir "$cg" 2>/dev/null   # left by an earlier script of the same PID
    if ! why=$(mkdir "$cg" 2>&1); then
      cg=
      cannot "cannot create cgroup $p/$name (${why##*: }): needs a writable cgroup v1 cpu hierarchy"
    fi
    why=$(write_file "$period" "$cg/cpu.cfs_period_us") || cannot "cannot set $cg/cpu.cfs_period_us to $period ($why)"
    why=$(write_file "$quota" "$cg/cpu.cfs_quota_us") || cannot "cannot set $cg/cpu.cfs_quota_us to $quota ($why; a parent cgroup with a lower quota?)"
    quota_set="cgroup v1 $cg, cpu.cfs_quota_us=$quota cpu.cfs_period_us=$period"
  elif [[ -n $v2mnt ]]; then
    p=$v2mnt${v2own%/}
    [[ -d $p ]] || p=$v2mnt
    cg_home=$p
    why="no cpu controller in $p"
    candidates=("$p")
    [[ $p != "$v2mnt" ]] && candidates+=("$v2mnt")
    for p in "${candidates[@]}"; do
      rest=
      read -r rest <"$p/cgroup.controllers" 2>/dev/null
      [[ " $rest " == *" cpu "* ]] || { why="no cpu controller in $p"; continue; }
      rest=
      read -r rest <"$p/cgroup.subtree_control" 2>/dev/null
      if [[ " $rest " != *" cpu "* ]] && ! why=$(write_file +cpu "$p/cgroup.subtree_control"); then
        why="cannot enable +cpu in $p/cgroup.subtree_control ($why)"
        continue
      fi
      [[ -d $p/$name ]] && rmdir "$p/$name" 2>/dev/null
      if ! why=$(mkdir "$p/$name" 2>&1); then why="cannot create cgroup $p/$name (${why##*: })"; continue; fi
      cg=$p/$name
      if [[ -e $cg/cpu.max ]] && why=$(write_file "$quota $period" "$cg/cpu.max"); then break; fi
      why="cannot set $cg/cpu.max to '$quota $period' (${why:-no cpu.max})"
      rmdir "$cg" 2>/dev/null
      cg=
    done
    [[ -n $cg ]] || cannot "$why: needs a writable cgroup v2 with the cpu controller"
    quota_set="cgroup v2 $cg, cpu.max=\"$quota $period\""
  else
    cannot "no cgroup cpu controller on this machine (neither a cgroup v1 cpu hierarchy nor cgroup v2 with cpu in cgroup.controllers)"
  fi
  # Joining the cgroup the way COMMAND will (a subshell writing its own PID) must work.
  why=$( ( echo "$BASHPID" >"$cg/cgroup.procs" ) 2>&1 ) || cannot "cannot move a process into $cg (${why##*: })"
  printf -v quota_set '%s (%d.%02d of %d CPUs)' "$quota_set" $(( quota / period )) $(( quota * 100 / period % 100 )) "$ncpu"
}

# --- set up, run, wait ---------------------------------------------------------------------------
case $kind in
  quota)
    setup_quota
    say "$quota_set"
    ( trap - INT QUIT
      { echo "$BASHPID" >"$cg/cgroup.procs"; } 2>/dev/null || { echo "$me: quota: cannot move COMMAND into $cg" >&2; exit 3; }
      exec "$@" ) <&0 &
    cmd_pid=$!
    ;;
  slices)
    need_bash5
    [[ -r /proc/$$/task/$$/children ]] || cannot "needs /proc/PID/task/TID/children (a Linux kernel with CONFIG_PROC_CHILDREN)"
    stop=$(( period * pct / 100 ))
    say "COMMAND and its descendants stopped $(( stop / 1000 )).$(( stop % 1000 / 100 )) ms of every $period_ms ms (SIGSTOP, SIGCONT; $tag)"
    ( trap - INT QUIT; exec "$@" ) <&0 &
    cmd_pid=$!
    start_helper "$BASH" -c "$slices_code" "$tag" "$cmd_pid" $(( period - stop )) "$stop" "$$"
    ;;
  hog)
    need_bash5
    busy=$(( period * duty / 100 ))
    for (( i = 0; i < ncpu; i++ )); do
      start_helper "$BASH" -c "$hog_code" "$tag" "$busy" "$period" "$$"
    done
    say "$ncpu spinning processes ($tag), each busy $(( busy / 1000 )).$(( busy % 1000 / 100 )) ms of every $period_ms ms (duty $duty%)"
    ;;
  membw)
    command -v python3 >/dev/null || cannot "needs python3"
    py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
    [[ -n $py && -x $py ]] || cannot "needs a working python3"
    busy=$(( period * duty / 100 ))
    n=$(( ncpu / 2 > 1 ? ncpu / 2 : 1 ))
    for (( i = 0; i < n; i++ )); do
      start_helper "$py" -c "$membw_code" "$busy" "$period" "$$" "$tag"
    done
    say "$n copying process$( (( n > 1 )) && echo es) ($tag), 256 MiB each, busy $(( busy / 1000 )).$(( busy % 1000 / 100 )) ms of every $period_ms ms (duty $duty%)"
    ;;
esac

if [[ $kind == hog || $kind == membw ]]; then
  ( trap - INT QUIT; exec "$@" ) <&0 &
  cmd_pid=$!
fi

rc=
while :; do
  wait "$cmd_pid"
  r=$?
  # Waiting again after a signal: bash answers 127 or -1 when COMMAND is gone and its status was
  # already given (the status then is that of the wait the signal cut short).
  [[ -n $rc ]] && (( r < 0 || r == 127 )) && ! kill -0 "$cmd_pid" 2>/dev/null && break
  rc=$r
  [[ -n $sig_pending ]] || break
  sig=$sig_pending
  sig_pending=
  teardown
  kill -s "$sig" "$cmd_pid" 2>/dev/null
done
exit "$rc"
