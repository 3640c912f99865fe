#!/usr/bin/env bash
# roll.sh [ROLLS]: restarts every node of a 3-node cluster (real kgateway
# processes over an embedded etcd and versitygw, as test/cluster starts
# them) in turn, ROLLS times (default 1), under idempotent producers, a
# consumer group and a transactional pipeline, and checks that clients
# saw only retriable errors, that nothing acknowledged was lost, and that
# the roll took at most N x (start time + 2 s). It prints each step's
# times and the produce p50/p99 before and during the roll.
# KGW_CLUSTER_LOGS=dir keeps the nodes' logs.
set -euo pipefail
cd "$(dirname "$0")/.."
rolls=${1:-1}
KGW_ROLL_STRICT=1 KGW_ROLLS=$rolls go test -count=1 -timeout $((10 + 3 * rolls))m -run '^TestClusterRollingRestart$' -v ./test/cluster/ |
	grep -E 'roll_test|check:|^(--- |ok|FAIL|panic)'
exit "${PIPESTATUS[0]}"
