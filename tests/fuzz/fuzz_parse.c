// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: arbitrary bytes through the reassembler (split into
 * reads of a size taken from the input), every fault through the parser,
 * the grouping signature and the JSON renderer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "group.h"
#include "reasm.h"
#include "render.h"

static int on_event(const struct event *ev, void *ctx)
{
	struct json_object *o;
	char *sig;

	(void)ctx;
	if (ev->kind != EV_FAULT)
		return 0;
	sig = fault_signature(ev->fault);
	free(sig);
	o = fault_json(NULL, NULL, ev->fault);
	json_object_to_json_string(o);
	json_object_put(o);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reasm *r;
	size_t chunk, off;
	int stream;

	if (size < 2)
		return 0;
	chunk = data[0] ? data[0] : 4096;
	stream = data[1] & 1 ? 2 : 1;
	data += 2;
	size -= 2;
	r = reasm__new(stream, on_event, NULL);
	if (!r)
		return 0;
	for (off = 0; off < size; off += chunk)
		reasm__feed(r, data + off, size - off < chunk ? size - off : chunk);
	reasm__flush(r);
	reasm__free(r);
	return 0;
}
