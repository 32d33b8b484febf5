# Retention: record --max-size keeps the database file under the limit
# through a long run that writes many times that, dropping the oldest
# events first; --max-age drops events older than the age. Sizes are the
# file system's (stat); contents are read with Python's sqlite3.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
LINES=150000
d=$(mktmp)
db=$d/journal.db
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
: > "$d/$id.1"

( for i in $(seq 0 $((LINES / 5000 - 1))); do
	seq -f "retention line %07g, padded to make it a longer line ......" \
		$((i * 5000)) $((i * 5000 + 4999)) >> "$d/$id.1"
	sleep 0.2
  done ) &
gen=$!
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" record --journal "$db" -d 0.1 --max-size 1M 2> "$d/record.err" &
rpid=$!
max=0; maxwal=0; samples=0
sample() {
	s=$(stat -c %s "$db" 2>/dev/null || echo 0)
	w=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
	[ "$s" -gt "$max" ] && max=$s
	[ "$w" -gt "$maxwal" ] && maxwal=$w
	samples=$((samples + 1))
	sleep 0.05
}
while kill -0 "$gen" 2>/dev/null; do sample; done
# bytes added after record's last walk of the list: tests/lib.sh fixture_added
fixture_added H
for i in $(seq 2400); do
	[ "$(cat "$d/$id.1.off" 2>/dev/null)" = "$(stat -c %s "$d/$id.1")" ] && break
	sample
done
sleep 0.5
kill -TERM "$rpid"; wait "$rpid"; rc=$?
check_eq "record ends 0 on SIGTERM, nothing said" "$rc:$(cat "$d/record.err")" "0:"
served=$(stat -c %s "$d/$id.1")
echo "# served $served bytes; database at most $max bytes over $samples samples; WAL at most $maxwal"
check "the stream was many times the limit ($served bytes)" test "$served" -gt $((8 << 20))
check "the database file stayed under --max-size 1M (largest $max)" test "$max" -le $((1 << 20))
res=$(python3 - "$db" "$id" "$LINES" <<'PY'
import sqlite3, sys
db, pid, lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
nums = [int(t[len(b"retention line "):][:7]) for (t,) in con.execute(
    "SELECT text FROM events e JOIN progs p ON p.row = e.prog WHERE p.id = ? ORDER BY seq", (pid,))]
meta = dict(con.execute("SELECT key, value FROM meta"))
first = nums[0] if nums else -1
ok_suffix = nums == list(range(first, first + len(nums)))
print(f"{len(nums)} {first} {nums[-1] if nums else -1} {ok_suffix} {meta.get('max_size')}")
PY
)
read -r kept first last suffix limit <<<"$res"
echo "# kept $kept events, lines $first to $last"
check "the oldest events went first: what is kept is the newest, in one run" \
	test "$suffix" = True -a "$last" -eq $((LINES - 1)) -a "$first" -gt 0
check "the limit is stored in the journal for every writer" test "$limit" -eq $((1 << 20))

# --max-age: what is older goes, what is newer stays. Each step waits for
# its event (an ASan build on a loaded machine can take seconds to drain):
# the shim's offsets say what record read, sqlite_sequence what the
# journal ever stored (retention never prunes it), the events table what
# it keeps.
db2=$d/age.db
printf 'old line\n' >> "$d/$id.1"
t0=$(date +%s%N)
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" record --journal "$db2" -d 0.1 --max-age 3s 2> "$d/age.err" &
rpid=$!
q() {	# SQL: its rows' first column, on one line (nothing before the table exists)
	python3 -c "import sqlite3,sys; print(*[r[0] for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])])" \
		"$db2" "$1" 2> /dev/null
}
served_all() { [ "$(cat "$d/$id.1.off" 2>/dev/null)" = "$(stat -c %s "$d/$id.1")" ]; }
stored() { [ "$(q "select seq from sqlite_sequence where name = 'events'")" = "$1" ]; }
none_kept() { [ "$(q 'select count(*) from events')" = 0 ]; }
wait_until 60 served_all
wait_until 60 stored 1
old=$(q "select seq from sqlite_sequence where name = 'events'")
wait_until 60 none_kept
kept_ms=$((($(date +%s%N) - t0) / 1000000))
printf 'new line\n' >> "$d/$id.1"
fixture_added H
wait_until 60 served_all
kill -TERM "$rpid"; wait "$rpid"
check_eq "--max-age 3s: the old line was stored (sqlite_sequence), and is gone; the new one is there" \
	"$old $(q "select count(*) from events where cast(text as text) = 'old line'") $(q 'select cast(text as text) from events order by seq')" \
	"1 0 new line"
# drained after record started, pruned 3 s after that at the earliest
check "--max-age 3s: the old line went no sooner than 3 s after record started ($kept_ms ms)" \
	test "$kept_ms" -ge 3000
# A full disk: record stops reading (the kernel keeps the bytes), says so
# once and keeps running; what it read is in the journal, byte for byte.
mkdir "$d/small"
if mount -t tmpfs -o size=1m tmpfs "$d/small"; then
	before=$(cat "$d/$id.1.off")
	seq -f "filling line %07g, long enough to fill a small file system quickly" 40000 >> "$d/$id.1"
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		timeout 60 "$BPFSTDERR" record --journal "$d/small/j.db" -d 0.1 --max-size 0 2> "$d/full.err" &
	rpid=$!
	wait_until 60 grep -q "no room" "$d/full.err"
	sleep 1		# a window for reads that should not come
	after=$(cat "$d/$id.1.off")
	check "a full disk: record keeps running" kill -0 "$rpid"
	check_eq "a full disk: record says once that it stopped reading" \
		"$(grep -c 'no room on its file system' "$d/full.err")" 1
	check "a full disk: the rest stays unread ($((after - before)) bytes read)" \
		test "$after" -lt "$(stat -c %s "$d/$id.1")"
	kill -TERM "$rpid"; wait "$rpid"; rc=$?
	check_eq "a full disk: SIGTERM, exit 0" "$rc" 0
	check "a full disk: every byte read is in the journal (events, then the held tail)" cmp -s \
		<(python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
out = sys.stdout.buffer
for kind, flags, text in c.execute('select e.kind, e.flags, e.text from events e join progs p on p.row = e.prog where p.id = ? and e.stream = 1 order by e.seq', (int(sys.argv[2]),)):
    out.write(bytes(text) + (b'' if kind or flags & 1 else b'\\n'))
r = c.execute('select q.bytes from pending q join progs p on p.row = q.prog where p.id = ? and q.stream = 1', (int(sys.argv[2]),)).fetchone()
out.write(bytes(r[0]) if r else b'')" "$d/small/j.db" "$id") \
		<(tail -c +$((before + 1)) "$d/$id.1" | head -c $((after - before)))
	cat "$d/full.err" | sed 's/^/# /'
	umount "$d/small"
else
	fail "mount a small tmpfs"
fi
finish
