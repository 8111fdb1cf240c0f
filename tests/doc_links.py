#!/usr/bin/env python3
"""Every link between the project's documents leads somewhere, and every section a file names is there.

Checks, over the Markdown files git tracks (or all under SRC_DIR when it is not a git checkout):
  - a link [text](target) to a local file: the file or folder exists;
  - a link with an anchor (#section, FILE.md#section): the target document has a heading whose
    anchor (GitHub's rule: lower case, punctuation dropped, spaces to hyphens, -1, -2... for
    repeats) is that one;
  - a reference by name in any tracked text file, `docs/FILE.md, "Section"` or
    `docs/FILE.md's "Section"` (the name may run over a comment's lines): FILE.md has a heading,
    or a paragraph or list item led by a bold title (`**Section.**`), of that name (case and backticks aside).
A section moved, renamed or lost then fails here instead of leaving readers a dead link. Prints one
line per broken link or reference with its file and line, exits 1 if there is any.

    tests/doc_links.py SRC_DIR
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BOLD_LEAD = re.compile(r"^\s*(?:[-*]\s+|\d+\.\s+)?\*\*([^*]+?)\.?\*\*")  # a paragraph's or item's title
NAMED = re.compile(r"((?:docs/)?[A-Z][A-Z_]*\.md)(?:,|'s) \"([^\"]+)\"")
FENCE = re.compile(r"^\s*(```|~~~)")


def tracked_files(src):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files"], check=True, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout.split("\n")
        return [f for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for root, dirs, files in os.walk(src):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [os.path.relpath(os.path.join(root, f), src) for f in files]
        return found


def markdown_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, line


def slug(title):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link in a heading: its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def plain(name):
    """A section's name as compared: one line (a comment's continuation marks dropped), no backticks."""
    name = re.sub(r"\s*\n\s*(?:#+|//|\*|--)?\s*", " ", name)
    return name.replace("`", "").strip().lower()


def headings(path):
    """The document's section names (headings and bold paragraph titles) and its headings' anchors."""
    titles, anchors, seen = set(), set(), {}
    for _, line in markdown_lines(path):
        lead = BOLD_LEAD.match(line)
        if lead:
            titles.add(plain(lead.group(1)))
        m = HEADING.match(line)
        if not m:
            continue
        title = m.group(2)
        titles.add(plain(title))
        base = slug(title)
        n = seen.get(base, 0)
        anchors.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return titles, anchors


def main():
    src = sys.argv[1]
    files = tracked_files(src)
    cache = {}

    def sections(rel):
        if rel not in cache:
            cache[rel] = headings(os.path.join(src, rel))
        return cache[rel]

    broken = []
    for rel in (f for f in files if f.endswith(".md")):
        here = os.path.dirname(rel)
        for number, line in markdown_lines(os.path.join(src, rel)):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # a URL or mailto: not this test's to reach
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(here, path)) if path else rel
                if not os.path.exists(os.path.join(src, dest)):
                    broken.append(f"{rel}:{number}: link to {target}: no {dest}")
                elif anchor and dest.endswith(".md") and anchor not in sections(dest)[1]:
                    broken.append(f"{rel}:{number}: link to {target}: {dest} has no section with anchor #{anchor}")
    for rel in files:
        full = os.path.join(src, rel)
        if not os.path.isfile(full) or os.path.getsize(full) > 2_000_000:
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        for m in NAMED.finditer(text):
            doc = m.group(1) if m.group(1).startswith("docs/") or m.group(1) == "README.md" else "docs/" + m.group(1)
            if not os.path.exists(os.path.join(src, doc)):
                continue  # another project's document (an ISSUE text, a paper's)
            if plain(m.group(2)) not in sections(doc)[0]:
                number = text.count("\n", 0, m.start()) + 1
                broken.append(f"{rel}:{number}: names section \"{plain(m.group(2))}\" of {doc}, which has no such heading")
    for line in broken:
        print(line)
    print(f"doc_links: {len(broken)} broken link(s) or section name(s)" if broken else "doc_links: every link and section name resolves")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
