#!/usr/bin/env bash
# Installs everything the project needs on Debian 12, idempotently: nothing
# is downloaded when it is already present.
set -euo pipefail

DEBIAN_PACKAGES=(build-essential cmake ninja-build pkg-config liburing-dev
  libgtest-dev googletest fio graphviz python3 rsync clang-format)
PYTHON_MODULES=(pytest matplotlib)

missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

for module in "${PYTHON_MODULES[@]}"; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "setup: installing Python module $module" >&2
    python3 -m pip install -q "$module" 2>/dev/null \
      || python3 -m pip install -q --break-system-packages "$module"
  fi
done
