#!/usr/bin/env bash
# Prints the path of promtool (Prometheus's rule checker and rule unit-test runner), for test/production/alerts:
# PROMTOOL, then PATH, then ~/.cache/wathiq/bin, where it is put on first use. Debian's `prometheus` package carries
# it; installing that package would also start a Prometheus server (its postinst does), so the package is only
# downloaded with apt and promtool taken out of it.
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wathiq/bin"
if [[ -n "${PROMTOOL:-}" && -x "${PROMTOOL}" ]]; then echo "$PROMTOOL"; exit 0; fi
if command -v promtool >/dev/null 2>&1; then command -v promtool; exit 0; fi
if [[ -x "$cache/promtool" ]]; then echo "$cache/promtool"; exit 0; fi
mkdir -p "$cache"
exec 9>"$cache/.promtool.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [[ ! -x "$cache/promtool" ]]; then
  echo "taking promtool out of Debian's prometheus package into $cache ..." >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp" # apt downloads as its own user, which must write here
  chown _apt "$tmp" 2>/dev/null || true
  (cd "$tmp" && { apt-get download prometheus >&2 || { apt-get update -qq >&2 && apt-get download prometheus >&2; }; })
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root"
  mv "$tmp/root/usr/bin/promtool" "$cache/promtool.new"
  mv "$cache/promtool.new" "$cache/promtool"
fi
echo "$cache/promtool"
