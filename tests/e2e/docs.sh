# The documentation says only what exists. The man page renders cleanly,
# has the sections a man page has, and every option any --help shows is in
# the man page and in the bash completion; every exit status --help lists
# is in EXIT STATUS. In README.md, docs/*.md and the man page's EXAMPLES,
# every bpfstderr command named is one --help lists, with options its own
# --help lists; every other option named is one of bpfstderr's or of a
# script in the tree; every file of the tree named exists (a program make
# builds, as its source); every link
# leads to a file and heading that exist; every make target named is in
# the Makefile; every BPFSTDERR_* variable named is read somewhere in the
# tree. The README stays a front page: at most 250 lines.
. tests/lib.sh

MAN=man/bpfstderr.8

warn=$(groff -ww -man -z $MAN 2>&1)
check_eq "groff -ww renders the man page without warnings" "$warn" ""
warn=$(MANWIDTH=80 man -l $MAN 2>&1 >/dev/null)
check_eq "man -l renders without complaint" "$warn" ""

for sec in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT FILES NOTES \
	EXAMPLES "SEE ALSO"; do
	grep -qx "\.SH \"\?$sec\"\?" $MAN && pass "man: section $sec" || fail "man: section $sec"
done
# DESCRIPTION says what bpfstderr does; how it works inside is in NOTES.
n=$(MANWIDTH=80 MANPAGER=cat man -l $MAN 2>/dev/null |
	awk '/^DESCRIPTION$/ { on = 1; next } /^[A-Z]/ { on = 0 } on && NF' | wc -l)
check "man: DESCRIPTION is short ($n lines at 80 columns, at most 25)" test "$n" -le 25

cmds=$("$BPFSTDERR" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
check "--help lists commands" test -n "$cmds"
for c in $cmds; do
	grep -q "^\.SS.*$c" $MAN && pass "man: command $c" || fail "man: command $c"
	grep -qw "$c" contrib/bpfstderr.bash-completion && pass "completion: command $c" ||
		fail "completion: command $c"
	for o in $("$BPFSTDERR" "$c" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		case $o in --help|--usage|--version) continue ;; esac
		esc=${o//-/\\-}
		grep -qF -- "$esc" $MAN && pass "man: $c $o" || fail "man: $c $o"
		grep -qF -- "$o" contrib/bpfstderr.bash-completion && pass "completion: $c $o" ||
			fail "completion: $c $o"
	done
done

codes=$("$BPFSTDERR" --help | awk '/^Exit status:/ { on = 1; next } on && /^  [0-9]/ { print $1 }')
check "--help lists exit statuses" test -n "$codes"
exits=$(awk '/^\.SH EXIT STATUS/ { on = 1; next } /^\.SH/ { on = 0 } on' $MAN)
for e in $codes; do
	grep -qx "\.B $e" <<<"$exits" && pass "man: EXIT STATUS $e" || fail "man: EXIT STATUS $e"
done

n=$(wc -l < README.md)
check "README.md is at most 250 lines ($n)" test "$n" -le 250

# Each help text once, for the checker: HELP_DIR/CMD.
help=$(mktmp)
"$BPFSTDERR" --help > "$help/_" 2>&1
for c in $cmds; do "$BPFSTDERR" "$c" --help > "$help/$c" 2>&1; done

# What the docs name, against what exists: "ok DESC" or "not DESC<tab>WHY".
results=$(python3 - "$help" $cmds <<'EOF'
import glob, os, re, subprocess, sys

help_dir, cmds = sys.argv[1], sys.argv[2:]
helps = {c: open(os.path.join(help_dir, c)).read() for c in cmds}
top_help = open(os.path.join(help_dir, '_')).read()
every_help = top_help + ''.join(helps.values())
docs = ['README.md'] + sorted(glob.glob('docs/*.md'))
roots = ('tool/', 'bpf/', 'tests/', 'bench/', 'contrib/', 'man/', 'debian/',
         'docs/', 'kernel-patches/')
scripts = [f for d in ('bench', 'tests/vm', 'tests/e2e') for f in glob.glob(d + '/*')
           if os.path.isfile(f)]
tree = [f for d in ('tool', 'tests', 'bench', 'contrib') for f in
        glob.glob(d + '/**/*', recursive=True) if os.path.isfile(f)] + ['Makefile']
seen = set()


def say(ok, desc, why=''):
    if desc in seen:
        return
    seen.add(desc)
    print(('ok ' + desc) if ok else ('not %s\t%s' % (desc, why)))


def has_opt(text, o):
    if o.startswith('--'):
        return re.search(re.escape(o) + r'(?![a-z-])', text) is not None
    return re.search(r'(^|\s)' + re.escape(o) + r',', text, re.M) is not None


def in_scripts(o):
    for f in scripts:
        try:
            if o in open(f, errors='replace').read():
                return True
        except OSError:
            pass
    return False


OPT = re.compile(r'(?:(?<=[\s\[|(])|^)(--?[a-zA-Z][a-zA-Z0-9-]*)')
CMD = re.compile(r'\bbpfstderr\s+([a-z][a-z-]*|--[a-z-]+)((?:\s+[^\s#`]+)*)')
BARE = re.compile(r'^(%s)((?:\s+[^\s#`]+)*)' % '|'.join(map(re.escape, cmds)))


def check_command(where, cmd, rest):
    if cmd.startswith('--'):
        say(has_opt(top_help, cmd), '%s: bpfstderr %s' % (where, cmd),
            'not in bpfstderr --help')
        return
    if cmd not in helps:
        say(False, '%s: bpfstderr %s' % (where, cmd), 'no such command in --help')
        return
    say(True, '%s: bpfstderr %s' % (where, cmd))
    for o in OPT.findall(rest):
        say(has_opt(helps[cmd], o), '%s: %s %s' % (where, cmd, o),
            'not in bpfstderr %s --help' % cmd)


def check_code(where, code):
    """A code span, or a line of a code block."""
    m = CMD.search(code)
    if m:
        check_command(where, m.group(1), m.group(2))
    m = BARE.match(code)
    if m and OPT.search(m.group(2)):
        check_command(where, m.group(1), m.group(2))
    if code.startswith('-'):
        for o in OPT.findall(code):
            if o.startswith('--'):
                say(has_opt(every_help, o) or in_scripts(o),
                    '%s: option %s' % (where, o),
                    "neither bpfstderr's nor a script's in the tree")
    m = re.match(r'make\s+([a-z][a-z-]*)', code)
    if m:
        t = m.group(1)
        mk = open('Makefile').read()
        say(re.search(r'^%s\s*:' % re.escape(t), mk, re.M) is not None,
            '%s: make %s' % (where, t), 'no such target in the Makefile')
    for w in re.findall(r'(?:^|\s|\()((?:%s)[^\s`),:;]*)' % '|'.join(roots), code):
        w = w.rstrip('.')
        if re.search(r'\b[A-Z]{2,}\b', w):
            continue	# a placeholder: tests/vm/guest/NAME.sh
        # a program make builds is there as its source
        say(bool(glob.glob(w) or glob.glob(w + '.c')), '%s: file %s' % (where, w),
            'no such file')


def slug(h):
    h = re.sub(r'[^\w\- ]', '', h.strip().lower())
    return h.replace(' ', '-')


def anchors(path):
    return {slug(l.lstrip('#')) for l in open(path) if re.match(r'#+ ', l)}


for d in docs:
    s = open(d).read()
    for block in re.findall(r'```[a-z]*\n(.*?)```', s, re.S):
        for line in block.split('\n'):
            line = re.sub(r'^[#$] ', '', line.strip())
            if line.startswith(('bpfstderr', 'make ')):
                check_code(d, line)
    prose = re.sub(r'```[a-z]*\n(.*?)```', '', s, flags=re.S)
    for span in re.findall(r'`([^`\n]+)`', prose):
        check_code(d, span.strip())
    for target in re.findall(r'\]\(([^)\s]+)\)', prose):
        if re.match(r'[a-z]+:', target):
            continue
        path, _, frag = target.partition('#')
        path = os.path.normpath(os.path.join(os.path.dirname(d), path)) if path else d
        if not os.path.exists(path):
            say(False, '%s: link %s' % (d, target), 'no such file')
        elif frag and path.endswith('.md'):
            say(frag in anchors(path), '%s: link %s' % (d, target), 'no such heading')
        else:
            say(True, '%s: link %s' % (d, target))
    for v in sorted(set(re.findall(r'\bBPFSTDERR_[A-Z_]+\b', s))):
        found = any(v in open(f, errors='replace').read() for f in tree)
        say(found, '%s: variable %s' % (d, v),
            'read nowhere in tool/, tests/, bench/, contrib/, Makefile')

# The man page's examples and the files it names.
man = open('man/bpfstderr.8').read()
ex = man.split('.SH EXAMPLES', 1)[1].split('\n.SH ', 1)[0] if '.SH EXAMPLES' in man else ''
for line in ex.split('\n'):
    if line.startswith('# bpfstderr'):
        check_code('man EXAMPLES', line[2:].replace('\\-', '-'))
files = man.split('.SH FILES', 1)[1].split('\n.SH ', 1)[0] if '.SH FILES' in man else ''
for w in re.findall(r'^\.I (contrib/\S+)', files, re.M):
    w = w.replace('\\-', '-')
    say(os.path.exists(w), 'man FILES: %s' % w, 'no such file')
EOF
)
check "the docs checker ran" test -n "$results"
while IFS= read -r line; do
	case $line in
	"ok "*)	pass "${line#ok }" ;;
	"not "*) d=${line#not }; fail "${d%%$'\t'*}" "${d#*$'\t'}" ;;
	esac
done <<<"$results"
finish
