#!/usr/bin/env bash
# The project's test command (README.md): every crate's unit and integration
# tests plus the end-to-end tests of the binary. Corpora the tests need are
# fetched (pinned, hash-checked) into deploy/cache/ first.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x deploy/data/fetch-corpora.sh ]; then ./deploy/data/fetch-corpora.sh; fi
cargo test --workspace --release
