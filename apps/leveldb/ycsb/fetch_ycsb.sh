#!/usr/bin/env bash
# Fetches YCSB 0.17.0's core jar and the jars it needs at run time from
# Maven Central into third_party/ycsb/, checking each against the SHA-1
# Maven Central publishes beside it, and installs a Java runtime.
#
#   apps/leveldb/ycsb/fetch_ycsb.sh
#
# Idempotent: jars already present and verified are not downloaded again.
# Dependencies: those of site.ycsb:core:0.17.0's pom (compile scope), with
# jackson.api.version = 1.9.4 from that pom.  Exits nonzero when Maven
# Central cannot be reached or a checksum does not match.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
JAR_DIR="$ROOT/third_party/ycsb"
MAVEN=https://repo1.maven.org/maven2
ARTIFACTS=(
  site/ycsb/core/0.17.0/core-0.17.0.jar
  org/apache/htrace/htrace-core4/4.1.0-incubating/htrace-core4-4.1.0-incubating.jar
  org/codehaus/jackson/jackson-mapper-asl/1.9.4/jackson-mapper-asl-1.9.4.jar
  org/codehaus/jackson/jackson-core-asl/1.9.4/jackson-core-asl-1.9.4.jar
  org/hdrhistogram/HdrHistogram/2.1.4/HdrHistogram-2.1.4.jar
)

say() { printf 'fetch_ycsb: %s\n' "$*" >&2; }

if ! command -v java >/dev/null; then
  say "installing default-jre-headless"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null
fi

mkdir -p "$JAR_DIR"
for artifact in "${ARTIFACTS[@]}"; do
  jar="$JAR_DIR/$(basename "$artifact")"
  [ -f "$jar" ] && [ -f "$jar.sha1" ] && continue
  say "downloading $(basename "$artifact")"
  curl -fsS --retry 3 -o "$jar.tmp" "$MAVEN/$artifact"
  expected=$(curl -fsS --retry 3 "$MAVEN/$artifact.sha1" | cut -c1-40)
  actual=$(sha1sum "$jar.tmp" | cut -c1-40)
  if [ "$expected" != "$actual" ]; then
    rm -f "$jar.tmp"
    say "SHA-1 mismatch for $artifact (Maven Central: $expected, got: $actual)"
    exit 1
  fi
  mv "$jar.tmp" "$jar"
  echo "$expected" > "$jar.sha1"
done
say "ready: $JAR_DIR"
