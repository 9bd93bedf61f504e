#!/bin/sh
# bench/peers.sh: taskd side by side with nq and task-spooler on this
# machine, in one run: throughput of 1,000 jobs of `true` with 1 and 2
# workers (median of 3 runs), enqueue-to-start latency (median and p90 of
# 50, the job's shell creating a file and the job's `date` writing the
# time), idle wake-ups, CPU and RSS over 10 s, taskd's startup scan and RSS
# with 10,000 and 100,000 task files, its peak RSS during a rescan of
# 100,000, its disk per task, and memory per queued job. Prints a
# Markdown table with the ratios taskd/peer. Installs nq and task-spooler
# from Debian when missing (scripts/install-tools). Works under
# ~/.cache/taskd-bench (-dir to change). About 3 minutes on a 2-core
# machine, plus up to 6 waiting for a disk slowed by files removed in the
# minutes before (-settle). Arguments go to bench/peers (go run
# ./bench/peers -h).
set -eu
cd "$(dirname "$0")/.."
scripts/install-tools nq tsp
exec go run ./bench/peers "$@"
