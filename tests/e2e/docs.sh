# The man page renders cleanly, and every option any --help shows is in
# the man page and in the bash completion.
. tests/lib.sh

warn=$(groff -ww -man -z man/bpfstderr.8 2>&1)
check_eq "groff -ww renders the man page without warnings" "$warn" ""
warn=$(MANWIDTH=80 man -l man/bpfstderr.8 2>&1 >/dev/null)
check_eq "man -l renders without complaint" "$warn" ""

cmds=$("$BPFSTDERR" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
check "--help lists commands" test -n "$cmds"
for c in $cmds; do
	grep -q "^\.SS.*$c" man/bpfstderr.8 && pass "man: command $c" || fail "man: command $c"
	grep -qw "$c" contrib/bpfstderr.bash-completion && pass "completion: command $c" ||
		fail "completion: command $c"
	for o in $("$BPFSTDERR" "$c" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		case $o in --help|--usage|--version) continue ;; esac
		esc=${o//-/\\-}
		grep -qF -- "$esc" man/bpfstderr.8 && pass "man: $c $o" || fail "man: $c $o"
		grep -qF -- "$o" contrib/bpfstderr.bash-completion && pass "completion: $c $o" ||
			fail "completion: $c $o"
	done
done
finish
