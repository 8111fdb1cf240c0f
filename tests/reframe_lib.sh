# Sourced by the ReFrame tests: reframe_venv puts ReFrame (PyPI reframe-hpc) into a virtual
# environment kept between runs and sets $reframe to its command. The venv is
# $HPCNN_REFRAME_VENV, else /var/cache/hpcnn/reframe-venv where /var/cache is writable, else
# .reframe-venv in the build folder (make distclean removes it). It is built in place under a
# lock (a venv cannot be moved) and counts as ready only once its .complete mark is written, so a
# broken install is redone, not used. No PyPI: exit 77 with the reason; other failures are failures.
reframe_spec='reframe-hpc>=4.6,<5'
reframe_venv() {
  local venv=${HPCNN_REFRAME_VENV:-}
  if [ -z "$venv" ]; then
    if mkdir -p /var/cache/hpcnn 2>/dev/null && [ -w /var/cache/hpcnn ]; then venv=/var/cache/hpcnn/reframe-venv
    else venv=$HPCNN_BUILDDIR/.reframe-venv; fi
  fi
  reframe=$venv/bin/reframe
  [ -e "$venv/.complete" ] && [ "$(cat "$venv/.complete")" = "$reframe_spec" ] && return 0
  mkdir -p "$(dirname "$venv")" || { echo "FAIL: cannot create $(dirname "$venv")"; exit 1; }
  exec 8> "$venv.lock"
  flock 8
  if ! { [ -e "$venv/.complete" ] && [ "$(cat "$venv/.complete")" = "$reframe_spec" ]; }; then
    rm -rf "$venv"
    echo "+ installing $reframe_spec into $venv (once; later runs reuse it)"
    python3 -m venv "$venv" || { echo "FAIL: python3 -m venv $venv failed (python3-venv installed?)"; rm -rf "$venv"; exit 1; }
    if ! timeout 300 "$venv/bin/pip" install --disable-pip-version-check -q "$reframe_spec"; then
      rm -rf "$venv"
      if ! timeout 30 python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/reframe-hpc/", timeout=20)' 2>/dev/null &&
         [ -z "${PIP_INDEX_URL:-}" ]; then
        echo "SKIP: PyPI (https://pypi.org) is unreachable from here: cannot install $reframe_spec"; exit 77
      fi
      echo "FAIL: pip install $reframe_spec failed although PyPI answers"; exit 1
    fi
    echo "$reframe_spec" > "$venv/.complete"
  fi
  exec 8>&-
}
