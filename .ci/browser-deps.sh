#!/usr/bin/env bash
# Installs what the browser test (tests/browser.rs) needs: Debian's headless
# Chromium at /usr/bin/chromium, plus CJK fonts so Chinese text renders in the
# screenshot. Idempotent: does nothing when both are present.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
need=()
[ -x "$CHROMIUM" ] || need+=(chromium)
# Noto CJK: the UI's font stack names "Noto Sans CJK SC" first.
dpkg -s fonts-noto-cjk >/dev/null 2>&1 || need+=(fonts-noto-cjk)

if [ ${#need[@]} -eq 0 ]; then
  echo "browser-deps: chromium and CJK fonts already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
"$CHROMIUM" --version
