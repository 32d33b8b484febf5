#!/usr/bin/env bash
# report --input throughput on a generated corpus against grep -c '^ERROR:'
# on the same file, in the same run. Also checks both count the same
# number of reports, so the comparison is of equal work found.
# usage: bench/report_input.sh [MB...]   (default 100; e.g. 100 1024)
# REPEATS=N runs of each (default 3): times are shown as best and range.
# BPFSTDERR=path measures another build (e.g. the previous one).
# Needs python3 and grep only: no vmlinux, jq or /usr/bin/time, so it runs
# on a fresh machine (stderr, e.g. the "no vmlinux with DWARF" notice, is
# kept apart from the JSON it checks).
set -eu
cd "$(dirname "$0")/.."
bin=${BPFSTDERR:-build/bpfstderr}
[ -n "${BPFSTDERR:-}" ] || make -s build/bpfstderr
cache=${BENCH_CACHE:-/tmp/bpfstderr-bench}
repeats=${REPEATS:-3}
mkdir -p "$cache"

corpus_of() {
	local mb=$1 corpus=$cache/corpus-${1}M.txt

	[ -s "$corpus" ] || python3 - "$corpus" "$mb" <<'PY'
# Both report formats, messages in between, varying tasks and CPUs.
import sys
path, mb = sys.argv[1], int(sys.argv[2])
up = open("tests/fixtures/upstream-6.18.txt").read()
rfc = open("tests/fixtures/rfc-seed001.txt").read()
with open(path + ".tmp", "w") as f:
    i = 0
    while f.tell() < mb * 1024 * 1024:
        f.write(up.replace("PID: 4242", f"PID: {1000 + i % 500}").replace("CPU: 1 ", f"CPU: {i % 8} "))
        f.write(f"sched: picked task {i} on cpu {i % 8}\n" * 20)
        f.write(rfc)
        i += 1
import os
os.rename(path + ".tmp", path)
PY
	echo "$corpus"
}

# maxrss CMD...: runs CMD, then prints "maxrss KB" of it alone on stderr.
cc -O2 -o "$cache/maxrss" -x c - <<'C'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2 || (pid = fork()) < 0)
		return 127;
	if (!pid) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 127;
	fprintf(stderr, "maxrss %ld\n", ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
C

# Runs each command REPEATS times, interleaved; prints the figures and
# checks the counts. Wall time per run, and peak RSS from the kernel's
# accounting of each child alone.
measure() {
	python3 - "$1" "$repeats" "$cache" "$bin" <<'PY'
import json, os, resource, subprocess, sys, time
corpus, repeats, cache, bpfstderr = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
size = os.path.getsize(corpus)
mb = size / 1048576
cmds = {
    "grep": ["grep", "-c", "^ERROR:", corpus],
    "report": [bpfstderr, "report", "--json", corpus],
}

def run(argv):
    with open(os.path.join(cache, "out"), "wb") as out, open(os.path.join(cache, "err"), "wb") as err:
        t = time.monotonic()
        # Through a small C parent: a child of python (forked or spawned)
        # carries python's peak RSS into its own ru_maxrss.
        p = subprocess.run([os.path.join(cache, "maxrss")] + argv, stdout=out, stderr=err)
        t = time.monotonic() - t
    with open(os.path.join(cache, "err"), "rb") as f:
        lines = f.read().splitlines()
    rss = int(lines[-1].split()[1])	# "maxrss KB", the wrapper's last line
    return t, rss, p.returncode, open(os.path.join(cache, "out"), "rb").read()

subprocess.run(["cat", corpus], stdout=subprocess.DEVNULL, check=True)	# same page cache for both
res = {k: [] for k in cmds}
for _ in range(repeats):
    for k, argv in cmds.items():
        res[k].append(run(argv))
ng = int(res["grep"][0][3])
for t, rss, rc, out in res["report"]:
    if rc not in (0, 1):
        sys.exit(f"report exited {rc}: {open(os.path.join(cache, 'err')).read()}")
    nr = json.loads(out)["summary"]["faults"]
    if nr != ng:
        sys.exit(f"count mismatch: grep {ng}, report {nr}")
tg = min(r[0] for r in res["grep"])
tr = min(r[0] for r in res["report"])
rng = lambda k: f"{min(r[0] for r in res[k]):.3f}-{max(r[0] for r in res[k]):.3f} s"
rss = lambda k: max(r[1] for r in res[k]) / 1024
print(f"corpus {mb:.0f} MB, {ng} reports, {repeats} runs each")
print(f"grep -c ^ERROR:   {tg:6.3f} s  {mb / tg:7.1f} MB/s  ({rng('grep')}, peak RSS {rss('grep'):.1f} MB)")
print(f"bpfstderr report  {tr:6.3f} s  {mb / tr:7.1f} MB/s  ({rng('report')}, peak RSS {rss('report'):.1f} MB; parse + group + JSON)")
print(f"report/grep time = {tr / tg:.1f}x (best of each; goal <= 3x)")
PY
}

for mb in "${@:-100}"; do
	measure "$(corpus_of "$mb")"
done
