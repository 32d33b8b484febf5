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
finish
