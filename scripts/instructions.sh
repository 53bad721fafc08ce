#!/usr/bin/env bash
# instructions.sh: instructions executed per benchmark op, function by
# function, counted by valgrind's cachegrind (apt install valgrind).
#
#   [TOP=n] scripts/instructions.sh BENCH [LO HI]
#
# builds the root package's test binary, runs benchmark BENCH (a -bench
# pattern) for LO and for HI iterations (default 100 and 400), and prints
# the difference divided by HI-LO: the setup, which both runs share, cancels
# out. Unlike timings on a shared VM, the counts repeat to the instruction,
# so they show changes of a few percent that benchmark noise hides. They
# are not times: cachegrind runs SHA-256 on its AVX2 path (no SHA-NI), the
# runtime's GC and scheduler work moves from run to run (so the total does,
# and runtime functions; this package's functions repeat exactly), and
# cache misses are not counted.
set -euo pipefail

bench=${1:?usage: scripts/instructions.sh BENCH [LO HI]}
lo=${2:-100}
hi=${3:-400}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$(dirname "$0")/.."
go test -tags purrabench -c -o "$dir/bench.test" .

count() { # count N: per-function instruction totals of an N-iteration run
	if ! valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$dir/cg.$1" \
		"$dir/bench.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$1x" >"$dir/log.$1" 2>&1; then
		# e.g. SIGILL where the vDSO reads the clock with rdtscp (as
		# kvm-clock does on some hosts), which valgrind cannot run.
		echo "instructions.sh: the $1-iteration run failed under valgrind:" >&2
		grep -E 'SIGILL|unhandled instruction|FAIL|panic' "$dir/log.$1" | head -3 >&2
		exit 1
	fi
	cg_annotate --auto=no --threshold=0.0001 "$dir/cg.$1" |
		awk '/PROGRAM TOTALS/ { n = $1; gsub(",", "", n); print n, "TOTAL"; next }
			/file:function/ { on = 1; next }
			on && NF >= 3 && $1 ~ /^[0-9,]+$/ { n = $1; gsub(",", "", n); f = $NF; sub(/^.*:/, "", f); print n, f }'
}
count "$lo" >"$dir/lo"
count "$hi" >"$dir/hi"

awk -v ops=$((hi - lo)) '
	FNR == NR { lo[$2] += $1; next }
	{ hi[$2] += $1 }
	END {
		total = (hi["TOTAL"] - lo["TOTAL"]) / ops
		for (f in hi) {
			if (f == "TOTAL") continue
			d = (hi[f] - lo[f]) / ops
			if (f ~ /sha256/) sha += d
			else if (f ~ /^purra\.dev\//) own += d
			printf "%10.0f  %s\n", d, f > "/dev/stderr"
		}
		printf "per op: %.0f instructions; SHA-256 %.0f, purra.dev functions %.0f\n", total, sha, own
	}' "$dir/lo" "$dir/hi" 2>"$dir/all"
sort -rn "$dir/all" | head -"${TOP:-30}"
