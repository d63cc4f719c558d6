#!/usr/bin/env bash
# Makes sure a Temporal server and its SQL schema tool of the version the CLI's dev server runs are built, with Go,
# into ~/.cache/wathiq/bin (about 2 minutes, once per machine), then prints two lines: that folder, and the folder
# of the PostgreSQL schema files, which come with the server module in Go's module cache. The tests'
# production-shaped Temporal (test/helpers/production-temporal.ts) and `bench:lifecycle --temporal production` run
# them.
set -euo pipefail
version="1.29.1"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wathiq/bin"
server="$cache/temporal-server-$version"
sqltool="$cache/temporal-sql-tool-$version"
schema="$(go env GOMODCACHE 2>/dev/null || true)/go.temporal.io/server@v$version/schema/postgresql/v12"
if [[ -x "$server" && -x "$sqltool" && -d "$schema" ]]; then printf '%s\n%s\n' "$cache" "$schema"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then
  echo "The Temporal server $version is missing and Go is not installed to build it." >&2
  exit 1
fi
mkdir -p "$cache"
# Several runs starting at once on a fresh machine build it once: the others wait on the lock, then find it.
exec 9>"$cache/.temporal-server-build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
build() { # name module
  [[ -x "$cache/$1" ]] && return 0
  echo "building $1 (go install $2@v$version) into $cache ..." >&2
  # Built beside the final name and moved into place, so nobody runs a half-written binary.
  local tmp
  tmp="$(mktemp -d "$cache/.build.XXXXXX")"
  GOBIN="$tmp" go install "$2@v$version" >&2
  mv "$tmp/$(basename "$2")" "$cache/$1"
  rmdir "$tmp"
}
build "temporal-server-$version" go.temporal.io/server/cmd/server
build "temporal-sql-tool-$version" go.temporal.io/server/cmd/tools/sql
# `go install` of a module@version downloads it whole, schema folder included.
schema="$(go env GOMODCACHE)/go.temporal.io/server@v$version/schema/postgresql/v12"
[[ -d "$schema" ]] || { echo "no PostgreSQL schema at $schema" >&2; exit 1; }
printf '%s\n%s\n' "$cache" "$schema"
