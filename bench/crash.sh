#!/bin/sh
# bench/crash.sh: the crash storm, 1,000 exec tasks (some blocked by others,
# some walking a workflow with a fork) while the daemon is killed with
# SIGKILL at random moments 20 times and restarted; then the checks of
# TestCrashStorm (daemon/storm_test.go) and the counts.
#
#   bench/crash.sh                                   # 1,000 tasks, 20 kills
#   TASKD_STORM_TASKS=5000 TASKD_STORM_KILLS=50 bench/crash.sh
#
# Takes about a minute on a 2-core machine; the short storm (100 tasks,
# 3 kills) is part of the default go test run.
set -eu
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if go test -tags stress -count=1 -timeout 30m -run '^TestCrashStorm$' -v ./daemon >"$log" 2>&1; then
	grep 'storm:' "$log" | sed 's/^ *storm_test.go:[0-9]*: //'
	echo "crash.sh: PASS"
else
	grep -v '^        time=' "$log" | tail -60
	echo
	echo "crash.sh: FAIL" >&2
	exit 1
fi
