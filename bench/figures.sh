#!/bin/sh
# bench/figures.sh: every figure of docs/proof.md, measured from the
# current code in one run, written into docs/proof.md between
# <!-- figures:begin --> and <!-- figures:end -->: taskd against nq and
# task-spooler (bench/peers), disk per task, the daemon's CPU time and
# system calls per task (bench/cost), the memory of a rescan of
# 100,000 files, the cost of a state change and of the claim, the
# navigator, the crash storm, the concurrent writers, and agents on
# workers through NATS (bench/remote). Ratios are against baselines
# measured in the same run.
#
#   bench/figures.sh            # the full run: about 15-25 minutes on 2 cores
#   bench/figures.sh --quick    # smaller runs of everything: a few minutes
#   bench/figures.sh --no-write # print the figures, leave docs/proof.md alone
#
# Installs nq and task-spooler from Debian when missing
# (scripts/install-tools); the concurrent writers need the Node packages of
# scripts/test-deps.
set -eu
cd "$(dirname "$0")/.."
scripts/install-tools nq tsp strace
quick=""
write="-write docs/proof.md"
for arg in "$@"; do
	case "$arg" in
	--quick) quick="-quick" ;;
	--no-write) write="" ;;
	*)
		echo "usage: bench/figures.sh [--quick] [--no-write]" >&2
		exit 2
		;;
	esac
done
# shellcheck disable=SC2086
exec go run ./bench/figures $quick $write
