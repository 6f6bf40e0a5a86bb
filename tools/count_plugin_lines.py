#!/usr/bin/env python3
"""Counts the lines of code of every case study's foreactor plugin.

A line counts when it holds anything besides white space and comments
(// and /* */ comments of C and C++; comment markers inside string and
character literals are not comments).  Each case study's plugin is the set
of files below, and the published system's count for the same plugin is
shown beside it.

  tools/count_plugin_lines.py                 table of every case study
  tools/count_plugin_lines.py --markdown      the same as a Markdown table
  tools/count_plugin_lines.py FILE...         counts of the given files
  tools/count_plugin_lines.py --check-hosts   also check that the host programs' source is unchanged
"""

import argparse
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (case study, files relative to ROOT (globs), published system's lines or None)
CASE_STUDIES = [
    ("du (directory walk)", ["apps/coreutils/plugins/du_walk_*"], 199),
    ("cp (copy loop)", ["apps/coreutils/plugins/cp_copy_*"], 175),
    ("B+-tree scan", ["apps/bptree/plugins/leaf_planner.*", "apps/bptree/plugins/scan_plugin.cc"],
     103),
    ("B+-tree load", ["apps/bptree/plugins/load_plugin.cc"], 112),
    ("LevelDB Get", ["apps/leveldb/plugin/*"], 401),
    ("example random_read", ["examples/random_read/random_read_plugin.cc"], None),
]

# Host sources whose code (comments aside) must not refer to foreactor: the
# plugin builds compile them as they are and attach through the link line.
IN_TREE_HOSTS = ["apps/bptree/src/*", "examples/random_read/random_read.c",
                 "examples/random_read/read_blocks.[ch]"]
# Release trees checked byte for byte against their checksums by their build scripts.
RELEASE_HOSTS = [("coreutils 9.1", "third_party/coreutils-9.1", "apps/coreutils/build.sh"),
                 ("LevelDB 1.23", "third_party/leveldb-1.23", "apps/leveldb/build.sh")]


def strip_comments(text):
    """The lines of `text` (C or C++) with comments removed; string and
    character literals are kept whole."""
    stripped = []
    state = "code"  # code, block (comment), string, char
    for line in text.splitlines():
        kept = []
        i = 0
        while i < len(line):
            c = line[i]
            pair = line[i:i + 2]
            if state == "block":
                if pair == "*/":
                    state = "code"
                    i += 2
                    continue
            elif state in ("string", "char"):
                kept.append(c)
                if c == "\\":
                    kept.append(line[i + 1:i + 2])
                    i += 2
                    continue
                if c == ('"' if state == "string" else "'"):
                    state = "code"
            else:
                if pair == "//":
                    break
                if pair == "/*":
                    state = "block"
                    kept.append(" ")
                    i += 2
                    continue
                kept.append(c)
                if c == '"':
                    state = "string"
                elif c == "'":
                    state = "char"
            i += 1
        if state in ("string", "char"):
            state = "code"  # an unterminated literal ends with its line
        stripped.append("".join(kept))
    return stripped


def code_lines(text):
    """The number of lines of `text` (C or C++) that hold code."""
    return sum(1 for line in strip_comments(text) if line.strip())


def count_file(path):
    with open(path, encoding="utf-8", errors="replace") as source:
        return code_lines(source.read())


SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp")


def case_study_files(patterns, root):
    """The C and C++ files matching `patterns` (build files are not counted)."""
    files = []
    for pattern in patterns:
        files += sorted(path for path in glob.glob(os.path.join(root, pattern))
                        if os.path.isfile(path) and path.endswith(SOURCE_SUFFIXES))
    return files


def table(root):
    """[(case study, files, our lines or None when absent, published lines)]."""
    rows = []
    for name, patterns, published in CASE_STUDIES:
        files = case_study_files(patterns, root)
        lines = sum(count_file(path) for path in files) if files else None
        rows.append((name, [os.path.relpath(path, root) for path in files], lines, published))
    return rows


def render(rows, markdown):
    out = []
    if markdown:
        out.append("| Plugin | Files | Lines | Published system |")
        out.append("|---|---|---:|---:|")
    for name, files, lines, published in rows:
        shown = "-" if lines is None else str(lines)
        theirs = "-" if published is None else str(published)
        listed = ", ".join("`%s`" % f if markdown else f for f in files) or "(not present)"
        if markdown:
            out.append("| %s | %s | %s | %s |" % (name, listed, shown, theirs))
        else:
            out.append("%-22s %6s %10s   %s" % (name, shown, theirs, listed))
    if not markdown:
        out.insert(0, "%-22s %6s %10s   %s" % ("plugin", "lines", "published", "files"))
    return "\n".join(out)


def check_hosts(root):
    """Problems found in the host programs' source (empty when unchanged)."""
    problems = []
    for pattern in IN_TREE_HOSTS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            with open(path, encoding="utf-8", errors="replace") as source:
                code = "\n".join(strip_comments(source.read()))
                if "foreactor" in code.lower():
                    problems.append("%s refers to foreactor in its code" % os.path.relpath(path, root))
    for name, tree, script in RELEASE_HOSTS:
        if not os.path.isdir(os.path.join(root, tree)):
            print("%s: %s not unpacked here; not checked" % (name, tree))
            continue
        result = subprocess.run(["bash", os.path.join(root, script), "--check"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            problems.append("%s: %s --check failed: %s" % (name, script, result.stderr.strip()))
        else:
            print("%s: byte-identical to the release" % name)
    return problems


def main(arguments):
    parser = argparse.ArgumentParser(
        description="Count the code lines (not blank, not comment) of the case studies' "
                    "foreactor plugins, beside the published system's counts.")
    parser.add_argument("files", nargs="*", metavar="FILE", help="count these files instead")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--root", default=ROOT, help="the repository (default: this one)")
    parser.add_argument("--check-hosts", action="store_true",
                        help="also check that the host programs' source is unchanged")
    options = parser.parse_args(arguments)
    if options.files:
        for path in options.files:
            if not os.path.isfile(path):
                parser.error("%s: no such file" % path)
            print("%6d  %s" % (count_file(path), path))
        return 0
    print(render(table(options.root), options.markdown))
    if options.check_hosts:
        problems = check_hosts(options.root)
        for problem in problems:
            print("host source changed: " + problem)
        if problems:
            return 1
        print("host programs' source: unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
