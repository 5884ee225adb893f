#!/usr/bin/env bash
# Builds the test cluster's JVM side: compiles Main and HBaseThrift (HBase 2.6.1 mini cluster + HBase's Thrift server)
# and writes the runtime class path to target/classpath.txt. Idempotent; downloads go to ~/.m2. Needs Java 17 and Maven.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
test -s target/classpath.txt
touch target/classpath.txt
