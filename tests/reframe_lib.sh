# Sourced by the ReFrame tests: reframe_venv puts ReFrame (PyPI reframe-hpc) into a virtual
# environment kept between runs and sets $reframe to its command. The venv is
# $HPCNN_REFRAME_VENV, else /var/cache/hpcnn/reframe-venv where /var/cache is writable, else
# .reframe-venv in the build folder (make distclean removes it). It is built in place under a
# lock (a venv cannot be moved) and counts as ready only once its .complete mark is written, so a
# broken install is redone, not used. No package index: exit 77 with the reason; other failures are failures.
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
      # Can pip reach its index at all? Asked through the venv's pip (its own index settings apply).
      local probe
      probe=$(mktemp -d)
      if ! timeout 120 "$venv/bin/pip" download --no-deps --no-cache-dir --disable-pip-version-check -q -d "$probe" \
           "$reframe_spec" >/dev/null 2>&1; then
        rm -rf "$probe" "$venv"
        echo "SKIP: pip cannot reach its package index from here: cannot install $reframe_spec"; exit 77
      fi
      rm -rf "$probe" "$venv"
      echo "FAIL: pip install $reframe_spec failed although pip can download it"; exit 1
    fi
    echo "$reframe_spec" > "$venv/.complete"
  fi
  exec 8>&-
}
