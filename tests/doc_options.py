#!/usr/bin/env python3
"""Every option a document shows with an executable exists in that executable's --help.

Reads README.md and docs/*.md, joins lines continued with a backslash, splits each line into
commands (at backticks, pipes, ';', '&&' and '||'), and for every command that names one of
the build's executables (`hpcnn-train`, ./hpcnn-infer, $HPCNN_BIN/hpcnn-scale, ...) collects the
long options after the executable's name. An option is known when the executable's --help lists
it (also the help of a mode with options of its own: hpcnn-train and hpcnn-scale --data, the
real-data suites; hpcnn-allreduce --links, the link test). Prints one
line per unknown option with its document and line, exits 1 if there is any.

    tests/doc_options.py BUILD_DIR SRC_DIR
"""
import os
import re
import subprocess
import sys

EXE = re.compile(r"(?:^|[\s/`(])(hpcnn-(?:train|infer|scale|blas|allreduce|simulate|summary))(?=$|[\s`),.;:])")
OPTION = re.compile(r"(?:^|\s)(--[a-z][a-z0-9-]*)")
SPLIT = re.compile(r"`|\|\||&&|\||;")


MODES = {"hpcnn-train": ["--data", "fashion-mnist"], "hpcnn-scale": ["--data", "fashion-mnist"],
         "hpcnn-allreduce": ["--links"]}


def help_options(build, exe):
    texts = []
    for extra in ([], MODES[exe]) if exe in MODES else ([],):
        proc = subprocess.run([os.path.join(build, exe), *extra, "--help"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        texts.append(proc.stdout)
    return set(re.findall(r"^\s+(--[a-z][a-z0-9-]*)", "\n".join(texts), re.M))


def logical_lines(path):
    """(line number, text) with backslash continuations joined onto their first line."""
    out, start, buf = [], None, ""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if start is None:
                start = n
            if line.endswith("\\"):
                buf += line[:-1] + " "
                continue
            out.append((start, buf + line))
            start, buf = None, ""
    if buf:
        out.append((start, buf))
    return out


def shown_options(text):
    """(executable, option) pairs of the commands in one line."""
    for part in SPLIT.split(text):
        m = EXE.search(part)
        if not m:
            continue
        rest = part[m.end():]
        # A second executable in the same part (prose naming two): options go to the last one.
        for m2 in EXE.finditer(rest):
            m, rest = m2, rest[m2.end():]
        for opt in OPTION.findall(rest):
            yield m.group(1), opt


def main(argv):
    build, src = argv[1], argv[2]
    docs = [os.path.join(src, "README.md")] + sorted(
        os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    known, bad, checked = {}, 0, 0
    for doc in docs:
        for n, text in logical_lines(doc):
            for exe, opt in shown_options(text):
                if exe not in known:
                    known[exe] = help_options(build, exe)
                checked += 1
                if opt not in known[exe]:
                    print(f"FAIL: {os.path.relpath(doc, src)}:{n}: {exe} {opt}: not in {exe} --help")
                    bad += 1
    print(f"{checked} options shown with an executable in {len(docs)} documents, {bad} unknown")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
