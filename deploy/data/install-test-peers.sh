#!/usr/bin/env bash
# Installs the Python peers the tests run, pinned, each set in a venv of its own under
# deploy/cache/ (a Debian python3 refuses `pip install` outside a venv: PEP 668). A test that
# needs one fails, never skips, when it is missing. Idempotent: installed pins are kept as they are.
#
# deploy/cache/test-venv: `deploy/test.sh` puts its bin/ first on PATH, so the `python3` the
# tests call is this venv's:
#   warcio 1.7.4        must accept every pack we write (packer/tests/warcio_compat.rs, tests/*)
#   cdxj-indexer 1.5.0  `harvest export cdxj` must write what it writes (tests/cdxj.rs)
# deploy/cache/pywb-venv: pywb 2.10 needs warcio>=1.7.5, not the pin above, and pywb 2.9 pins
# werkzeug==2.2.3, redis 2.x and an old gevent, which break other packages of a shared interpreter:
#   pywb 2.10.0         replays a crawl with its requisites from our packs (tests/pywb.rs)
# The benchmarks' peers (scikit-learn, jieba, ...) are in deploy/cache/venv: setup-peers.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY="python3"
TEST_VENV="$ROOT/deploy/cache/test-venv"
PINS=("warcio==1.7.4" "cdxj-indexer==1.5.0")
PYWB_VENV="$ROOT/deploy/cache/pywb-venv"
PYWB_PIN="pywb==2.10.0"

# `has PYTHON NAME==VERSION`: that exact version is installed.
has() {
  "$1" -c 'import importlib.metadata as m, sys; n, v = sys.argv[1].split("=="); assert m.version(n) == v' \
    "$2" 2>/dev/null
}

# `venv_with DIR PIN...`: a venv at DIR with exactly these versions; made anew when one is
# missing (an upgrade in place could keep an old version's pinned dependencies).
venv_with() {
  local dir="$1" pin
  shift
  if [ -x "$dir/bin/python" ]; then
    for pin in "$@"; do
      has "$dir/bin/python" "$pin" || { rm -rf "$dir"; break; }
    done
    [ -d "$dir" ] && return 0
  fi
  echo "install-test-peers: $* into $dir" >&2
  rm -rf "$dir"
  "$PY" -m venv "$dir" || {
    echo "install-test-peers: error: $PY -m venv $dir failed (Debian: apt-get install python3-venv)" >&2
    exit 1
  }
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

venv_with "$TEST_VENV" "${PINS[@]}"
venv_with "$PYWB_VENV" "$PYWB_PIN"
