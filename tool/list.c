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

static void print_capacity_plain(const struct prog *p, int s)
{
	if (p->has_streams)
		printf(" %7d", p->capacity[s]);
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
		printf("%6u %-20s %-16s ", p->id, prog_type_name(p->type), p->tag);
		fput_term(stdout, p->full_name, strlen(p->full_name));
		printf("%*s", (int)(strlen(p->full_name) < 24 ? 24 - strlen(p->full_name) : 0), "");
		print_capacity_plain(p, 0);
		print_capacity_plain(p, 1);
		if (p->has_error_count)
			printf(" %6lld", p->error_count);
		else
			printf(" %6s", "-");
		print_owners_plain(p);
		printf("\n");
	}
}

static struct json_object *owners_json(const struct prog *p)
{
	struct json_object *arr = json_object_new_array(), *o;
	int i;

	for (i = 0; i < p->owner_cnt; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(p->owners[i].pid));
		json_add_bytes(o, "comm", p->owners[i].comm, strlen(p->owners[i].comm));
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *streams_json(const struct prog *p)
{
	static const char *const names[STREAM_CNT] = { "stdout", "stderr" };
	struct json_object *o, *s;
	int i;

	if (!p->has_streams)
		return NULL;
	o = json_object_new_object();
	for (i = 0; i < STREAM_CNT; i++) {
		s = json_object_new_object();
		json_object_object_add(s, "capacity", json_object_new_int(p->capacity[i]));
		json_object_object_add(s, "full", json_object_new_boolean(
			stream_full(p->capacity[i])));
		json_object_object_add(o, names[i], s);
	}
	return o;
}

static struct json_object *prog_json(const struct prog *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int64(p->id));
	json_object_object_add(o, "type", json_object_new_string(prog_type_name(p->type)));
	json_add_bytes(o, "name", p->full_name, strlen(p->full_name));
	json_object_object_add(o, "tag", json_object_new_string(p->tag));
	json_object_object_add(o, "loaded_at", json_object_new_int64(p->loaded_at));
	json_object_object_add(o, "uid", json_object_new_int64(p->uid));
	json_object_object_add(o, "btf_id", json_object_new_int64(p->btf_id));
	json_object_object_add(o, "bytes_xlated", json_object_new_int64(p->xlated_len));
	json_object_object_add(o, "bytes_jited", json_object_new_int64(p->jited_len));
	json_object_object_add(o, "streams", streams_json(p));
	json_object_object_add(o, "error_count",
			       p->has_error_count ? json_object_new_int64(p->error_count) : NULL);
	json_object_object_add(o, "pids", owners_json(p));
	return o;
}

static int print_json(const struct prog_list *l)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;
	int err;

	json_object_object_add(o, "schema_version", json_object_new_int(1));
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
