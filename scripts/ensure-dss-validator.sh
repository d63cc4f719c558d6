#!/usr/bin/env bash
# Prints the path of the EU DSS validator jar (tools/dss-validator), building it with Maven into
# ~/.cache/wathiq/dss-validator/<hash of its sources> when it is not there yet. The Maven repository is cached
# outside the clone too (~/.cache/wathiq/m2), so a fresh clone downloads nothing once a machine has built it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/tools/dss-validator"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wathiq"
hash="$(cd "$src" && find pom.xml src -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
out="$cache/dss-validator/$hash"
if [[ -f "$out/dss-validator.jar" ]]; then echo "$out/dss-validator.jar"; exit 0; fi
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "The DSS validator needs Java 17+ and Maven ($tool is missing)." >&2
    exit 1
  fi
done
mkdir -p "$cache/dss-validator" "$cache/m2"
# Several test runs starting at once on a fresh machine build it once: the others wait on the lock, then find it.
exec 9>"$cache/dss-validator/.build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [[ ! -f "$out/dss-validator.jar" ]]; then
  echo "building the DSS validator (Maven, eu.europa.ec.joinup.sd-dss) into $out ..." >&2
  # Built in a copy beside the final name and moved into place, so nobody runs a half-built jar.
  tmp="$(mktemp -d "$cache/dss-validator/.build.XXXXXX")"
  cp -r "$src/pom.xml" "$src/src" "$tmp/"
  (cd "$tmp" && mvn -q -B -Dmaven.repo.local="$cache/m2" package >&2)
  mkdir -p "$tmp/out"
  mv "$tmp/target/dss-validator.jar" "$tmp/target/lib" "$tmp/out/"
  mv "$tmp/out" "$out"
  rm -rf "$tmp"
fi
echo "$out/dss-validator.jar"
