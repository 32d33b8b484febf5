/* SPDX-License-Identifier: GPL-2.0 */
/* record --journald: every event of the journal, once, to the systemd
 * journal as a structured entry (libsystemd's native protocol), and a
 * warning when a program starts losing reports.
 *
 * The events come from our journal, whoever drained them, after a cursor
 * kept in it (its "sinks" table). Each entry carries the event's seq and
 * the journal's id, so that at start a recorder killed between sending
 * and keeping its cursor finds in the systemd journal what it had sent.
 * While journald cannot be reached, nothing is sent and nothing is lost:
 * the events wait in our journal (within its retention).
 */
#ifndef BPFSTDERR_JOURNALD_H
#define BPFSTDERR_JOURNALD_H

struct journal;
struct pipeline;
struct journald;

/* Reads the cursor, or on the first run on this journal starts it at the
 * journal's last event: history is not sent. -errno of the journal.
 */
int journald__open(struct journald **out, struct journal *j);
/* Sends the events after the cursor, and a warning for each stream of a
 * program tracked by pl that started losing (once per program and
 * stream); keeps the cursor. journald away is said once and is not an
 * error; 0 or -errno of the journal. js NULL: nothing to do.
 */
int journald__send(struct journald *js, struct pipeline *pl);
void journald__close(struct journald *js);

#endif
