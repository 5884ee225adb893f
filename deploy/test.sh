#!/usr/bin/env bash
# The project's test command (README.md): every crate's unit and integration
# tests plus the end-to-end tests of the binary (CLI, HTTP API, the web UI in
# headless Chromium), on the embedded default AND on
# a real MiniDFS + HBase + Thrift cluster that the tests start themselves
# (deploy/testcluster; needs Java 17 and Maven). Corpora the tests need are
# fetched (pinned, hash-checked) into deploy/cache/ first.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/data/fetch-corpora.sh
./indexer/tests/fetch-news.sh
./deploy/data/fetch-neardup.sh
./deploy/data/fetch-images.sh
# tests/pywb.rs: the demo's pages with the CSS, scripts and icons they embed.
./deploy/data/fetch-debian.sh libreoffice-help-zh-cn libreoffice-help-common >/dev/null
# The Python peers (pinned): warcio, cdxj-indexer, pywb (in deploy/cache/pywb-venv).
./deploy/data/install-test-peers.sh
# Build the cluster's class path once up front (the Rust guard would do it on
# first use; doing it here keeps the Maven download out of a test's timeout).
./deploy/testcluster/build.sh
cargo test --workspace --release --features cluster
