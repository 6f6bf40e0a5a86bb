#!/usr/bin/env bash
# Redraws the graph pictures of docs/PLUGIN_GUIDE.md (docs/images/random_read_*.png,
# bptree_scan_*.png) with the commands the guide shows: the draft that
# `foreactor trace` writes from a run of the plain program, and the plugin's
# hand-written graph as `foreactor graph` draws it.  Needs ./run build and
# Graphviz (scripts/setup.sh installs it).  The results plots of
# docs/images/results-*.png are drawn by `./run bench report`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FOREACTOR_BUILD_DIR:-$ROOT/build}"
IMAGES="$ROOT/docs/images"
TOOL="$ROOT/tools/foreactor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The example: 20 reads of an 8 KiB block of a small file.
head -c $((64 * 8192)) /dev/urandom > "$work/data.bin"
"$TOOL" trace --function read_blocks --output "$work/random_read_draft.cc" -- \
  "$BUILD_DIR/examples/random_read/random_read" "$work/data.bin" 20 7 >/dev/null
dot -Tpng "$work/random_read_draft.dot" -o "$IMAGES/random_read_draft.png"
"$TOOL" graph --format png --output "$work/random_read_graphs" -- \
  "$BUILD_DIR/examples/random_read/random_read_foreactor" "$work/data.bin" 20 7 >/dev/null
cp "$work/random_read_graphs/random_read.png" "$IMAGES/random_read_graph.png"

# The B+-tree scan, on an insert-built tree of 3,000 keys.
"$BUILD_DIR/apps/bptree/bptree" insert "$work/tree.db" --count 3000 --degree 16 >/dev/null
"$TOOL" trace --function bptree_read_leaves --output "$work/bptree_scan_draft.cc" -- \
  "$BUILD_DIR/apps/bptree/bptree" scan "$work/tree.db" 0 0x7fffffffffffffff >/dev/null
dot -Tpng "$work/bptree_scan_draft.dot" -o "$IMAGES/bptree_scan_draft.png"
"$TOOL" graph --format png --output "$work/bptree_graphs" -- \
  "$BUILD_DIR/apps/bptree/plugins/bptree_foreactor" scan "$work/tree.db" 0 10 >/dev/null
cp "$work/bptree_graphs/bptree_scan.png" "$IMAGES/bptree_scan_graph.png"

echo "drew $IMAGES/{random_read,bptree_scan}_{draft,graph}.png"
