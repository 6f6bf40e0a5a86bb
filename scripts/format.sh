#!/usr/bin/env bash
# Formats foreactor's C and C++ files with clang-format and the checked-in
# .clang-format.
#
#   scripts/format.sh            rewrite every file that differs from the style
#   scripts/format.sh --check    rewrite nothing; list the files that differ and
#                                exit 1 when there is any
#   scripts/format.sh [--check] FILE...   only these files
#
# The files are the repository's own (tracked, or new and not ignored):
# third_party/ and build directories are never touched.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
case "${1:-}" in
  -*) echo "usage: scripts/format.sh [--check] [FILE...]" >&2; exit 2 ;;
esac

if ! command -v clang-format >/dev/null; then
  echo "scripts/format.sh: clang-format is not installed (scripts/setup.sh installs it)" >&2
  exit 2
fi

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
    '*.c' '*.cc' '*.h' '*.hpp' | sort -u)
fi

if [ "$check" -eq 0 ]; then
  [ ${#files[@]} -eq 0 ] || clang-format -i --style=file "${files[@]}"
  exit 0
fi

differing=0
for file in "${files[@]}"; do
  [ -f "$file" ] || continue  # listed by git but deleted in the work tree
  if ! clang-format --style=file "$file" | cmp -s - "$file"; then
    echo "$file"
    differing=1
  fi
done
if [ "$differing" -ne 0 ]; then
  echo "scripts/format.sh --check: the files above differ from .clang-format;" \
       "scripts/format.sh rewrites them" >&2
fi
exit "$differing"
