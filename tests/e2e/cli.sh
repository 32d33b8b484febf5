# Bad input and missing privileges: one clear line, the documented code,
# nothing on stdout.
. tests/lib.sh

out=$(mktmp)
expect() {	# expect DESC CODE CMD...
	local desc=$1 code=$2 rc; shift 2
	"$@" > "$out/stdout" 2> "$out/stderr"; rc=$?
	check_eq "$desc: exit $code" "$rc" "$code"
}

expect "no command" 2 "$BPFSTDERR"
check "no command: usage on stderr" grep -q '^Usage: bpfstderr' "$out/stderr"
expect "unknown command" 2 "$BPFSTDERR" frobnicate
check_eq "unknown command: one error line" "$(head -n 1 "$out/stderr")" \
	"bpfstderr: unknown command 'frobnicate'"
check "unknown command: nothing on stdout" test ! -s "$out/stdout"
expect "unknown option" 2 "$BPFSTDERR" list --frobnicate
check "unknown option named" grep -q "unrecognized option '--frobnicate'" "$out/stderr"
expect "stray argument" 2 "$BPFSTDERR" doctor extra
expect "--help" 0 "$BPFSTDERR" --help
check "--help lists exit codes" grep -q '^Exit status:' "$out/stdout"
expect "--version" 0 "$BPFSTDERR" --version

# Bad numbers, tags, names and time windows: exit 2 with one line, before
# anything runs (timeout: today's record/follow would run on, or spin).
bad_arg() {	# bad_arg ARGS...
	expect "$*" 2 timeout 10 "$BPFSTDERR" "$@" < /dev/null
	check_eq "$*: one line on stderr" "$(wc -l < "$out/stderr")" 1
	check "$*: the line is ours" grep -q "^bpfstderr[ a-z]*: " "$out/stderr"
	check "$*: nothing on stdout" test ! -s "$out/stdout"
}
for d in nan NaN inf -inf infinity 1e999 1e-999 0 0.001 0.009 -1 3601 0x10 '' ' 1' 1s; do
	bad_arg follow --all -d "$d"
	bad_arg record -d "$d"
	bad_arg top -b -n 1 -d "$d"
done
for n in 0 -1 nan 1.5 99999999999999999999 ''; do
	bad_arg top -b -n "$n"
done
for a in nan inf 0.5s 1e999d 99999999999999d 100001d -1d 7x; do
	bad_arg record --max-age "$a"
done
for z in nan inf 0.5B 1e999G 512K -1M 1Q; do
	bad_arg record --max-size "$z"
done
bad_arg report --since 99999999999999d
bad_arg report --since @99999999999
bad_arg report --since 2300-01-01
bad_arg report --since nan
bad_arg report --since 2h --until 3h
bad_arg report --since 2h --until 2h
bad_arg report --until @0
bad_arg report --since "$(date -d '+1 day' '+%Y-%m-%d %H:%M')"
bad_arg follow --tag zz
bad_arg follow --tag 0123456789abcdef0
bad_arg follow --tag 0123456789abcdeg
bad_arg follow --name ''
# The same parser takes what the ranges allow.
expect "top -d 0.01 is an interval" 0 timeout 20 "$BPFSTDERR" top -b -n 2 -d 0.01 --no-journal
expect "top -d 3600 -n 1 is an interval" 0 timeout 20 "$BPFSTDERR" top -b -n 1 -d 3600 --no-journal

# stdout that cannot be written: exit 5 and one line with the real errno,
# never exit 0 with the output gone.
enospc=$(python3 -c 'import errno, os; print(os.strerror(errno.ENOSPC))')
full() {	# full ARGS...: run with stdout on /dev/full
	local rc
	timeout 60 "$BPFSTDERR" "$@" > /dev/full 2> "$out/stderr"; rc=$?
	check_eq "$* >/dev/full: exit 5" "$rc" 5
	check_eq "$* >/dev/full: one line, the real errno" \
		"$(grep -c "^bpfstderr: cannot write to standard output: $enospc\$" "$out/stderr")" 1
	check "$* >/dev/full: no other write error" \
		bash -c "! grep -v '^bpfstderr: cannot write to standard output: $enospc\$' '$out/stderr' | grep -qi 'error\|output'"
}
full list
full list --json
full doctor
full doctor --json
full top -b -n 1 --no-journal
full top -b -n 1 --json
full report --input tests/fixtures/upstream-6.18.txt
full report --json tests/fixtures/upstream-6.18.txt
full --help
full list --help
(trap '' PIPE; "$BPFSTDERR" top -b -n 3 -d 0.1 2> "$out/stderr" | head -n 1 > /dev/null
 exit "${PIPESTATUS[0]}"); rc=$?
check_eq "top -b | head with SIGPIPE ignored: a closed pipe is not an error" "$rc" 0
check_eq "top -b | head: nothing said about it" "$(grep -c 'standard output' "$out/stderr")" 0

# As an unprivileged user with no capabilities at all.
unpriv() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	--bounding-set=-all -- "$@"; }
cp "$BPFSTDERR" "$out/bpfstderr" && chmod 755 "$out" "$out/bpfstderr"
expect "list without CAP_SYS_ADMIN" 3 unpriv "$out/bpfstderr" list --json
check_eq "list without privileges: one line naming the capability" \
	"$(cat "$out/stderr")" "bpfstderr: listing programs needs CAP_SYS_ADMIN"
check "list without privileges: no partial output" test ! -s "$out/stdout"
expect "doctor without CAP_SYS_ADMIN" 3 unpriv "$out/bpfstderr" doctor --json
check_eq "doctor reports the missing capability" \
	"$(jq .privileges.CAP_SYS_ADMIN "$out/stdout")" false

# One meaning per option: -d is the interval and -k the vmlinux everywhere.
for c in follow record top; do
	check "$c --help: -d is --interval" bash -c "'$BPFSTDERR' $c --help | grep -q -- '-d, --interval=SECS'"
done
for c in follow report top doctor; do
	check "$c --help: -k is --vmlinux" bash -c "'$BPFSTDERR' $c --help | grep -q -- '-k, --vmlinux=PATH'"
done
expect "top --delay, the old name of --interval, still works" 0 "$BPFSTDERR" top -b -n 1 --delay 0.5
finish
