#!/usr/bin/env bash
# man_from_help.sh PROGRAM "ALL PROGRAMS": prints the man page of an hpcnn executable, made from its own --help
# and --version output, so that `man hpcnn-train` says exactly what `hpcnn-train --help` says
# (every option, its default and [list] flag) and cannot drift from the option tables.
#   --help's layout (src/harness/options.cpp): "usage: NAME ARGS", description paragraphs, then
#   option lines "  --opt ARG   text", then optional sections "title:" whose lines are shown as
#   they are (hpcnn-summary's tables and fields), and an optional "exit status: ..." line.
#   SEE ALSO names the other executables of ALL PROGRAMS (the build's bin_PROGRAMS).
# Used by the build (packaging/Makefile.inc); exit 1 with one line if PROGRAM gives no help.
set -euo pipefail
[ $# = 2 ] || { echo "usage: ${0##*/} PROGRAM 'ALL PROGRAMS'" >&2; exit 2; }
program=$1 all_programs=$2
# The executables call MPI_Init before reading their options: Open MPI refuses root without these
# (build containers); other MPIs ignore them.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
help=$("$program" --help) || { echo "${0##*/}: $program --help failed" >&2; exit 1; }
version=$("$program" --version) || { echo "${0##*/}: $program --version failed" >&2; exit 1; }
[[ "$help" == usage:* ]] || { echo "${0##*/}: $program --help does not start with 'usage:'" >&2; exit 1; }

# Exit statuses of the suites (docs/FAILURES.md), for pages whose --help does not list its own.
default_exit_status='0|every point ran (ok, diverged or skipped: see each point'"'"'s status)
1|a runtime error: a point failed (the others ran and are in the result file), a file could not be written, a rank died, or the watchdog ended a hang
2|a usage error (a bad option or value); nothing ran, no file was written
75|stopped by SIGTERM, SIGINT or SIGUSR1 (time limit, preemption): the completed points are in the result file; rerun with --run-id ID --resume
128+N|a second stop signal N while the first was handled'

printf '%s\n' "$help" | awk -v version="$version" -v exit_table="$default_exit_status" -v all_programs="$all_programs" '
  # roff escapes: backslashes first, then ASCII hyphens (\- keeps options copy-pastable), a break
  # point after each comma (long value lists), and a leading dot or quote would be taken for a request.
  function esc(s,   c) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); gsub(/,/, ",\\:", s); c = substr(s, 1, 1); if (c == "." || c == "\047") s = "\\&" s; return s }
  function section(name) { if (verbatim) { print ".fi"; verbatim = 0 } print ".SH " name }
  NR == 1 {
    sub(/^usage: */, ""); prog = $1; args = $0; sub(/^[^ ]+ */, "", args)
    up = toupper(prog); nv = split(version, vw, " "); version = ""
    for (i = 1; i <= nv && version == ""; i++) if (vw[i] ~ /^[0-9]+\.[0-9]/) version = "hpcnn " vw[i]
    printf ".TH %s 1 \"\" \"%s\" \"User Commands\"\n", esc(up), esc(version == "" ? prog : version)
    print ".nh"; print ".ad l"   # no hyphenation, ragged right: option names stay whole
    state = "description"; next
  }
  state == "description" && /^  --/ { state = "options" }
  state == "description" {
    if ($0 == "") { if (ndesc && desc[ndesc] != "") desc[++ndesc] = ""; next }
    desc[++ndesc] = $0; next
  }
  state == "options" && /^  --/ {
    if (!options_started) { emit_head(); section("OPTIONS"); options_started = 1 }
    line = $0; sub(/^  /, "", line)
    spec = line; sub(/  +.*/, "", spec); text = substr(line, length(spec) + 1); sub(/^ +/, "", text)
    name = spec; sub(/ .*/, "", name); arg = substr(spec, length(name) + 1); sub(/^ /, "", arg)
    print ".TP"; print "\\fB" esc(name) "\\fR" (arg == "" ? "" : " \\fI" esc(arg) "\\fR")
    print esc(text); next
  }
  /^exit status: / { own_exit = $0; sub(/^exit status: */, "", own_exit); next }
  /^[^ ].*:$/ {
    if (!options_started) { emit_head(); options_started = 1 }
    title = $0; sub(/:$/, "", title); section(toupper(esc(title))); print ".nf"; verbatim = 1; state = "other"; next
  }
  state == "other" { print ($0 == "" ? "" : esc($0)); next }
  $0 == "" { next }
  { if (!options_started) { emit_head(); section("OPTIONS"); options_started = 1 } print ".PP"; print esc($0) }
  function emit_head(   i, first, name_line) {
    # NAME: the first sentence of the description.
    first = ""; for (i = 1; i <= ndesc && desc[i] != ""; i++) first = first (first == "" ? "" : " ") desc[i]
    name_line = first; if (match(name_line, /\. /)) name_line = substr(name_line, 1, RSTART - 1); sub(/\.$/, "", name_line)
    print ".SH NAME"; print esc(prog) " \\- " esc(name_line)
    print ".SH SYNOPSIS"; print "\\fB" esc(prog) "\\fR " esc(args)
    print ".SH DESCRIPTION"
    for (i = 1; i <= ndesc; i++) print (desc[i] == "" ? ".PP" : esc(desc[i]))
  }
  END {
    if (!options_started) emit_head()
    section("EXIT STATUS")
    if (own_exit != "") print esc(own_exit)
    else {
      n = split(exit_table, rows, "\n")
      for (i = 1; i <= n; i++) { split(rows[i], f, "|"); print ".TP"; print "\\fB" esc(f[1]) "\\fR"; print esc(f[2]) }
    }
    section("SEE ALSO")
    n = split(all_programs, all, " ")
    see = ""; for (i = 1; i <= n; i++) if (all[i] != prog) see = see (see == "" ? "" : ",\n") "\\fB" esc(all[i]) "\\fR(1)"
    print see
    print ".PP"
    print "FAILURES.md (exit statuses, resuming), RESULTS.md (result files), CLUSTER.md (Slurm job scripts) and"
    print "INSTALL.md in the hpcnn documentation folder (share/doc/hpcnn); the job scripts are in share/hpcnn/jobscripts."
  }'
