#!/usr/bin/env bash
# Every link between the documents leads to a file and section that exist, and every section a
# file names ("docs/X.md, "Section"") is there (tests/doc_links.py): a section lost or renamed in
# an edit fails here instead of leaving the manual's readers a dead link.
exec python3 "${HPCNN_SRCDIR:?}/tests/doc_links.py" "$HPCNN_SRCDIR"
