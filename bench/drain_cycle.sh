#!/usr/bin/env bash
# Drain-cycle CPU cost, bpfstderr against a naive reader, same run.
# Needs root. Usage: bench/drain_cycle.sh [N...]   (default: 1000 5000)
set -eu
cd "$(dirname "$0")/.."
make -s build/bench/drain_cycle
[ $# -gt 0 ] || set -- 1000 5000	# (one word "1000 5000" was one N and 5000 cycles)
for n in "$@"; do
	build/bench/drain_cycle "$n" 20
done
