#!/usr/bin/env bash
# Installs the Python peers the tests run, pinned. A test that needs one fails,
# never skips, when it is missing. Idempotent: installed pins are kept as they are.
#
# Into the Python the tests call (`python3`, or $HARVEST_PYTHON):
#   warcio 1.7.4        must accept every pack we write (packer/tests/warcio_compat.rs, tests/*)
#   cdxj-indexer 1.5.0  `harvest export cdxj` must write what it writes (tests/cdxj.rs)
# Into its own venv, deploy/cache/pywb-venv: pywb 2.10 needs warcio>=1.7.5, not the pin
# above, and pywb 2.9 pins werkzeug==2.2.3, redis 2.x and an old gevent, which break
# other packages of a shared interpreter:
#   pywb 2.10.0         replays a crawl with its requisites from our packs (tests/pywb.rs)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY="${HARVEST_PYTHON:-python3}"
PYWB_VENV="$ROOT/deploy/cache/pywb-venv"
PINS=("warcio==1.7.4" "cdxj-indexer==1.5.0")
PYWB_PIN="pywb==2.10.0"

# `has PYTHON NAME==VERSION`: that exact version is installed.
has() {
  "$1" -c 'import importlib.metadata as m, sys; n, v = sys.argv[1].split("=="); assert m.version(n) == v' \
    "$2" 2>/dev/null
}

missing=()
for pin in "${PINS[@]}"; do
  has "$PY" "$pin" || missing+=("$pin")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-test-peers: $PY -m pip install ${missing[*]}" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi

if [ ! -x "$PYWB_VENV/bin/python" ] || ! has "$PYWB_VENV/bin/python" "$PYWB_PIN"; then
  echo "install-test-peers: $PYWB_PIN into $PYWB_VENV" >&2
  rm -rf "$PYWB_VENV"
  "$PY" -m venv "$PYWB_VENV"
  "$PYWB_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PYWB_PIN"
fi
