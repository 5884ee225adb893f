#!/usr/bin/env bash
# Issue 15 item 2: `harvest bench cluster-ingest` on a fresh test cluster (HBase mini cluster
# on MiniDFS with HBase's Thrift servers, deploy/testcluster), stopped at the end.
#   deploy/bench/cluster-ingest.sh [HARVEST_BINARY] [-- BENCH ARGS...]
# Default binary: target/release/harvest, with target/release/harvest-bench beside it
# (cargo build --release -p harvest -p harvest-bench). Default bench args: the
# bundled demo site into /tmp/harvest-bench-cluster.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/target/release/harvest"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then bin="$1"; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi
[ -x "$bin" ] || { echo "no harvest binary at $bin (cargo build --release -p harvest -p harvest-bench)" >&2; exit 2; }
args=("$@")
[ ${#args[@]} -gt 0 ] || [ -n "${HARVEST_BENCH_KIND:-}" ] || args=(--dir /tmp/harvest-bench-cluster)

tc="$root/deploy/testcluster"
[ -s "$tc/target/classpath.txt" ] || "$tc/build.sh"
work="$(mktemp -d)"
fifo="$work/stdin"
mkfifo "$fifo"
# The JVM stops when its stdin closes: hold the fifo open until the end.
exec 3<>"$fifo"
(cd "$tc" && exec java $(grep -v '^#' jvm.flags) -cp "target/classes:$(cat target/classpath.txt)" \
    harvest.testcluster.Main "$work/cluster" <"$fifo" >"$work/out" 2>"$work/jvm.log") &
jvm=$!
log="${TMPDIR:-/tmp}/harvest-cluster-ingest-jvm.log"
trap 'echo stop >&3; sleep 12; kill $jvm 2>/dev/null || true; cp "$work/jvm.log" "$log" 2>/dev/null; rm -rf "$work" 2>/dev/null || true; echo "test cluster log: $log" >&2' EXIT
for _ in $(seq 1 180); do
  grep -q "READY" "$work/out" 2>/dev/null && break
  kill -0 $jvm 2>/dev/null || { tail -40 "$work/jvm.log" >&2; exit 1; }
  sleep 1
done
ready="$(grep READY "$work/out")" || { echo "the test cluster did not start in 180 s" >&2; tail -40 "$work/jvm.log" >&2; exit 1; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$ready"; }
echo "test cluster: $ready" >&2
# HARVEST_BENCH_KIND: another benchmark that takes the cluster (text-cluster.sh sets it).
kind="${HARVEST_BENCH_KIND:-cluster-ingest}"
extra=()
[ "$kind" = cluster-ingest ] && extra=(--cluster-pid "$jvm")
"$bin" bench "$kind" --hdfs "$(field hdfs)" --thrift "$(field thrift)" --thrift2 "$(field thrift2)" "${extra[@]}" "${args[@]}"
