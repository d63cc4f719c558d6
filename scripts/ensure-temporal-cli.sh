#!/usr/bin/env bash
# Prints the path of a Temporal CLI, building it with Go into ~/.cache/wathiq/bin when none is found.
# The CLI's download site is not reachable from every machine; `go install` through the Go module proxy is.
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wathiq/bin"
if [[ -n "${TEMPORAL_CLI_PATH:-}" && -x "${TEMPORAL_CLI_PATH}" ]]; then echo "$TEMPORAL_CLI_PATH"; exit 0; fi
if command -v temporal >/dev/null 2>&1; then command -v temporal; exit 0; fi
if [[ -x "$cache/temporal" ]]; then echo "$cache/temporal"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then
  echo "The Temporal CLI is missing and Go is not installed to build it; set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS." >&2
  exit 1
fi
mkdir -p "$cache"
# Several test runs starting at once on a fresh machine build it once: the others wait on the lock, then find it.
exec 9>"$cache/.temporal-build.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [[ ! -x "$cache/temporal" ]]; then
  echo "building the Temporal CLI (go install github.com/temporalio/cli/cmd/temporal@v1.5.1) into $cache ..." >&2
  # Built beside the final name and moved into place, so nobody runs a half-written binary.
  tmp="$(mktemp -d "$cache/.build.XXXXXX")"
  GOBIN="$tmp" go install github.com/temporalio/cli/cmd/temporal@v1.5.1 >&2
  mv "$tmp/temporal" "$cache/temporal"
  rmdir "$tmp"
fi
echo "$cache/temporal"
