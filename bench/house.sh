#!/bin/sh
# bench/house.sh: the figures of how taskd's code is put together — the
# literal-key accesses to metadata.taskd outside daemon/task, the methods
# of the daemon and the job, exported names per package, wide and long
# functions, untested packages, agent kinds told apart by string — as a
# Markdown table (bench/house's comment defines each figure).
#
#   bench/house.sh          # the figures, in a few seconds once built
#   bench/house.sh -v       # and every site counted
#   bench/house.sh -time    # and the wall time of go test ./... without -race
set -eu
cd "$(dirname "$0")/.."
exec go run ./bench/house "$@"
