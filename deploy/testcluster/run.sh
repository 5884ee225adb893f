#!/usr/bin/env bash
# Runs the test cluster by hand: ./run.sh [workdir [options]] (options: --yarn, --datanodes N, --replication R).
# Prints the READY line; type `restart-thrift` or `stop`.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -s target/classpath.txt ]; then ./build.sh; fi
work="${1:-$(mktemp -d)}"
shift || true
# shellcheck disable=SC2046
exec java $(grep -v '^#' jvm.flags) -cp "target/classes:$(cat target/classpath.txt)" harvest.testcluster.Main "$work" "$@"
