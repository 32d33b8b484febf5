/* SPDX-License-Identifier: GPL-2.0 */
/* A reader of one CU's line program for one question: which row
 * dwarf_getsrc_die() gives for an address. libdw 0.188 answers it by
 * decoding the whole program into a list allocated a row at a time and
 * sorting it; over a distribution vmlinux that was two thirds of a cold
 * symbolization. This reader runs the program once, keeping only the row
 * libdw's sort and binary search would pick, and the file table. Anything
 * it does not know the way libdw does (64-bit DWARF, other forms, data
 * libdw would refuse) is left to libdw. Used by ksym.c only.
 */
#ifndef BPFSTDERR_KLINE_H
#define BPFSTDERR_KLINE_H

#include <stdint.h>
#include <elfutils/libdw.h>

struct kline;

struct kline_row {
	uint64_t file;		/* index in the CU's file table */
	int line;
	int col;
};

/* The raw sections of dw; NULL when they cannot be read as they are. */
struct kline *kline__new(Dwarf *dw);
/* 1: the row of pc in cu's line program (what dwarf_getsrc_die(cu, pc)
 * would give), 0: none (it gives NULL), -errno: this reader cannot tell
 * (ask libdw).
 */
int kline__lookup(struct kline *kl, Dwarf_Die *cu, Dwarf_Addr pc, struct kline_row *row);
/* The name of file idx of the last lookup's CU, as dwarf_linesrc() and
 * dwarf_filesrc() give it; NULL when out of range. Valid until the next
 * call.
 */
const char *kline__file(struct kline *kl, uint64_t idx);
void kline__free(struct kline *kl);

#endif
