#!/usr/bin/env bash
# hpcnn-summary --html as a person sees it, in a real browser: Debian's chromium, headless, in a
# network namespace of its own (nothing could leave the machine), with its network log kept:
#  - a reference of 5 runs (hpcnn-train and hpcnn-infer, LeNet-5, each point timed for 0.3 s: many
#    periods of the slowdown) and a run whose training is 2x slower (stopped half of every 20 ms
#    from outside, bench/slow_node.sh slices 50): the page's verdict table shows the training point first, as a
#    failing row, and the settings both points share once above it;
#  - the page loads with no console message (the page logs nothing; an error or a refused fetch
#    would show there), and the browser asked for nothing but the page itself;
#  - every plot has marks: a trend page over the runs, hpcnn-scale's scaling table at 1 and 2
#    ranks with its plot (images/s and efficiency panels), and a per-operator profile;
#  - the reference's stability page lists every point, UNSTABLE ones first;
#  - a folder holding a damaged file: the page still comes out and names the file it left out;
#  - an output folder that does not exist: exit 2 and one line; a path that cannot be written
#    (it is a folder): exit 1 and one line, nothing written.
# The screenshots stay in the build folder (html_report/) for a CI run to keep.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
browser=$(command -v chromium || command -v chromium-browser)
[ -n "$browser" ] || { echo "SKIP: no chromium (./quickstart check installs it: apt-get install chromium)"; exit 77; }
command -v gnuplot >/dev/null || { echo "SKIP: no gnuplot (apt-get install gnuplot-nox)"; exit 77; }
shots=$HPCNN_BUILDDIR/html_report
rm -rf "$shots" && mkdir -p "$shots"
point=(--model lenet5 --batch 16 --threads 1 --iters 20 --warmup 3 --min-time 0.3 --quiet)

# The runs: each its own session, as acceptance nights are.
for k in 1 2 3 4 5; do
  for exe in hpcnn-train hpcnn-infer; do
    HPCNN_SESSION=ref-$k run ./$exe "${point[@]}" --output "$out/ref"
  done
done
HPCNN_SESSION=now SLOW_NODE_QUIET=1 run "$HPCNN_SRCDIR/bench/slow_node.sh" slices 50 ./hpcnn-train "${point[@]}" --output "$out/now"
HPCNN_SESSION=now run ./hpcnn-infer "${point[@]}" --output "$out/now"
run ./hpcnn-train "${point[@]}" --profile ops --output "$out/ops"
for np in 1 2; do
  run $MPIRUN -np $np ./hpcnn-scale --model lenet5 --batch 8 --iters 6 --warmup 2 --exchange ring,mpi --quiet --output "$out/scale"
done

# see NAME PAGE: the page in the browser: its DOM after load ($out/NAME.dom), console messages and
# network log, and a screenshot ($shots/NAME.png). Run in an empty network namespace where
# possible (root), so that no request could leave even if the page asked.
see() {
  local name=$1 page=$2 isolate=()
  unshare -n true 2>/dev/null && isolate=(unshare -n)
  # Chromium's own traffic (updates, spelling dictionaries, metrics) off: what is left is the page's.
  local flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --hide-scrollbars
               --disable-background-networking --disable-component-update --disable-sync --disable-default-apps
               --disable-client-side-phishing-detection --no-pings --disable-features=SpellCheckService,Translate
               --user-data-dir="$out/profile-$name" --enable-logging=stderr --v=0 --log-net-log="$out/$name.netlog"
               --window-size=1280,2000)
  timeout 120 "${isolate[@]}" "$browser" "${flags[@]}" --dump-dom "file://$page" > "$out/$name.dom" 2> "$out/$name.console"
  timeout 120 "${isolate[@]}" "$browser" "${flags[@]}" --screenshot="$shots/$name.png" "file://$page" > /dev/null 2>&1
  [ -s "$out/$name.dom" ] || { echo "FAIL: $name: the browser showed nothing"; tail -5 "$out/$name.console"; fail=$LINENO; return 1; }
  [ -s "$shots/$name.png" ] && echo "ok:   $name: screenshot $shots/$name.png ($(stat -c %s "$shots/$name.png") bytes)" ||
    { echo "FAIL: $name: no screenshot"; fail=$LINENO; }
  # Console messages of the page (CONSOLE lines); CSP refusals show there too.
  if grep -qE 'CONSOLE|Content Security Policy|Refused to' "$out/$name.console"; then
    echo "FAIL: $name: console messages:"; grep -E 'CONSOLE|Content Security Policy|Refused to' "$out/$name.console" | head -5; fail=$LINENO
  else
    echo "ok:   $name: no console warning or error"
  fi
  # Every request the page made (the browser's own, initiated by no origin, are its business and
  # find no network here): none but the page itself.
  local asked
  asked=$(/usr/bin/python3 - "$out/$name.netlog" "file://$page" <<'EOF'
import json, sys
try:
    log = json.load(open(sys.argv[1]))
except Exception:  # a log cut short at exit: read what was written
    text = open(sys.argv[1]).read().rstrip().rstrip(',')
    log = json.loads(text + ']}' if not text.endswith('}') else text)
urls = set()
for event in log.get('events', []):
    params = event.get('params') or {}
    url, initiator = params.get('url'), params.get('initiator')
    if url and initiator and initiator != 'not an origin' and url != sys.argv[2] and not url.startswith('data:'):
        urls.add(url)
print('\n'.join(sorted(urls)))
EOF
)
  [ -z "$asked" ] && echo "ok:   $name: no request but the page" || { echo "FAIL: $name: the page asked for:"; echo "$asked" | head -5; fail=$LINENO; }
}
# dom_check NAME PYTHON: PYTHON (reads the DOM as `dom`, a string) prints FAIL lines or ok lines.
dom_check() {
  /usr/bin/python3 - "$out/$1.dom" <<EOF
import re, sys
dom = open(sys.argv[1]).read()
$2
EOF
}

# 1. The comparison: verdicts, failing row first.
# page_made STATUSES CMD...: CMD must exit with one of STATUSES ("0", "1", "0 1") and say where
# its page went.
page_made() {
  local want=$1 status
  shift
  "$@" > /dev/null 2> "$out/page_made.err"
  status=$?
  [[ " $want " == *" $status "* ]] && grep -q 'page written to' "$out/page_made.err" ||
    { echo "FAIL: $* exited $status, want $want and a page:"; cat "$out/page_made.err"; fail=$LINENO; }
}
page_made 1 ./hpcnn-summary --compare "$out/ref" --html "$out/compare.html" --tolerance-floor 20% "$out/now"
see compare "$out/compare.html"
dom_check compare '
rows = re.findall(r"<tbody>(.*?)</tbody>", dom, re.S)
first = re.search(r"<tr class=\"(\w+)\">(.*?)</tr>", rows[0], re.S) if rows else None
if not first or first.group(1) != "fail" or "img_per_s" not in first.group(2) or "REGRESSION" not in first.group(2):
    print("FAIL: compare: the first verdict row is not the failing training point:", first.group(0)[:300] if first else rows[:1])
elif "hpcnn-train" not in first.group(2):
    print("FAIL: compare: the failing row does not name hpcnn-train:", first.group(2)[:300])
else:
    print("ok:   compare: the first verdict row is the slowed training point, REGRESSION, coloured")
if "Settings of every row: " not in dom or "model=lenet5" not in dom.split("Settings of every row: ")[1].split("</p>")[0]:
    print("FAIL: compare: the shared settings are not said once above the table")
else:
    print("ok:   compare: the shared settings once above the table")
if dom.count("<details>") != 2:
    print("FAIL: compare: want a provenance section per run compared (2), found", dom.count("<details>"))
elif "reproducer:" not in dom:
    print("FAIL: compare: no reproducer in the provenance")
else:
    print("ok:   compare: every run'"'"'s provenance and reproducer, folded")
' | tee "$out/check.txt"; grep -q '^FAIL' "$out/check.txt" && fail=$LINENO

# 2. Plots: the trend over the runs and the scaling table, each with marks.
# (one slow run is flagged; whether the trend also calls the last runs a drift depends on their
# noise: exit 0 or 1, a page either way)
page_made "0 1" ./hpcnn-summary --trend 3 --html "$out/trend.html" "$out/ref" "$out/now"
see trend "$out/trend.html"
page_made 0 ./hpcnn-summary --table scaling --html "$out/scaling.html" "$out/scale"
see scaling "$out/scaling.html"
page_made 0 ./hpcnn-summary --table ops --html "$out/ops.html" "$out/ops"
see ops "$out/ops.html"
for name in trend scaling ops; do
  dom_check $name '
figures = re.findall(r"<figure>(.*?)</figure>", dom, re.S)
if not figures:
    print("FAIL: '$name': no plot on the page")
for k, f in enumerate(figures):
    marks = len(re.findall(r"<path", f)) + len(re.findall(r"<use", f))
    print(("ok:  " if marks >= 5 else "FAIL:") + " '$name': plot %d has %d marks" % (k + 1, marks))
if "plot left out" in dom:
    print("FAIL: '$name': a plot was left out:", dom.split("plot left out")[1][:200])
' | tee "$out/check.txt"; grep -q '^FAIL' "$out/check.txt" && fail=$LINENO
done
grep -q 'efficiency' "$out/scaling.dom" || { echo "FAIL: scaling: no efficiency panel"; fail=$LINENO; }

# The reference's stability: a table of every point, UNSTABLE ones first.
page_made 0 ./hpcnn-summary --stability --html "$out/stability.html" "$out/ref"
see stability "$out/stability.html"
dom_check stability '
body = re.findall(r"<tbody>(.*?)</tbody>", dom, re.S)
rows = re.findall(r"<tr class=\"(\w+)\">", body[0]) if body else []
if "<h2>Stability</h2>" not in dom or len(rows) < 2:
    print("FAIL: stability: no stability table of the points (rows: %d)" % len(rows))
elif "unstable" in rows and rows.index("unstable") > 0 and rows[0] != "unstable":
    print("FAIL: stability: an UNSTABLE row is not first:", rows)
else:
    print("ok:   stability: %d rows, UNSTABLE first (%d)" % (len(rows), rows.count("unstable")))
' | tee "$out/check.txt"; grep -q '^FAIL' "$out/check.txt" && fail=$LINENO

# 3. A damaged file beside good ones: the page comes out, naming it.
mkdir -p "$out/mixed" && cp "$out"/ref/*.h5 "$out/mixed/" && head -c 3000 "$(ls "$out"/ref/*.h5 | head -1)" > "$out/mixed/damaged.h5"
./hpcnn-summary --html "$out/mixed.html" "$out/mixed" > /dev/null 2> "$out/mixed.err"
status=$?
[ "$status" = 1 ] && [ -s "$out/mixed.html" ] && grep -q 'Left out' "$out/mixed.html" && grep -q 'damaged.h5' "$out/mixed.html" &&
  echo "ok:   a damaged file: exit 1, the page names it" ||
  { echo "FAIL: a damaged file: exit $status, page $(ls -l "$out/mixed.html" 2>&1)"; cat "$out/mixed.err"; fail=$LINENO; }

# 4. Bad output paths.
err=$(./hpcnn-summary --html "$out/nowhere/page.html" "$out/ref" 2>&1 >/dev/null); status=$?
[ "$status" = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *nowhere* ]] && echo "ok:   missing folder: exit 2: $err" ||
  { echo "FAIL: missing folder: exit $status: $err"; fail=$LINENO; }
mkdir -p "$out/a-folder.html"
err=$(./hpcnn-summary --html "$out/a-folder.html" "$out/ref" 2>&1 >/dev/null); status=$?
[ "$status" = 1 ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *a-folder.html* ]] && [ -z "$(ls -A "$out/a-folder.html")" ] &&
  echo "ok:   unwritable page: exit 1: $err" || { echo "FAIL: unwritable page: exit $status: $err"; fail=$LINENO; }
# A failure of this script's own checks records its line (run, in script_lib.sh, records 1).
[ "$fail" = 0 ] || { echo "FAIL: html_report: a check failed (the last at line $fail)"; exit 1; }
exit 0
