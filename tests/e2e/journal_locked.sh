# A journal another process holds write-locked (a sqlite3 shell in a
# transaction, a backup): record reads nothing meanwhile (it could not keep
# what it read), says so once on stderr, and reads everything once the lock
# goes, saying that once too. Oracles: the shim's served offsets (nothing
# read while locked, all after) and the journal read with report --json.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
t=$(mktmp)
d=$t/fixtures; mkdir -p "$d"
J=$t/journal.db
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
served() { [ "$(cat "$d/$id.2.off" 2>/dev/null || echo 0)" = "$(stat -c %s "$d/$id.2")" ]; }
nothing_served() { [ "$(cat "$d/$id.2.off" 2>/dev/null || echo 0)" = 0 ]; }

# record ERR [ARGS...]: record on the journal, the shim serving the stream
record_bg() {
	local err=$1
	shift
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" record -d 0.2 "$@" --journal "$J" 2> "$err" & rpid=$!
}
# lock_bg LOCKED RELEASE: Python's sqlite3 takes the write lock, says so
# (creates LOCKED) and keeps it until RELEASE exists
lock_bg() {
	python3 -c '
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("begin immediate")
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
	time.sleep(0.05)
c.execute("commit")
' "$J" "$1" "$2" & lpid=$!
}
record_bg "$t/rec.err"
check "record's first cycle done" wait_asleep "$rpid"
lock_bg "$t/locked" "$t/release"
check "the journal is locked" wait_until 60 test -e "$t/locked"
printf 'while locked %d\n' $(seq 1 5) > "$d/$id.2"
fixture_added H
said_locked() { grep -q "locked by another process" "$t/rec.err"; }
check "record says the journal is locked" wait_until 60 said_locked
check "... naming the holder (/proc/locks: the Python's pid and name)" \
	grep -q "locked by another process (pid $lpid, python3): stopped reading" "$t/rec.err"
check "... and read nothing meanwhile (the shim served 0 bytes)" nothing_served
touch "$t/release"; wait "$lpid"
check "once the lock went, record read the stream" wait_until 60 served
said_unlocked() { grep -q "unlocked: reading streams" "$t/rec.err"; }
check "... and said so" wait_until 60 said_unlocked
kill -TERM "$rpid"; wait "$rpid"
check_eq "record ends 0" "$?" 0
check_eq "each said once" "$(grep -c 'locked by another process' "$t/rec.err") $(grep -c 'unlocked: reading' "$t/rec.err")" "1 1"
check_eq "record said nothing else" "$(grep -vc 'locked by another process\|unlocked: reading' "$t/rec.err")" 0
check_eq "the journal has the 5 messages" \
	"$("$BPFSTDERR" report --json --journal "$J" -p "$id" 2>/dev/null | jq ".programs[] | select(.id == $id) | .messages.stderr")" 5
# A lock held longer than a retention check's wait for it (SQLite's 5 s
# busy timeout): record carries on. Before, the check's failed BEGIN
# (EBUSY) ended record with exit 5, after 10 s idle, and on SIGTERM with
# the lock still held. --max-age 4s: a check every second. The failure
# is an event (record exits); its absence is watched for three checks'
# waits (16 s).
record_bg "$t/rec2.err" --max-age 4s
check "record (--max-age 4s) started" wait_asleep "$rpid"
lock_bg "$t/locked2" "$t/release2"
check "the journal is locked again" wait_until 60 test -e "$t/locked2"
printf 'while locked long %d\n' $(seq 1 5) > "$d/$id.2"
fixture_added H
# record is waiting on the lock once it said so; then three retention
# checks' waits (5 s each): record must still be there
said_locked2() { grep -q "locked by another process" "$t/rec2.err"; }
check "record says the journal is locked" wait_until 60 said_locked2
gone() { ! kill -0 "$rpid" 2>/dev/null; }
alive_for() { ! wait_until "$1" gone; }
check "record still runs after 16 s with the journal locked (retention waits)" alive_for 16
kill -TERM "$rpid"
touch "$t/release2"; wait "$lpid"
wait "$rpid"; rc=$?
check_eq "SIGTERM with the journal locked: record ends 0" "$rc" 0
check_eq "... its one-line notice, nothing else" "$(grep -vc 'locked by another process\|unlocked: reading\|are in .*bpfstderr-spill' "$t/rec2.err")" 0
# A record started while the lock is held: it waits (nothing read: no
# stream yet), says so once past the busy timeout, naming the holder
# (/proc/locks: the lock_bg Python's pid and name), and starts when the
# lock goes. Before, its start (storing the retention limits) gave up
# after the busy timeout: exit 5, "database is locked".
# locked_fresh N WORDS: the journal locked (lock N), and a fresh shim
# directory d (nothing served yet) whose stream has 5 lines "WORDS i"
locked_fresh() {
	d=$(mktmp)
	lock_bg "$t/locked$1" "$t/release$1"
	check "the journal is locked before the command starts (lock $1)" wait_until 60 test -e "$t/locked$1"
	printf "$2 %d\n" $(seq 1 5) > "$d/$id.2"
}
locked_fresh 3 'before start'
record_bg "$t/rec3.err"
said_holder() { grep -q "locked by another process (pid $lpid, python3): waiting" "$t/rec3.err"; }
check "record started on a locked journal says it waits, naming the holder" wait_until 60 said_holder
check "... is still running" kill -0 "$rpid"
check "... and read nothing (the shim served 0 bytes)" nothing_served
touch "$t/release3"; wait "$lpid"
check "once the lock went, record read the stream" wait_until 60 served
kill -TERM "$rpid"; wait "$rpid"
check_eq "record ends 0" "$?" 0
check_eq "it said each once, and nothing else" \
	"$(grep -c 'waiting for it' "$t/rec3.err") $(grep -c 'unlocked: reading' "$t/rec3.err") $(wc -l < "$t/rec3.err")" "1 1 2"
check_eq "the journal has the 5 messages (Python's sqlite3)" \
	"$(sql1 "$J" "select count(*) from events where cast(text as text) like 'before start %'")" 5
# SIGTERM while waiting: record ends 0 at once (a lock try every 100 ms),
# having read nothing; its notice is all it said
locked_fresh 4 'never read'
record_bg "$t/rec4.err"
said_waiting() { grep -q "waiting for it" "$t/rec4.err"; }
check "record says it waits" wait_until 60 said_waiting
kill -TERM "$rpid"
check "SIGTERM while waiting: record ends within 2 s" wait_until 2 gone
wait "$rpid"
check_eq "... with 0" "$?" 0
check "... having read nothing" nothing_served
check_eq "... and said only that it waited" "$(grep -vc 'waiting for it' "$t/rec4.err")" 0
touch "$t/release4"; wait "$lpid"
# follow started while the lock is held runs on as with a lock that comes
# mid-run: says so (naming the holder), reads nothing until the lock goes
locked_fresh 5 follow
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" follow -p "$id" --journal "$J" > "$t/follow5" 2> "$t/follow5.err" & fpid=$!
said_follow() { grep -q "locked by another process (pid $lpid, python3): stopped reading" "$t/follow5.err"; }
check "follow started on a locked journal says so, naming the holder" wait_until 60 said_follow
check "... and read nothing (the shim served 0 bytes)" nothing_served
touch "$t/release5"; wait "$lpid"
check "once the lock went, follow read the stream" wait_until 60 served
shown() { [ "$(grep -c 'follow [1-5]$' "$t/follow5")" = 5 ]; }
check "... and showed the 5 messages" wait_until 60 shown
kill -INT "$fpid"; wait "$fpid"
check_eq "follow ends 0" "$?" 0
finish
