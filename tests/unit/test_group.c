// SPDX-License-Identifier: GPL-2.0
/* Grouping against the rule group.h documents: one group per kind and
 * place (the stretch of the trace from the innermost to the outermost BPF
 * frame, BPF frames by source line), whatever the CPU, task, caller or
 * reporting machinery. The reports are the fixture's, with one field
 * changed at a time the way the kernel would print it.
 */
#include <stdlib.h>

#include "group.h"
#include "unit.h"

/* The fixture's first report (tests/fixtures/upstream-6.18.txt). */
static const char arena_read[] =
	"ERROR: Arena READ access at unmapped address 0xdeadbeef\n"
	"CPU: 1 UID: 0 PID: 4242 Comm: fault_demo\n"
	"Call trace:\n"
	"bpf_stream_stage_dump_stack+0xb0/0x280\n"
	"bpf_prog_report_arena_violation+0x6a/0x100\n"
	"ex_handler_bpf+0x4e/0x60\n"
	"asm_exc_page_fault+0x26/0x30\n"
	"bpf_prog_8c3f1b1a2d9e7c60_arena_fault+0x4f/0x78\n"
	"  val = *(volatile u64 __arena *)ptr; @ demo.bpf.c:41\n"
	"bpf_prog_test_run_syscall+0x10f/0x1f0\n"
	"__sys_bpf+0xc7d/0x2660\n"
	"\n";

static const char deadlock[] =
	"ERROR: AA or ABBA deadlock detected for bpf_res_spin_lock\n"
	"Attempted lock   = 0xff11000104a875e0\n"
	"Total held locks = 1\n"
	"Held lock[ 0] = 0xff11000104a875e0\n"
	"CPU: 1 UID: 0 PID: 4244 Comm: fault_demo\n"
	"Call trace:\n"
	"bpf_stream_stage_dump_stack+0xb0/0x280\n"
	"bpf_res_spin_lock+0x8c/0xa0\n"
	"bpf_prog_5f5e5d5c5b5a5958_lock_twice+0x5e/0x90\n"
	"  if (!bpf_res_spin_lock(&v->lock)) @ demo.bpf.c:70\n"
	"bpf_prog_test_run_syscall+0x10f/0x1f0\n"
	"\n";

/* text with the first occurrence of from replaced by to; caller frees */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t head, len;
	char *out;

	if (!at) {
		fprintf(stderr, "edit: '%s' not in the report\n", from);
		abort();
	}
	head = at - text;
	len = strlen(text) - strlen(from) + strlen(to);
	out = malloc(len + 1);
	memcpy(out, text, head);
	strcpy(out + head, to);
	strcat(out, at + strlen(from));
	return out;
}

static struct fgroup *add(struct grouper *g, struct gprog *p, const char *text, long sec)
{
	struct timespec ts = { sec, 0 };
	struct fault f;
	struct event ev = { .kind = EV_FAULT, .stream = 2, .text = text, .len = strlen(text) };
	unsigned long long before = p->fault_total;
	char *sig;
	int i;

	if (fault__parse(text, strlen(text), true, &f))
		abort();
	ev.fault = &f;
	CHECK(!grouper__add_fault(g, p, &ev, &ts), "add_fault failed");
	CHECK(p->fault_total == before + 1, "fault_total %llu", p->fault_total);
	sig = fault_signature(&f);
	fault__fini(&f);
	for (i = 0; i < p->group_cnt; i++) {
		if (!strcmp(p->groups[i].signature, sig)) {
			free(sig);
			return &p->groups[i];
		}
	}
	free(sig);
	return NULL;
}

/* One place, whatever reports it and however it was reached. */
static void test_same_place(void)
{
	struct grouper *g = grouper__new();
	struct gprog *p = grouper__prog(g, 7, "8c3f1b1a2d9e7c60", "arena_fault");
	char *other_task = edit(arena_read, "CPU: 1 UID: 0 PID: 4242 Comm: fault_demo",
			       "CPU: 0 UID: 0 PID: 999 Comm: other_task");
	char *machinery = edit(arena_read, "ex_handler_bpf+0x4e/0x60", "ex_handler_bpf+0x52/0x70");
	char *caller = edit(arena_read, "bpf_prog_test_run_syscall+0x10f/0x1f0",
			   "bpf_trampoline_6442451234+0x4f/0x1000");
	char *jit_off = edit(arena_read, "arena_fault+0x4f/0x78", "arena_fault+0x53/0x78");
	struct fgroup *grp;

	add(g, p, arena_read, 10);
	add(g, p, other_task, 11);
	add(g, p, machinery, 12);
	add(g, p, caller, 13);
	grp = add(g, p, jit_off, 14);
	CHECK(p->group_cnt == 1, "%d groups, want 1", p->group_cnt);
	CHECK(grp && grp->count == 5, "count %llu, want 5", grp ? grp->count : 0);
	CHECK(grp && grp->kind == FAULT_ARENA_READ, "kind %d", grp ? (int)grp->kind : -1);
	CHECK(grp && grp->first.tv_sec == 10 && grp->last.tv_sec == 14, "first %ld last %ld",
	      grp ? grp->first.tv_sec : 0, grp ? grp->last.tv_sec : 0);
	CHECK(grp && grp->pid_cnt == 2 && grp->cpu_cnt == 2, "pids %d cpus %d",
	      grp ? grp->pid_cnt : 0, grp ? grp->cpu_cnt : 0);
	CHECK(grp && grp->example_len == strlen(arena_read) &&
	      !memcmp(grp->example, arena_read, grp->example_len), "the example is the first report");
	CHECK(p->faults[FAULT_ARENA_READ] == 5, "%llu arena reads", p->faults[FAULT_ARENA_READ]);
	free(other_task);
	free(machinery);
	free(caller);
	free(jit_off);
	grouper__free(g);
}

/* A bpf_timer callback's fault: the callback runs from the timer
 * interrupt, and what the interrupt landed in follows in the trace (here
 * the same program, then kernel code, then nothing at all: an idle CPU).
 * One place, one group: the callback's own frame.
 */
static const char timer_cb[] =
	"ERROR: Arena WRITE access at unmapped address 0x100000000cafe\n"
	"CPU: 0 UID: 0 PID: 4300 Comm: st_timer\n"
	"Call trace:\n"
	"bpf_stream_stage_dump_stack+0xb0/0x280\n"
	"bpf_prog_report_arena_violation+0x6a/0x100\n"
	"ex_handler_bpf+0x4e/0x60\n"
	"asm_exc_page_fault+0x26/0x30\n"
	"bpf_prog_3c4d5e6f70819293_timer_cb+0x2c/0x48\n"
	"  *(volatile u64 __arena *)ptr = 1; @ st.bpf.c:90\n"
	"bpf_timer_cb+0x7a/0x130\n"
	"__hrtimer_run_queues+0x1a3/0x2d0\n"
	"hrtimer_interrupt+0xff/0x240\n"
	"__sysvec_apic_timer_interrupt+0x55/0x100\n"
	"sysvec_apic_timer_interrupt+0x6c/0x90\n"
	"asm_sysvec_apic_timer_interrupt+0x1a/0x20\n"
	"_raw_spin_unlock_irqrestore+0x2d/0x50\n"
	"bpf_timer_start+0x1d8/0x2b0\n"
	"bpf_prog_3c4d5e6f70819293_start_timer+0x64/0x90\n"
	"  bpf_timer_start(&v->t, 0, 0); @ st.bpf.c:99\n"
	"bpf_prog_test_run_syscall+0x10f/0x1f0\n"
	"\n";

static void test_interrupted(void)
{
	struct grouper *g = grouper__new();
	struct gprog *p = grouper__prog(g, 9, "3c4d5e6f70819293", "start_timer");
	char *other_spot = edit(timer_cb, "_raw_spin_unlock_irqrestore+0x2d/0x50\n"
				"bpf_timer_start+0x1d8/0x2b0\n",
				"_raw_spin_lock+0x1e/0x30\n__bpf_spin_lock_irqsave+0x2a/0x40\n");
	char *idle = edit(timer_cb, "_raw_spin_unlock_irqrestore+0x2d/0x50\n"
			  "bpf_timer_start+0x1d8/0x2b0\n"
			  "bpf_prog_3c4d5e6f70819293_start_timer+0x64/0x90\n"
			  "  bpf_timer_start(&v->t, 0, 0); @ st.bpf.c:99\n"
			  "bpf_prog_test_run_syscall+0x10f/0x1f0\n",
			  "pv_native_safe_halt+0xf/0x20\ndefault_idle+0x9/0x20\n"
			  "do_idle+0x1f3/0x240\ncpu_startup_entry+0x29/0x30\n");
	char *caller = edit(timer_cb, "start_timer+0x64/0x90\n"
			    "  bpf_timer_start(&v->t, 0, 0); @ st.bpf.c:99",
			    "start_timer+0x70/0x90\n"
			    "  bpf_timer_start(&v->t, 0, 1); @ st.bpf.c:101");
	char *line = edit(timer_cb, "@ st.bpf.c:90", "@ st.bpf.c:91");
	struct fgroup *grp;
	char *sig;
	struct fault f;

	add(g, p, timer_cb, 1);
	add(g, p, other_spot, 2);
	add(g, p, idle, 3);
	grp = add(g, p, caller, 4);
	CHECK(p->group_cnt == 1, "%d groups, want 1: the interrupted code is not the place",
	      p->group_cnt);
	CHECK(grp && grp->count == 4, "count %llu, want 4", grp ? grp->count : 0);
	if (fault__parse(timer_cb, strlen(timer_cb), true, &f))
		abort();
	sig = fault_signature(&f);
	CHECK_STR(sig, "arena_write: 3c4d5e6f70819293:timer_cb@st.bpf.c:90");
	free(sig);
	fault__fini(&f);
	add(g, p, line, 5);
	CHECK(p->group_cnt == 2, "%d groups, want 2: another line of the callback", p->group_cnt);
	free(other_spot);
	free(idle);
	free(caller);
	free(line);
	grouper__free(g);
}

/* Another source line, kind, kernel frame between BPF frames, or lock. */
static void test_other_places(void)
{
	struct grouper *g = grouper__new();
	struct gprog *p = grouper__prog(g, 7, "8c3f1b1a2d9e7c60", "arena_fault");
	char *line = edit(arena_read, "@ demo.bpf.c:41", "@ demo.bpf.c:42");
	char *write = edit(arena_read, "Arena READ", "Arena WRITE");
	char *timeout = edit(deadlock, "AA or ABBA deadlock detected for bpf_res_spin_lock",
			     "Timeout detected for bpf_res_spin_lock");
	char *irqsave = edit(deadlock, "deadlock detected for bpf_res_spin_lock\n",
			     "deadlock detected for bpf_res_spin_lock_irqsave\n");
	char *no_lines = edit(arena_read, "  val = *(volatile u64 __arena *)ptr; @ demo.bpf.c:41\n", "");
	char *no_lines_off = edit(no_lines, "arena_fault+0x4f/0x78", "arena_fault+0x53/0x78");

	add(g, p, arena_read, 1);
	add(g, p, line, 2);
	add(g, p, write, 3);
	add(g, p, deadlock, 4);
	add(g, p, timeout, 5);
	add(g, p, irqsave, 6);
	add(g, p, no_lines, 7);
	add(g, p, no_lines_off, 8);
	CHECK(p->group_cnt == 8, "%d groups, want 8: one per place", p->group_cnt);
	CHECK(p->faults[FAULT_LOCK_DEADLOCK] == 2 && p->faults[FAULT_LOCK_TIMEOUT] == 1,
	      "deadlocks %llu timeouts %llu", p->faults[FAULT_LOCK_DEADLOCK],
	      p->faults[FAULT_LOCK_TIMEOUT]);
	free(line);
	free(write);
	free(timeout);
	free(irqsave);
	free(no_lines);
	free(no_lines_off);
	grouper__free(g);
}

/* Most faults first, programs and groups alike; programs by id, or by tag
 * and name when they come from a dump (id 0).
 */
static void test_sorted(void)
{
	struct grouper *g = grouper__new();
	struct gprog *a = grouper__prog(g, 3, "8c3f1b1a2d9e7c60", "arena_fault");
	struct gprog *b = grouper__prog(g, 9, "5f5e5d5c5b5a5958", "lock_twice");
	struct gprog *d1 = grouper__prog(g, 0, "5f5e5d5c5b5a5958", "from_dump");
	struct gprog *d2 = grouper__prog(g, 0, "5f5e5d5c5b5a5958", "other_dump");
	char *line = edit(arena_read, "@ demo.bpf.c:41", "@ demo.bpf.c:42");
	struct event msg = { .kind = EV_MESSAGE, .stream = 1, .text = "hi", .len = 2 };
	struct gprog **v;
	size_t n;

	CHECK(grouper__prog(g, 3, "8c3f1b1a2d9e7c60", "arena_fault") == a, "same program, same entry");
	CHECK(d1 != d2, "dumps: another name is another program");
	CHECK(grouper__prog(g, 0, "5f5e5d5c5b5a5958", "from_dump") == d1, "dumps: by tag and name");
	add(g, a, line, 1);
	add(g, a, arena_read, 2);
	add(g, a, arena_read, 3);
	add(g, b, deadlock, 4);
	add(g, b, deadlock, 5);
	add(g, b, deadlock, 6);
	add(g, b, deadlock, 7);
	grouper__add_message(d1, &msg);
	msg.stream = 2;
	grouper__add_message(d1, &msg);
	grouper__add_message(d1, &msg);
	n = grouper__sorted(g, &v);
	CHECK(n == 4, "%zu programs", n);
	CHECK(v[0] == b && v[1] == a, "most faults first");
	CHECK(v[2] == d1 && v[3] == d2, "then by id and name");
	CHECK(a->groups[0].count == 2 && a->groups[1].count == 1, "groups: most faults first");
	CHECK(d1->messages[0] == 1 && d1->messages[1] == 2, "messages by stream: %llu %llu",
	      d1->messages[0], d1->messages[1]);
	free(line);
	grouper__free(g);
}

/* Past GROUP_SET_MAX distinct tasks the set says it overflowed. */
static void test_set_overflow(void)
{
	struct grouper *g = grouper__new();
	struct gprog *p = grouper__prog(g, 1, "8c3f1b1a2d9e7c60", "arena_fault");
	struct fgroup *grp = NULL;
	char task[64], *text;
	int i;

	for (i = 0; i <= GROUP_SET_MAX; i++) {
		snprintf(task, sizeof(task), "CPU: 1 UID: 0 PID: %d Comm: fault_demo", 1000 + i);
		text = edit(arena_read, "CPU: 1 UID: 0 PID: 4242 Comm: fault_demo", task);
		grp = add(g, p, text, i);
		free(text);
	}
	CHECK(grp && grp->count == GROUP_SET_MAX + 1, "count %llu", grp ? grp->count : 0);
	CHECK(grp && grp->pid_cnt == GROUP_SET_MAX && grp->sets_overflow, "pids %d overflow %d",
	      grp ? grp->pid_cnt : 0, grp ? grp->sets_overflow : 0);
	CHECK(grp && grp->cpu_cnt == 1, "cpus %d", grp ? grp->cpu_cnt : 0);
	grouper__free(g);
}

/* Signatures written out by hand from the rule group.h documents: every
 * kind of frame the signature spells (BPF with and without a source line,
 * a negative line, a module, a frame that did not parse), the lock
 * function, an unknown kind with no BPF frame. Signatures are built
 * without printf; these are the printf-free path's oracle.
 */
static void test_signature_text(void)
{
	static const struct { const char *text, *sig; } cases[] = {
		{ "ERROR: AA or ABBA deadlock detected for bpf_res_spin_lock\n"
		  "CPU: 1 UID: 0 PID: 2 Comm: x\nCall trace:\n"
		  "bpf_stream_stage_dump_stack+0xb0/0x280\n"
		  "bpf_prog_0123456789abcdef_inner+0x4f/0x78\n"
		  "  x = 1; @ a.bpf.c:-5\n"
		  "helper_fn+0x10/0x20 [mymod]\n"
		  "0xffffffff81000000\n"
		  "bpf_prog_fedcba9876543210_outer+0xABC/0x1000\n"
		  "bpf_prog_test_run_syscall+0x10f/0x1f0\n",
		  "lock_deadlock(bpf_res_spin_lock): 0123456789abcdef:inner@a.bpf.c:-5 helper_fn@mymod ?"
		  " fedcba9876543210:outer+0xabc" },
		{ "ERROR: Stack overflow detected for x\nCPU: 1 UID: 0 PID: 2 Comm: x\nCall trace:\n"
		  "a+0x1/0x2\nb+0x0/0x2 [m]\n",
		  "unknown(Stack overflow detected for x): a b@m" },
		{ "ERROR: Timeout detected for may_goto instruction\nCPU: 1 UID: 0 PID: 2 Comm: x\n"
		  "Call trace:\nbpf_prog_0123456789abcdef+0x0/0x2\n",
		  "may_goto_timeout: 0123456789abcdef:+0x0" },
		{ "ERROR: Arena READ access at unmapped address 0x1\n", "arena_read:" },
	};
	struct grouper *g = grouper__new();
	struct gprog *p = grouper__prog(g, 1, "0123456789abcdef", "x");
	struct fault f;
	size_t i;
	char *sig;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (fault__parse(cases[i].text, strlen(cases[i].text), true, &f))
			abort();
		sig = fault_signature(&f);
		CHECK_STR(sig, cases[i].sig);
		free(sig);
		fault__fini(&f);
		/* twice through the grouper: its own buffer finds the group */
		add(g, p, cases[i].text, 1);
		add(g, p, cases[i].text, 2);
		CHECK(p->group_cnt == (int)i + 1, "%d groups", p->group_cnt);
		CHECK_STR(p->groups[i].signature, cases[i].sig);
		CHECK(p->groups[i].count == 2, "count %llu", p->groups[i].count);
	}
	grouper__free(g);
}

/* Grouping through the trace memo (fault__reparse() gives a trace_id to
 * faults whose call trace it saw before) against grouping by the
 * signature alone (fault__parse() gives none): the same groups, counts
 * and examples, also where one trace comes with another kind, lock or
 * header, and in another program.
 */
static void add_both(struct grouper *gm, struct gprog *pm, struct grouper *gs, struct gprog *ps,
		     struct fault *reused, const char *text, long sec)
{
	struct timespec ts = { sec, 0 };
	struct event ev = { .kind = EV_FAULT, .stream = 2, .text = text, .len = strlen(text) };
	struct fault f;

	if (fault__reparse(text, strlen(text), true, reused) || fault__parse(text, strlen(text), true, &f))
		abort();
	CHECK(reused->trace_id && !f.trace_id, "trace ids %llu %llu",
	      (unsigned long long)reused->trace_id, (unsigned long long)f.trace_id);
	ev.fault = reused;
	CHECK(!grouper__add_fault(gm, pm, &ev, &ts), "add_fault (memo) failed");
	ev.fault = &f;
	CHECK(!grouper__add_fault(gs, ps, &ev, &ts), "add_fault failed");
	fault__fini(&f);
}

static void same_groups(const struct gprog *a, const struct gprog *b)
{
	int i;

	CHECK(a->group_cnt == b->group_cnt, "%d groups, by signature %d", a->group_cnt, b->group_cnt);
	for (i = 0; i < a->group_cnt && i < b->group_cnt; i++) {
		CHECK_STR(a->groups[i].signature, b->groups[i].signature);
		CHECK(a->groups[i].count == b->groups[i].count, "group %d: %llu, by signature %llu",
		      i, a->groups[i].count, b->groups[i].count);
		CHECK(a->groups[i].example_len == b->groups[i].example_len &&
		      !memcmp(a->groups[i].example, b->groups[i].example, a->groups[i].example_len),
		      "group %d: another example", i);
	}
}

static void test_trace_memo(void)
{
	struct grouper *gm = grouper__new(), *gs = grouper__new();
	struct gprog *pm[2] = { grouper__prog(gm, 7, "8c3f1b1a2d9e7c60", "arena_fault"),
				grouper__prog(gm, 8, "8c3f1b1a2d9e7c60", "arena_fault") };
	struct gprog *ps[2] = { grouper__prog(gs, 7, "8c3f1b1a2d9e7c60", "arena_fault"),
				grouper__prog(gs, 8, "8c3f1b1a2d9e7c60", "arena_fault") };
	char *texts[8];
	struct fault reused = {};
	char off[64];
	int i, n = 0;

	texts[n++] = strdup(arena_read);
	texts[n++] = edit(arena_read, "Arena READ", "Arena WRITE");		/* same trace */
	texts[n++] = edit(arena_read, "Arena READ access", "Arena SNEAKY access");
	texts[n++] = edit(arena_read, "Arena READ access", "Arena ODD access");	/* unknown */
	texts[n++] = strdup(deadlock);
	texts[n++] = edit(deadlock, "deadlock detected for bpf_res_spin_lock\n",
			  "deadlock detected for bpf_res_spin_lock_irqsave\n");
	texts[n++] = edit(arena_read, "@ demo.bpf.c:41", "@ demo.bpf.c:42");
	texts[n++] = edit(arena_read, "CPU: 1 UID: 0 PID: 4242", "CPU: 3 UID: 0 PID: 7");
	for (i = 0; i < 3 * n; i++)
		add_both(gm, pm[i / n % 2], gs, ps[i / n % 2], &reused, texts[(i * 5) % n], i);
	/* more traces than the memo keeps, then the first ones again */
	for (i = 0; i < 300; i++) {
		char *t;

		snprintf(off, sizeof(off), "ex_handler_bpf+0x%x/0x60", i % 150);
		t = edit(arena_read, "ex_handler_bpf+0x4e/0x60", off);
		add_both(gm, pm[0], gs, ps[0], &reused, t, 100 + i);
		free(t);
	}
	for (i = 0; i < 2; i++) {
		same_groups(pm[i], ps[i]);
		CHECK(pm[i]->fault_total == ps[i]->fault_total, "%llu faults, by signature %llu",
		      pm[i]->fault_total, ps[i]->fault_total);
	}
	for (i = 0; i < n; i++)
		free(texts[i]);
	fault__fini(&reused);
	grouper__free(gm);
	grouper__free(gs);
}

int main(void)
{
	test_same_place();
	test_other_places();
	test_interrupted();
	test_sorted();
	test_set_overflow();
	test_signature_text();
	test_trace_memo();
	return unit_done();
}
