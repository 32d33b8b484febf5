# contrib/ for a fleet: the Prometheus alerting rules pass promtool's
# check and their own unit tests (promtool test rules), and those tests
# fail on rules that miss a first fault or fire one fault early; the
# Grafana dashboard is valid JSON whose every query names a metric record
# serves (the families of a real scrape); the systemd unit passes
# systemd-analyze verify. The dashboard's queries are run against a real
# Prometheus in fleet_metrics.sh.
. tests/lib.sh

t=$(mktmp)
REC_PID=""
trap '[ -n "$REC_PID" ] && kill -TERM "$REC_PID" 2>/dev/null && wait "$REC_PID"; cleanup' EXIT
for tool in promtool jq curl systemd-analyze; do
	command -v "$tool" > /dev/null || { fail "$tool is installed (make deps)"; finish; }
done

# -- alerting rules ---------------------------------------------------------------
R=contrib/prometheus
check "promtool check rules" promtool check rules "$R/bpfstderr-rules.yml" > /dev/null
out=$(promtool test rules "$R/bpfstderr-rules.test.yml" 2>&1)
check "promtool test rules passes" grep -q SUCCESS <<<"$out"
# the tests can fail: rules that lose a first fault, or count 64 as hidden
cp "$R/bpfstderr-rules.yml" "$R/bpfstderr-rules.test.yml" "$t/"
python3 - "$t/bpfstderr-rules.yml" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"bpfstderr_faults_total\n\s*- \(bpfstderr_faults_total offset 5m or bpfstderr_faults_total \* 0\)\n\s*> 0",
           "increase(bpfstderr_faults_total[5m]) > 0", s)
s = s.replace("bpfstderr_error_count > 64", "bpfstderr_error_count >= 64")
open(p, "w").write(s)
EOF
out=$(promtool test rules "$t/bpfstderr-rules.test.yml" 2>&1)
check "the rule tests catch increase() missing a first fault" \
	grep -q "alertname: BPFProgramFaulting, time: 7m" <<<"$out"
check "the rule tests catch an alert at 64 errors" \
	grep -q "alertname: BPFFaultReportsHidden, time: 1m" <<<"$out"

# -- the dashboard ------------------------------------------------------------------
D=contrib/grafana/bpfstderr-dashboard.json
check "the dashboard is JSON (jq)" jq empty "$D"
check_eq "every panel has a query" "$(jq '[.panels[] | select((.targets // []) | length == 0)] | length' "$D")" 0
check_eq "panel ids are unique" "$(jq '[.panels[].id] | length == (unique | length)' "$D")" true
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BPFSTDERR" record -d 0.5 --journal "$t/j.db" --metrics-address "127.0.0.1:$port" 2> "$t/rec.err" & REC_PID=$!
scraped() { curl -sf "http://127.0.0.1:$port/metrics" > "$t/scrape"; }
wait_until 60 scraped
# what record serves: the families, with a histogram's and a counter's samples
awk '$1 == "#" && $2 == "TYPE" {
	print $3
	if ($4 == "histogram") { print $3 "_bucket"; print $3 "_sum"; print $3 "_count" }
}' "$t/scrape" | sort -u > "$t/served"
check "record serves metric families ($(wc -l < "$t/served"))" [ "$(wc -l < "$t/served")" -ge 8 ]
jq -r '.. | .expr? // empty, .query?.query? // empty' "$D" | grep -oE 'bpfstderr_[a-z_]+' | sort -u > "$t/queried"
check "the dashboard queries metrics ($(wc -l < "$t/queried"))" [ "$(wc -l < "$t/queried")" -ge 8 ]
check_eq "every metric the dashboard queries is one record serves" \
	"$(comm -23 "$t/queried" "$t/served" | tr '\n' ' ')" ""
check_eq "every family record serves is on the dashboard" \
	"$(comm -13 <(sed -E 's/_(bucket|sum|count)$//' "$t/queried" | sort -u) \
		<(grep -vE '_(bucket|sum|count)$' "$t/served") | tr '\n' ' ')" ""
kill -TERM "$REC_PID"; wait "$REC_PID"; REC_PID=""
check_eq "record said nothing" "$(cat "$t/rec.err")" ""

# -- the systemd unit ---------------------------------------------------------------
sed "s|/usr/local/sbin/bpfstderr|$(realpath "$BPFSTDERR")|" contrib/bpfstderr-record.service \
	> "$t/bpfstderr-record.service"
out=$(systemd-analyze verify --man=no "$t/bpfstderr-record.service" 2>&1)
check_eq "systemd-analyze verify: the unit is clean" "$out" ""
check "the unit documents the metrics option" grep -q -- '--metrics-address' contrib/bpfstderr-record.service

# -- make install / uninstall into a scratch root (the build is up to date)
root=$t/root
(umask 077; make -s install DESTDIR="$root" PREFIX=/usr) > "$t/install.out" 2>&1; rc=$?
check_eq "make install: exit 0 ($(tail -n 1 "$t/install.out"))" "$rc" 0
for f in prometheus/bpfstderr-rules.yml grafana/bpfstderr-dashboard.json; do
	check "make install: share/bpfstderr/$f is contrib's, 0644" \
		bash -c "cmp -s '$root/usr/share/bpfstderr/$f' 'contrib/$f' && [ \$(stat -c %a '$root/usr/share/bpfstderr/$f') = 644 ]"
done
check_eq "make install: the unit is 0644 whatever the umask" \
	"$(stat -c %a "$root/usr/lib/systemd/system/bpfstderr-record.service")" 644
check "make install: the unit runs the installed binary" \
	grep -q '^ExecStart=/usr/sbin/bpfstderr record' "$root/usr/lib/systemd/system/bpfstderr-record.service"
check "make install: the binary runs" "$root/usr/sbin/bpfstderr" --version
make -s uninstall DESTDIR="$root" PREFIX=/usr > /dev/null 2>&1
check_eq "make uninstall: no file left" "$(find "$root" -type f | wc -l)" 0
check "make uninstall: share/bpfstderr is gone" test ! -e "$root/usr/share/bpfstderr"
finish
