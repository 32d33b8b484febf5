#!/usr/bin/env bash
# A bounded libFuzzer run of the parser from the fixtures, for make check.
# usage: run.sh FUZZER SECONDS
set -u
fuzzer=$1 secs=$2
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/fixtures/*.txt "$corpus/"
if "$fuzzer" -max_total_time="$secs" -rss_limit_mb=1024 -timeout=10 "$corpus" > "$corpus.log" 2>&1; then
	echo "ok - $(grep -o 'Done [0-9]* runs' "$corpus.log") in $secs s, no crash, leak or hang"
	echo "1 passed, 0 failed"
else
	tail -n 30 "$corpus.log"
	echo "not ok - the fuzzer found a problem"
	echo "0 passed, 1 failed"
fi
rm -f "$corpus.log"
