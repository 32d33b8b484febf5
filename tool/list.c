// SPDX-License-Identifier: GPL-2.0
/* bpfstderr list: every loaded program with its stream accounting. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "main.h"
#include "output.h"
#include "privs.h"
#include "progs.h"
#include "render.h"

/* 2: streams and error_count as in top and report (see bpfstderr(8)) */
#define LIST_SCHEMA_VERSION	2

static struct {
	bool json;
} env;

static const struct argp_option opts[] = {
	{ "json", 'j', NULL, 0, "Print one JSON value", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'j':
		env.json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void print_capacity_plain(const struct prog *p, enum stream s)
{
	if (p->has_streams)
		printf(" %7d", p->capacity[stream_idx(s)]);
	else
		printf(" %7s", "-");
}

static void print_owners_plain(const struct prog *p)
{
	int i;

	for (i = 0; i < p->owner_cnt; i++) {
		printf("%s", i ? "," : " ");
		fput_term(stdout, p->owners[i].comm, strlen(p->owners[i].comm));
		printf("(%d)", p->owners[i].pid);
	}
}

static void print_plain(const struct prog_list *l)
{
	const struct prog *p;
	size_t i;

	printf("%6s %-20s %-16s %-24s %7s %7s %6s %s\n", "ID", "TYPE", "TAG", "NAME",
	       "OUT_B", "ERR_B", "ERRORS", "OWNERS");
	for (i = 0; i < l->cnt; i++) {
		p = &l->progs[i];
		printf("%6u %-20s %-16s ", p->ident.id, prog_type_name(p->ident.type), p->ident.tag);
		fput_term(stdout, p->ident.name, strlen(p->ident.name));
		printf("%*s", (int)(strlen(p->ident.name) < 24 ? 24 - strlen(p->ident.name) : 0), "");
		print_capacity_plain(p, STREAM_STDOUT);
		print_capacity_plain(p, STREAM_STDERR);
		if (p->has_error_count)
			printf(" %6lld", p->error_count);
		else
			printf(" %6s", "-");
		print_owners_plain(p);
		printf("\n");
	}
}

static struct json_object *prog_json(const struct prog *p)
{
	struct json_object *o = json_object_new_object();

	prog_ident_json(o, &p->ident, true);
	json_add_int(o, "loaded_at", p->loaded_at);
	json_add_int(o, "uid", p->uid);
	json_add_int(o, "btf_id", p->btf_id);
	json_add_int(o, "bytes_xlated", p->xlated_len);
	json_add_int(o, "bytes_jited", p->jited_len);
	/* list reads no stream: read and lost bytes are not known */
	json_object_object_add(o, "streams", streams_json(p->has_streams, p->capacity, NULL, NULL,
			       p->has_drops ? &(struct stream_drops){ p->dropped_msgs, p->dropped_bytes } : NULL));
	json_object_object_add(o, "error_count", error_count_json(p->has_error_count, p->error_count));
	json_object_object_add(o, "pids", owners_json(p->owners, p->owner_cnt));
	return o;
}

static int print_json(const struct prog_list *l)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;
	int err;

	json_add_int(o, "schema_version", LIST_SCHEMA_VERSION);
	for (i = 0; i < l->cnt; i++)
		json_object_array_add(arr, prog_json(&l->progs[i]));
	json_object_object_add(o, "programs", arr);
	err = json_print(o, stdout);
	json_object_put(o);
	return err;
}

int do_list(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc =
		"List every loaded BPF program with the bytes accounted to its streams.",
	};
	struct prog_list l = {};
	struct progs *progs;
	const char *cap;
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	cap = missing_cap();
	if (cap) {
		p_err("listing programs needs %s", cap);
		return EXIT_NOPERM;
	}
	err = progs__open(&progs);
	if (err)
		return exit_for_errno(err, "cannot load the program iterator");
	err = progs__snapshot(progs, &l, PROGS_OWNERS);
	progs__close(progs);
	if (err)
		return exit_for_errno(err, "cannot enumerate programs");
	err = env.json ? print_json(&l) : (print_plain(&l), 0);
	prog_list__free(&l);
	return err ? EXIT_ERROR : EXIT_OK;
}
