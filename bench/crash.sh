#!/bin/sh
# bench/crash.sh: the crash storm. 1,000 tasks of every kind (plain exec
# tasks, some blocked by others; loops ended by an untilCommand; parents
# that push children, by /push lines or taskd push and taskd run, and are
# resumed with their results; workflows with a fork) run while the daemon
# is killed with SIGKILL at random moments 30 times and restarted; then
# the checks of TestCrashStorm (daemon/storm_test.go) and the counts. The
# same tasks (the same seed) are then run without kills, to compare the
# agents started per task.
#
#   bench/crash.sh                                   # 1,000 tasks, 30 kills
#   TASKD_STORM_TASKS=5000 TASKD_STORM_KILLS=50 bench/crash.sh
#   TASKD_STORM_SEED=42 bench/crash.sh               # the same tasks and kills again
#
# Takes a few minutes on a 2-core machine; the short storm (100 tasks,
# 3 kills) is part of the default go test run. The last line is the
# summary (after "crash.sh: PASS"):
#
#   crash.sh: PASS
#   agents started per task: 1.09 without kills, 1.21 with 30 kills; tasks run twice after finishing: 0
set -eu
cd "$(dirname "$0")/.."
log=$(mktemp)
calm=$(mktemp)
trap 'rm -f "$log" "$calm"' EXIT
seed=${TASKD_STORM_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' \n')}
storm() { # storm OUT [VAR=value...]: one run of TestCrashStorm
	out=$1
	shift
	env TASKD_STORM_SEED="$seed" "$@" go test -tags stress -count=1 -timeout 60m -run '^TestCrashStorm$' -v ./daemon >"$out" 2>&1
}
fail() {
	grep -v '^        time=' "$1" | tail -60
	echo
	echo "crash.sh: FAIL" >&2
	exit 1
}
storm "$log" || fail "$log"
grep 'storm:' "$log" | sed 's/^ *[a-z_]*_test.go:[0-9]*: //'
storm "$calm" TASKD_STORM_KILLS=0 || fail "$calm"
# "storm: agents started: 1234 for 1130 tasks, 1.09 per task, with 30 kills"
per() { sed -n 's/.*storm: agents started: .*, \([0-9.]*\) per task, with \([0-9]*\) kills.*/\1 \2/p' "$1" | tail -1; }
set -- $(per "$calm") $(per "$log")
again=$(sed -n 's/.*storm: tasks run again after finishing: \([0-9]*\).*/\1/p' "$log" | tail -1)
echo "crash.sh: PASS"
echo "agents started per task: $1 without kills, $3 with $4 kills; tasks run twice after finishing: $again"
