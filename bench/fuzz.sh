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
results=""
while read -r pkg name; do
	log=$(mktemp)
	start=$(date +%s)
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$budget" "$pkg" >"$log" 2>&1; then
		status=ok
	else
		status=FAILED
		failed=$((failed + 1))
		cat "$log"
	fi
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	rm -f "$log"
	line=$(printf '%-40s %-28s %-7s %8s execs %4ss' "$pkg" "$name" "$status" "${execs:-?}" "$(($(date +%s) - start))")
	echo "$line"
	results="$results$line
"
done <<EOF
$targets
EOF

echo
echo "fuzz.sh: summary ($budget per target)"
printf '%s' "$results"
if [ "$failed" -gt 0 ]; then
	echo "fuzz.sh: $failed targets found failing inputs; they are saved under testdata/fuzz/ of their packages" >&2
	exit 1
fi
