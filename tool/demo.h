/* SPDX-License-Identifier: GPL-2.0 */
/* `top --demo`: the bundled misbehaving programs, triggered every second. */
#ifndef BPFSTDERR_DEMO_H
#define BPFSTDERR_DEMO_H

struct demo;

#include <stddef.h>

/* Loads every fault source this host allows and starts triggering them.
 * Fails only when no source at all can load, with the first refusal's
 * -errno. why gets the sources refused, if any ("" when none).
 */
int demo__start(struct demo **out, char *why, size_t len);
/* The sources this host refused, as demo__start() said, or NULL. */
const char *demo__notice(const struct demo *d);
void demo__stop(struct demo *d);

#endif
