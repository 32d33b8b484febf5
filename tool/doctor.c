// SPDX-License-Identifier: GPL-2.0
/* bpfstderr doctor: what this kernel and host support, measured. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <json-c/json.h>

#include "debuginfo.h"
#include "faultsrc.h"
#include "health.h"
#include "fill.h"
#include "journal_cli.h"
#include "kbtf.h"
#include "main.h"
#include "output.h"
#include "privs.h"
#include "progs.h"
#include "render.h"
#include "stream.h"

struct doctor {
	struct utsname uts;
	bool btf;
	bool read_cmd;
	bool rfc_kfuncs;
	bool pollable;
	enum stream_backend backend;
	struct fault_probe {
		bool reported;		/* the kernel writes a report (BTF) */
		struct fault_refusal why;	/* why.err 0: this host can produce it */
	} faults[FAULT_SRC_PRINT];
	struct stream_health health;
	bool kallsyms;
	struct vmlinux_info vmlinux;
	bool cap_sys_admin, cap_bpf, cap_perfmon;
	char bpffs[256];
	/* how drainers learn that the program list changed: "watch", or a
	 * walk every cycle and why (list_err: the watch's refusal)
	 */
	const char *list_mode;
	int list_err;
	/* how a drain comes before a stream fills: the fill wake's kfunc
	 * (fill_err 0), or why it was refused
	 */
	int fill_err;
	/* other readers (readers.h): seen (readers_err 0), or why not */
	int readers_err;
	const char *journal_path;	/* NULL: --no-journal */
	struct journal_info journal;
	const char *problem;	/* why bpfstderr cannot work here, or NULL */
	const char *caveat;	/* what is not known to work, or NULL */
	/* why bpfstderr runs but no content will show (the write probe's
	 * result), or empty
	 */
	char blind[384];
	int exit_code;
};

static struct {
	bool json;
	const char *vmlinux;
} env;

static const struct argp_option opts[] = {
	{ "json", 'j', NULL, 0, "Print one JSON value", 0 },
	{ "vmlinux", 'k', "PATH", 0, "Check this vmlinux instead of searching", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'j':
		env.json = true;
		break;
	case 'k':
		env.vmlinux = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The watch as a drainer would set it up (progs__watch()). */
static void probe_list_mode(struct doctor *d)
{
	struct progs *p;

	d->list_mode = "walk";
	d->list_err = progs__open(&p);
	if (d->list_err)
		return;
	d->list_err = progs__watch(p);
	d->list_mode = d->list_err == -ECANCELED ? "walk (BPFSTDERR_FULL_WALK)" : progs__mode(p);
	d->fill_err = progs__fill_err(p);
	d->readers_err = progs__readers_err(p);
	progs__close(p);
}

/* Readable means real addresses: with kptr_restrict they read as zeros. */
static bool kallsyms_readable(void)
{
	unsigned long long addr = 0;
	char line[256];
	bool ok = false;
	FILE *f;
	int i;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return false;
	for (i = 0; i < 16 && fgets(line, sizeof(line), f); i++) {
		if (sscanf(line, "%llx", &addr) == 1 && addr) {
			ok = true;
			break;
		}
	}
	fclose(f);
	return ok;
}

static void find_bpffs(char *out, size_t len)
{
	char dev[256], dir[256], type[64];
	FILE *f;

	out[0] = '\0';
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return;
	while (fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "bpf")) {
			snprintf(out, len, "%s", dir);
			break;
		}
	}
	fclose(f);
}

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown errno";
}

/* What the probe's own write says the user will see: a write that
 * failed, or one that succeeded but could not be read back, means no
 * message and no fault report will show, whatever bpfstderr does.
 */
static void judge_writes(struct doctor *d)
{
	const struct stream_health *h = &d->health;
	const char *kfunc = printk_kfunc_name(h->printk_kfunc);

	switch (h->verdict) {
	case WRITE_ENOMEM:
	case WRITE_ENOSPC:
	case WRITE_FAILS:
		snprintf(d->blind, sizeof(d->blind),
			 "every stream write fails (the probe's %s returned %d, %s), so the kernel "
			 "drops every message and fault report; top and follow list the programs "
			 "but no content will ever reach them%s", kfunc, h->write_ret,
			 errno_name(-h->write_ret),
			 h->charged > 0 ? " (top counts the dropped bytes as leaked capacity)" :
			 h->charged == 0 ? " (a dropped report leaves no trace here)" : "");
		break;
	case WRITE_LOST:
		snprintf(d->blind, sizeof(d->blind),
			 "the probe's %s returned %d but reading its stream back returned %d: "
			 "another reader may be draining every stream before bpfstderr",
			 kfunc, h->write_ret, h->read_ret);
		break;
	default:
		break;
	}
}

/* How the backend was chosen, after its name on doctor's line. */
static const char *backend_how(const struct doctor *d)
{
	if (stream_backend_forced() != BACKEND_NONE)
		return " (forced: --backend or BPFSTDERR_BACKEND)";
	if (d->backend == BACKEND_UPSTREAM && d->rfc_kfuncs)
		return " (the read command; --backend rfc drains with the RFC's program)";
	if (d->backend == BACKEND_RFC)
		return " (the RFC's drain program: no read command here)";
	return "";
}

static void judge(struct doctor *d)
{
	d->exit_code = EXIT_OK;
	if (!d->btf) {
		d->problem = "the kernel has no BTF (/sys/kernel/btf/vmlinux); bpfstderr needs it";
		d->exit_code = EXIT_NOSUPPORT;
	} else if (d->backend == BACKEND_NONE && stream_backend_forced() != BACKEND_NONE) {
		d->problem = stream_backend_forced() == BACKEND_RFC ?
			     "--backend rfc: this kernel's BTF lacks the RFC drain kfuncs" :
			     "--backend upstream: this kernel has no stream read command";
		d->exit_code = EXIT_NOSUPPORT;
	} else if (d->backend == BACKEND_NONE) {
		d->problem = "this kernel has no BPF streams (Linux 6.17 or later needed)";
		d->exit_code = EXIT_NOSUPPORT;
	} else if (!d->cap_sys_admin) {
		d->problem = "CAP_SYS_ADMIN is missing: programs cannot be listed or read";
		d->exit_code = EXIT_NOPERM;
	} else if (d->health.verdict == WRITE_UNTESTED) {
		/* Reading works; whether anything is written is unknown. */
		d->caveat = "stream writes are untested (the probe program could not be loaded): "
			    "whether programs' messages and fault reports reach their streams is unknown";
	} else {
		judge_writes(d);
	}
}

/* What the kernel can report (BTF), then what this host lets a program
 * do to make it (load the source's programs): neither implies the other.
 */
static void probe_faults(struct doctor *d)
{
	int s;

	for (s = 0; s < FAULT_SRC_PRINT; s++)
		if (d->faults[s].reported)
			fault_src__probe(s, &d->faults[s].why);
}

static void examine(struct doctor *d)
{
	int s;

	uname(&d->uts);
	d->btf = kbtf() != NULL;
	d->read_cmd = kbtf_has_enum_value("bpf_cmd", "BPF_PROG_STREAM_READ_BY_FD");
	d->rfc_kfuncs = stream_rfc_kfuncs_present();
	/* No kernel has them yet; one would add a stream command beyond the read. */
	d->pollable = kbtf_enum_count_matching("bpf_cmd", "STREAM") > 1;
	d->backend = stream_backend_detect();
	d->cap_sys_admin = have_cap(CAP_SYS_ADMIN_NR);
	d->cap_bpf = have_cap(CAP_BPF_NR);
	d->cap_perfmon = have_cap(CAP_PERFMON_NR);
	for (s = 0; d->btf && s < FAULT_SRC_PRINT; s++)
		d->faults[s].reported = fault_src__kernel_reports(s);
	if (d->btf && d->cap_sys_admin) {
		stream_health__probe(&d->health);
		probe_faults(d);
		probe_list_mode(d);
	}
	d->kallsyms = kallsyms_readable();
	debuginfo__find_vmlinux(env.vmlinux, &d->vmlinux);
	find_bpffs(d->bpffs, sizeof(d->bpffs));
	d->journal_path = journal_cli__path();
	if (journal_cli__path_error()) {
		d->journal.err = -EINVAL;
		snprintf(d->journal.error, sizeof(d->journal.error), "%s", journal_cli__path_error());
	} else if (d->journal_path) {
		journal__inspect(d->journal_path, &d->journal);
	}
	judge(d);
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static void print_vmlinux_plain(const struct vmlinux_info *v)
{
	if (!v->found) {
		printf("%-22s not found in the usual places; kernel frames stay symbol+off/size.\n"
		       "%-22s Put a vmlinux with DWARF for this kernel (build-id %s) at %s, or pass --vmlinux\n",
		       "vmlinux debuginfo", "", v->kernel_id[0] ? v->kernel_id : "unknown",
		       debuginfo__search_paths()[0]);
		return;
	}
	printf("%-22s %s (%s, build-id %s)\n", "vmlinux debuginfo", v->path,
	       v->has_dwarf ? "DWARF" : "no DWARF",
	       v->id_matches ? "matches the running kernel" : "does NOT match the running kernel");
}

static void print_size(const char *label, long long bytes)
{
	printf("%s%.1f MiB", label, bytes / 1048576.0);
}

static bool journal_full(const struct journal_info *j)
{
	return j->fs_free >= 0 && j->fs_free < JOURNAL_ROOM(STREAM_READ_BUF);
}

static void print_journal_room(const struct journal_info *j)
{
	if (j->fs_free < 0)
		return;
	printf("%-22s", "");
	print_size(" file system: ", j->fs_free);
	if (journal_full(j))
		printf(" free: FULL, drainers stop reading streams until there is room (the kernel "
		       "keeps up to %d bytes per stream)\n", STREAM_MAX_CAPACITY);
	else
		printf(" free\n");
}

static void print_journal_plain(const struct doctor *d)
{
	const struct journal_info *j = &d->journal;
	struct timespec ts;
	char when[40];

	if (!d->journal_path) {
		printf("%-22s none (--no-journal)\n", "journal");
		return;
	}
	printf("%-22s ", "journal");
	fput_term(stdout, d->journal_path, strlen(d->journal_path));
	if (!j->exists && !j->err) {
		printf(": not created yet (follow, report, top or record create it)\n");
		print_journal_room(j);
		return;
	}
	if (j->err) {
		printf("\n%-22s REFUSED: ", "");
		fput_term(stdout, j->error[0] ? j->error : strerror(-j->err),
			  strlen(j->error[0] ? j->error : strerror(-j->err)));
		printf("\n%-22s follow, report, top and record will stop with exit 5; "
		       "move it away or use --journal/--no-journal\n", "");
		return;
	}
	printf(" (schema %lld)\n%-22s %lld events (%lld faults) of %lld programs, %lld unloaded\n",
	       j->version, "", j->events, j->faults, j->programs, j->unloaded);
	if (j->oldest_ns) {
		ts = (struct timespec){ j->oldest_ns / 1000000000LL, j->oldest_ns % 1000000000LL };
		format_time(&ts, when, sizeof(when), true);
		printf("%-22s oldest event %s\n", "", when);
	}
	printf("%-22s", "");
	print_size(" ", j->used_bytes);
	print_size(" in use of ", j->ret.max_size);
	printf(" (--max-size)");
	print_size(", file ", j->file_bytes);
	print_size(", WAL ", j->wal_bytes);
	if (j->ret.max_age)
		printf("; events kept %lld s (--max-age)\n", j->ret.max_age);
	else
		printf("; events kept until the size limit\n");
	printf("%-22s quick_check %s\n", "", j->check);
	if (j->mode & 077)
		printf("%-22s mode %04o: READABLE BY OTHERS; the next follow, report, top or record "
		       "makes it 0600\n", "", j->mode);
	print_journal_room(j);
}

static const char *fault_state(const struct fault_probe *f, bool probed)
{
	if (!f->reported)
		return "no";
	if (!probed)
		return "untested";
	return f->why.err ? "REFUSED" : "yes";
}

/* One line of kinds, then one line per kind this host refuses. */
static void print_faults_plain(const struct doctor *d)
{
	bool probed = d->btf && d->cap_sys_admin;
	const struct fault_refusal *why;
	int s;

	printf("%-22s", "fault reports");
	for (s = 0; s < FAULT_SRC_PRINT; s++)
		printf("%s %s %s", s ? "," : "", fault_src__name(s), fault_state(&d->faults[s], probed));
	printf("\n");
	for (s = 0; s < FAULT_SRC_PRINT; s++) {
		why = &d->faults[s].why;
		if (!why->err)
			continue;
		printf("%-22s %s: %s failed: %s (%s)%s%s\n", "", fault_src__name(s), why->step,
		       strerror(-why->err), errno_name(-why->err), why->cause[0] ? "; " : "", why->cause);
	}
}

static void print_list_mode_plain(const struct doctor *d)
{
	printf("%-22s ", "program list");
	if (!d->list_mode)
		printf("not probed\n");
	else if (!strcmp(d->list_mode, "watch"))
		printf("watched: walked when programs come or go (perf BPF events) or stream accounting changes\n");
	else if (d->list_err == -ECANCELED)
		printf("walked every cycle (BPFSTDERR_FULL_WALK is set)\n");
	else
		printf("walked every cycle: the watch was refused: %s (%s)\n", strerror(-d->list_err),
		       errno_name(-d->list_err));
}

static void print_fill_plain(const struct doctor *d)
{
	printf("%-22s ", "early drain");
	if (!d->list_mode)
		printf("not probed\n");
	else if (!d->fill_err)
		printf("woken by the kernel when a stream passes %d bytes (fexit on its pushes)\n", FILL_MARK);
	else if (d->list_err)
		printf("none: the program list is not watched; streams are drained at each interval\n");
	else
		printf("by the watch's check every %g s while streams are busy; the fill wake %s: %s (%s)\n",
		       FILL_TICK, d->fill_err == -ECANCELED ? "is off" : "was refused",
		       d->fill_err == -ECANCELED ? "BPFSTDERR_NO_FILL_WAKE is set" : strerror(-d->fill_err),
		       errno_name(-d->fill_err));
}

static void print_readers_plain(const struct doctor *d)
{
	printf("%-22s ", "other readers");
	if (!d->list_mode)
		printf("not probed\n");
	else if (!d->readers_err)
		printf("seen (fexit on the read command): streams they read are left to them, "
		       "what they read is shown (mirrored)\n");
	else
		printf("not seen: tracing the read command was refused: %s (%s); a process that "
		       "reads a stream itself misses what bpfstderr reads\n",
		       strerror(-d->readers_err), errno_name(-d->readers_err));
}

static void print_plain(const struct doctor *d)
{
	const struct stream_health *h = &d->health;

	printf("%-22s %s\n", "kernel", d->uts.release);
	printf("%-22s %s\n", "BTF", yes_no(d->btf));
	printf("%-22s %s\n", "stream read command", yes_no(d->read_cmd));
	printf("%-22s %s\n", "RFC drain kfuncs", d->rfc_kfuncs ? "yes" : "not available");
	printf("%-22s %s\n", "poll-able stream fds", yes_no(d->pollable));
	printf("%-22s %s%s\n", "stream backend", stream_backend_name(d->backend),
	       backend_how(d));
	print_faults_plain(d);
	printf("%-22s %s", "stream writes", stream_health__label(h));
	if (h->verdict != WRITE_UNTESTED && h->verdict != WRITE_UNSUPPORTED)
		printf(" (%s returned %d)", printk_kfunc_name(h->printk_kfunc), h->write_ret);
	else if (h->err)
		printf(" (probe: %s%s%s)", strerror(-h->err), h->cause[0] ? ": " : "", h->cause);
	printf("\n%-22s %s\n", "", stream_health__meaning(h));
	print_list_mode_plain(d);
	print_fill_plain(d);
	print_readers_plain(d);
	printf("%-22s %s\n", "kallsyms", d->kallsyms ? "readable" : "not readable (kptr_restrict?)");
	print_vmlinux_plain(&d->vmlinux);
	printf("%-22s CAP_SYS_ADMIN %s, CAP_BPF %s, CAP_PERFMON %s\n", "privileges",
	       yes_no(d->cap_sys_admin), yes_no(d->cap_bpf), yes_no(d->cap_perfmon));
	if (d->bpffs[0])
		printf("%-22s mounted at %s\n", "bpffs", d->bpffs);
	else
		printf("%-22s not mounted (not needed by bpfstderr; mount -t bpf bpf /sys/fs/bpf)\n", "bpffs");
	print_journal_plain(d);
	if (d->problem)
		printf("%-22s bpfstderr cannot work here: %s\n", "verdict", d->problem);
	else if (d->caveat)
		printf("%-22s bpfstderr can read streams here, but %s\n", "verdict", d->caveat);
	else if (d->blind[0])
		printf("%-22s bpfstderr runs here, but nothing will show: %s\n", "verdict", d->blind);
	else
		printf("%-22s bpfstderr can work here\n", "verdict");
}

static const char *verdict_key(enum write_health v)
{
	static const char *const keys[] = {
		[WRITE_UNTESTED] = "untested", [WRITE_UNSUPPORTED] = "unsupported",
		[WRITE_WORKS] = "works", [WRITE_ENOMEM] = "enomem",
		[WRITE_ENOSPC] = "enospc", [WRITE_LOST] = "lost",
		[WRITE_FAILS] = "fails",
	};

	return keys[v];
}

static struct json_object *health_json(const struct stream_health *h)
{
	struct json_object *o = json_object_new_object();

	json_add_str(o, "verdict", verdict_key(h->verdict));
	json_add_str(o, "kfunc", printk_kfunc_name(h->printk_kfunc));
	json_add_int(o, "write_ret", h->write_ret);
	json_add_int(o, "read_ret", h->read_ret);
	if (h->charged < 0)
		json_add_null(o, "failed_write_charged");
	else
		json_add_int(o, "failed_write_charged", h->charged);
	json_add_str(o, "meaning", stream_health__meaning(h));
	json_add_str(o, "cause", h->cause[0] ? h->cause : NULL);
	return o;
}

static struct json_object *vmlinux_json(const struct vmlinux_info *v)
{
	struct json_object *o = json_object_new_object();

	json_add_bool(o, "found", v->found);
	json_add_bytes(o, "path", v->found ? v->path : NULL, v->found ? strlen(v->path) : 0);
	json_add_str(o, "build_id", v->build_id[0] ? v->build_id : NULL);
	json_add_str(o, "kernel_build_id", v->kernel_id[0] ? v->kernel_id : NULL);
	json_add_bool(o, "matches", v->id_matches);
	json_add_bool(o, "dwarf", v->has_dwarf);
	return o;
}

static struct json_object *journal_json(const struct doctor *d)
{
	const struct journal_info *j = &d->journal;
	const char *why = j->error[0] ? j->error : strerror(-j->err);
	struct json_object *o;

	if (!d->journal_path)
		return NULL;
	o = json_object_new_object();
	json_add_bytes(o, "path", d->journal_path, strlen(d->journal_path));
	json_add_bool(o, "exists", j->exists);
	if (j->err)	/* it names the path, which may be any bytes */
		json_add_bytes(o, "error", why, strlen(why));
	else
		json_object_object_add(o, "error", NULL);
	if (j->fs_free >= 0)
		json_add_int(o, "fs_free_bytes", j->fs_free);
	json_add_bool(o, "full", journal_full(j));
	if (!j->exists || j->err)
		return o;
	json_add_int(o, "mode", j->mode);
	json_add_bool(o, "readable_by_others", j->mode & 077);
	json_add_bytes(o, "quick_check", j->check, strlen(j->check));
	json_add_int(o, "schema_version", j->version);
	json_add_int(o, "events", j->events);
	json_add_int(o, "faults", j->faults);
	json_add_int(o, "programs", j->programs);
	json_add_int(o, "unloaded_programs", j->unloaded);
	json_add_int(o, "used_bytes", j->used_bytes);
	json_add_int(o, "file_bytes", j->file_bytes);
	json_add_int(o, "wal_bytes", j->wal_bytes);
	json_add_int(o, "max_size", j->ret.max_size);
	json_add_int(o, "max_age_seconds", j->ret.max_age);
	return o;
}

/* available: the kernel reports this kind and this host can produce it;
 * null when it could not be probed (no CAP_SYS_ADMIN)
 */
static struct json_object *fault_src_json(const struct doctor *d, enum fault_src s)
{
	const struct fault_probe *f = &d->faults[s];
	bool probed = d->btf && d->cap_sys_admin;
	struct json_object *o = json_object_new_object();

	json_add_bool(o, "kernel_reports", f->reported);
	json_object_object_add(o, "available", !f->reported ? json_object_new_boolean(false) :
			       probed ? json_object_new_boolean(!f->why.err) : NULL);
	json_add_str(o, "errno", f->why.err ? errno_name(-f->why.err) : NULL);
	json_add_str(o, "refused", f->why.err ? f->why.step : NULL);
	json_add_str(o, "cause", f->why.cause[0] ? f->why.cause : NULL);
	return o;
}

static struct json_object *list_mode_json(const struct doctor *d)
{
	struct json_object *o = json_object_new_object();
	bool walk = d->list_mode && strcmp(d->list_mode, "watch");

	json_add_str(o, "mode", !d->list_mode ? NULL : walk ? "walk" : "watch");
	json_add_bool(o, "full_walk_set", d->list_err == -ECANCELED);
	json_add_str(o, "errno", walk && d->list_err && d->list_err != -ECANCELED ?
				 errno_name(-d->list_err) : NULL);
	return o;
}

static struct json_object *fill_json(const struct doctor *d)
{
	struct json_object *o = json_object_new_object();
	const char *by = !d->list_mode ? NULL : !d->fill_err ? "fill_wake" :
			 d->list_err ? "interval" : "watch_tick";

	json_add_str(o, "by", by);
	json_add_int(o, "mark_bytes", FILL_MARK);
	json_add_bool(o, "no_fill_wake_set", d->fill_err == -ECANCELED);
	json_add_str(o, "errno", d->list_mode && d->fill_err && d->fill_err != -ECANCELED ?
				 errno_name(-d->fill_err) : NULL);
	return o;
}

static struct json_object *readers_json(const struct doctor *d)
{
	struct json_object *o = json_object_new_object();

	json_add_bool(o, "seen", d->list_mode && !d->readers_err);
	json_add_str(o, "errno", d->list_mode && d->readers_err ? errno_name(-d->readers_err) : NULL);
	return o;
}

static int print_json(const struct doctor *d)
{
	struct json_object *o = json_object_new_object(), *faults, *privs;
	int err, s;

	json_add_int(o, "schema_version", 2);
	json_add_str(o, "kernel", d->uts.release);
	json_add_bool(o, "btf", d->btf);
	json_add_bool(o, "stream_read_command", d->read_cmd);
	json_add_bool(o, "rfc_drain_kfuncs", d->rfc_kfuncs);
	json_add_bool(o, "pollable_stream_fds", d->pollable);
	json_add_str(o, "backend", stream_backend_name(d->backend));
	json_add_bool(o, "backend_forced", stream_backend_forced() != BACKEND_NONE);
	faults = json_object_new_object();
	for (s = 0; s < FAULT_SRC_PRINT; s++)
		json_object_object_add(faults, fault_src__name(s), fault_src_json(d, s));
	json_object_object_add(o, "fault_reports", faults);
	json_object_object_add(o, "stream_writes", health_json(&d->health));
	json_object_object_add(o, "program_list", list_mode_json(d));
	json_object_object_add(o, "early_drain", fill_json(d));
	json_object_object_add(o, "other_readers", readers_json(d));
	json_add_bool(o, "kallsyms_readable", d->kallsyms);
	json_object_object_add(o, "vmlinux", vmlinux_json(&d->vmlinux));
	privs = json_object_new_object();
	json_add_bool(privs, "CAP_SYS_ADMIN", d->cap_sys_admin);
	json_add_bool(privs, "CAP_BPF", d->cap_bpf);
	json_add_bool(privs, "CAP_PERFMON", d->cap_perfmon);
	json_object_object_add(o, "privileges", privs);
	json_add_bytes(o, "bpffs", d->bpffs[0] ? d->bpffs : NULL, strlen(d->bpffs));
	json_object_object_add(o, "journal", journal_json(d));
	json_add_bool(o, "usable", !d->problem);
	json_add_str(o, "problem", d->problem);
	json_add_str(o, "caveat", d->caveat);
	/* null when unknown (not probed, or writes untested) */
	if (d->problem || d->caveat || d->health.verdict == WRITE_UNTESTED ||
	    d->health.verdict == WRITE_UNSUPPORTED)
		json_add_null(o, "shows_content");
	else
		json_add_bool(o, "shows_content", !d->blind[0]);
	json_add_str(o, "nothing_shows", d->blind[0] ? d->blind : NULL);
	err = json_print(o, stdout);
	json_object_put(o);
	return err;
}

int do_doctor(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.children = doctor_children,
		.doc =
		"Report what this kernel and host support for BPF streams, and the state of "
		"the journal (read only: doctor never creates it). Stream writes and fault "
		"kinds are probed by loading programs, not inferred: a kind is REFUSED when "
		"this host refuses what it needs (an arena map, say), with the errno and the "
		"likely cause. \"program list\": whether drainers walk every program only when "
		"told of a change (perf's program events and a check of stream accounting) or "
		"every cycle (BPFSTDERR_FULL_WALK=1 forces that). \"early drain\": how a stream "
		"past 25000 bytes is drained before the next interval: woken by the kernel's "
		"push (fexit; BPFSTDERR_NO_FILL_WAKE=1 turns it off) or the watch's check "
		"every 10 ms while busy. "
		"The verdict says what you will see: where the probe's own write fails (or "
		"cannot be read back), bpfstderr runs but nothing will show, and it says why.\v"
		"Exit status: 0 bpfstderr can read streams here (the verdict says when stream "
		"writes could not be tested, or fail so that nothing will show), 3 a capability is missing, "
		"4 the kernel lacks BTF or BPF streams.",
	};
	struct doctor d = {};
	int err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return EXIT_USAGE;
	examine(&d);
	if (env.json)
		err = print_json(&d);
	else
		print_plain(&d);
	return err ? EXIT_ERROR : d.exit_code;
}
