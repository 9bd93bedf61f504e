#!/bin/sh
# bench/fuzz.sh: run every fuzz target of the module for a fixed budget.
#
#   bench/fuzz.sh            # 60s per target
#   FUZZTIME=10s bench/fuzz.sh
#   bench/fuzz.sh ./taskfile ./navigator   # only these packages
#
# Targets are discovered, not listed: every Fuzz* function that
# `go test -list` reports in a package of the module runs, so targets added
# later are picked up without changing this script. An input that makes a
# target fail is saved by go test under the package's
# testdata/fuzz/<FuzzName>/; plain `go test` then runs it as a regression
# test. Commit it with the fix. The script exits non-zero if any target
# found a failing input, and prints a line per target with its result.
#
# Go's fuzzing coordinator before Go 1.27 can report "context deadline
# exceeded" as a failure when -fuzztime expires while a worker is busy
# (go.dev/issue/75804), most often on a loaded machine. Such a run wrote no
# failing input, so it found nothing: the script runs the target once more,
# and if that ends the same way it reports "deadline" for the target
# without failing. A run that saved an input, panicked or failed any other
# way is a failure.
set -eu
cd "$(dirname "$0")/.."

budget=${FUZZTIME:-60s}
if [ "$#" -eq 0 ]; then
	set -- ./...
fi

# go test -list prints the matching names of each package, then
# "ok <import path> <time>" (or "? <path> [no test files]").
targets=$(go test -list '^Fuzz' "$@" | awk '
	/^Fuzz/ { names = names " " $1; next }
	/^ok / { n = split(names, a, " "); for (i = 1; i <= n; i++) print $2, a[i]; names = "" }')

if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets found in $*" >&2
	exit 1
fi

count=$(echo "$targets" | wc -l)
echo "fuzz.sh: $count targets, $budget each"
failed=0
flaked=0
results=""
# run_target PKG NAME LOG: fuzz one target; prints ok, deadline or FAILED.
run_target() {
	corpus="$(go list -f '{{.Dir}}' "$1")/testdata/fuzz/$2"
	before=$(ls "$corpus" 2>/dev/null | wc -l)
	if go test -run '^$' -fuzz "^${2}\$" -fuzztime "$budget" "$1" >"$3" 2>&1; then
		echo ok
		return
	fi
	after=$(ls "$corpus" 2>/dev/null | wc -l)
	# The coordinator's false failure: its own deadline, reported as the
	# target's only error, with no input saved.
	if [ "$after" -eq "$before" ] &&
		! grep -q 'Failing input written to' "$3" &&
		grep -q '^    context deadline exceeded$' "$3" &&
		[ "$(grep -c '^    ' "$3")" -eq 1 ]; then
		echo deadline
		return
	fi
	echo FAILED
}

while read -r pkg name; do
	log=$(mktemp)
	start=$(date +%s)
	status=$(run_target "$pkg" "$name" "$log")
	if [ "$status" = deadline ]; then
		echo "fuzz.sh: $name: the fuzzing engine reported its own deadline and saved no input (go.dev/issue/75804); running it again" >&2
		status=$(run_target "$pkg" "$name" "$log")
	fi
	case $status in
	FAILED)
		failed=$((failed + 1))
		cat "$log"
		;;
	deadline)
		flaked=$((flaked + 1))
		;;
	esac
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	rm -f "$log"
	line=$(printf '%-40s %-28s %-8s %8s execs %4ss' "$pkg" "$name" "$status" "${execs:-?}" "$(($(date +%s) - start))")
	echo "$line"
	results="$results$line
"
done <<EOF
$targets
EOF

echo
echo "fuzz.sh: summary ($budget per target)"
printf '%s' "$results"
if [ "$flaked" -gt 0 ]; then
	echo "fuzz.sh: $flaked targets ended twice on the engine's own deadline without a failing input (go.dev/issue/75804); not counted as failures" >&2
fi
if [ "$failed" -gt 0 ]; then
	echo "fuzz.sh: $failed targets found failing inputs; they are saved under testdata/fuzz/ of their packages" >&2
	exit 1
fi
