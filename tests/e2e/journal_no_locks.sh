# A journal whose file system gives no read rights (fcntl F_OFD_SETLK
# fails with ENOLCK, as on NFS without its lock daemon): record says so
# once and reads every stream inside its drains' transactions; before, it
# took ENOLCK for a right held elsewhere and never read the stream.
# Oracles: the shim's served offsets and the journal read by report --json.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program;
# the ENOLCK from tests/shim/refuse_shim.c.
. tests/lib.sh

SHIMS="$HELPERS/libstreamshim.so $HELPERS/librefuseshim.so"
t=$(mktmp)
d=$t/fixtures; mkdir -p "$d"
J=$t/journal.db
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
served() { [ "$(cat "$d/$id.2.off" 2>/dev/null || echo 0)" = "$(stat -c %s "$d/$id.2")" ]; }

LD_PRELOAD=$SHIMS BPFSTDERR_SHIM_DIR=$d BPFSTDERR_REFUSE_OFD_LOCK=1 \
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$t/rec.err" & rpid=$!
check "record's first cycle done" wait_asleep "$rpid"
printf 'no locks %d\n' $(seq 1 5) > "$d/$id.2"
fixture_added H
check "record read the stream all the same" wait_until 60 served
said() { grep -q "gives no read rights (ENOLCK: No locks available)" "$t/rec.err"; }
check "record says the journal gives no read rights, and why" wait_until 60 said
printf 'no locks %d\n' $(seq 6 8) >> "$d/$id.2"
fixture_added H
check "... and reads it again" wait_until 60 served
kill -TERM "$rpid"; wait "$rpid"
check_eq "record ends 0" "$?" 0
check_eq "said once" "$(grep -c 'gives no read rights' "$t/rec.err")" 1
check_eq "record said nothing else" "$(grep -vc 'gives no read rights' "$t/rec.err")" 0
check_eq "the journal has the 8 messages" \
	"$("$BPFSTDERR" report --json --journal "$J" -p "$id" 2>/dev/null | jq ".programs[] | select(.id == $id) | .messages.stderr")" 8
finish
