#!/usr/bin/env bash
# Every option README and docs/*.md show with an executable is in that executable's --help
# (tests/doc_options.py): a renamed or removed option cannot stay in the manual.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
python3 "$HPCNN_SRCDIR/tests/doc_options.py" . "$HPCNN_SRCDIR"
