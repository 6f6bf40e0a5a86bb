# Shared steps for fetching a third-party program as Debian 12's source
# package and unpacking its upstream release tarball, unmodified.  Sourced by
# scripts/fetch_coreutils.sh and scripts/fetch_leveldb.sh; not run on its own.
#
#   source scripts/debian_source.sh
#   debian_source_fetch PACKAGE VERSION DEB_DIR
#   debian_source_unpack_upstream PACKAGE VERSION DEB_DIR SOURCE_DIR CHECKSUMS
#   debian_source_check_pristine SOURCE_DIR CHECKSUMS
#
# Each function is idempotent: when its result is already present it returns
# at once.  The apt steps need root (only when the package is not yet there).
# Errors are reported on stderr and end the calling script (set -e) with a
# nonzero status.

DEBIAN_SOURCE_LIST=/etc/apt/sources.list.d/foreactor-deb-src.sources

debian_source_say() { printf 'debian_source: %s\n' "$*" >&2; }

# Adds a deb-src entry for bookworm main (its own deb822 file) unless apt
# already knows a deb-src line, then refreshes the package lists.
debian_source_ensure_deb_src() {
  if grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ \
     || grep -qs '^deb-src ' /etc/apt/sources.list; then
    return 0
  fi
  debian_source_say "adding $DEBIAN_SOURCE_LIST"
  cat > "$DEBIAN_SOURCE_LIST" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get update -qq
}

# debian_source_fetch PACKAGE VERSION DEB_DIR
# `apt-get source PACKAGE` into DEB_DIR (the Debian tree with its patches and
# the upstream PACKAGE_VERSION.orig.tar.* beside it).  Fails when the source
# package's upstream version is not VERSION.
debian_source_fetch() {
  local package="$1" version="$2" deb_dir="$3"
  if ls "$deb_dir/${package}_${version}".orig.tar.* >/dev/null 2>&1; then
    return 0
  fi
  debian_source_ensure_deb_src
  command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev >/dev/null
  mkdir -p "$deb_dir"
  debian_source_say "apt-get source $package"
  (cd "$deb_dir" && apt-get source -qq "$package" >/dev/null)
  local dsc
  dsc=$(ls "$deb_dir/${package}"_*.dsc)
  if ! grep -q "^Version: ${version}-" "$dsc"; then
    debian_source_say "unexpected $package version in $dsc (want $version):"
    grep '^Version:' "$dsc" >&2
    return 1
  fi
}

# debian_source_unpack_upstream PACKAGE VERSION DEB_DIR SOURCE_DIR CHECKSUMS
# Unpacks DEB_DIR/PACKAGE_VERSION.orig.tar.* (no Debian patches) so that it
# becomes SOURCE_DIR, and writes the sha256 of every file it holds to
# CHECKSUMS, right after unpacking.  The tarball's top folder may have any
# name; it is renamed to SOURCE_DIR.
debian_source_unpack_upstream() {
  local package="$1" version="$2" deb_dir="$3" source_dir="$4" checksums="$5"
  if [ -f "$checksums" ] && [ -d "$source_dir" ]; then
    return 0
  fi
  local tarball staging top
  tarball=$(ls "$deb_dir/${package}_${version}".orig.tar.*)
  staging="$source_dir.unpacking"
  rm -rf "$source_dir" "$staging"
  mkdir -p "$staging"
  debian_source_say "unpacking $(basename "$tarball")"
  tar -C "$staging" -xf "$tarball"
  top=$(ls "$staging")
  if [ "$(printf '%s\n' "$top" | wc -l)" != 1 ] || [ ! -d "$staging/$top" ]; then
    debian_source_say "$(basename "$tarball") does not hold exactly one top folder"
    return 1
  fi
  mv "$staging/$top" "$source_dir"
  rmdir "$staging"
  (cd "$source_dir" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
    > "$checksums.tmp"
  mv "$checksums.tmp" "$checksums"
}

# debian_source_check_pristine SOURCE_DIR CHECKSUMS
# Fails (listing the files) when a file of the release tarball changed or
# disappeared.  Files added beside them (build products) are not checked.
debian_source_check_pristine() {
  local source_dir="$1" checksums="$2"
  (cd "$source_dir" && sha256sum --quiet --check "$checksums")
}
