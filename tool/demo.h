/* SPDX-License-Identifier: GPL-2.0 */
/* `top --demo`: the bundled misbehaving programs, triggered every second. */
#ifndef BPFSTDERR_DEMO_H
#define BPFSTDERR_DEMO_H

struct demo;

/* Loads every fault source this host allows and starts triggering them.
 * Fails only when no source at all can load, with the first refusal.
 */
int demo__start(struct demo **out);
/* One line naming the sources this host refused and why, or NULL. */
const char *demo__notice(const struct demo *d);
void demo__stop(struct demo *d);

#endif
