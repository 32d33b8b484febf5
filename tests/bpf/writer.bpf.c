// SPDX-License-Identifier: GPL-2.0
/* Test program: `count` writes of msg to a stream, each return recorded,
 * so tests know exactly how many bytes were offered and what the kernel said.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "stream_printk.h"

#define MAX_WRITES 256

int stream_id = STREAM_STDOUT;
int count;
int oversize;	/* write "%2000d": longer than the print buffer, refused */
int ret[MAX_WRITES];
char msg[1024];

SEC("syscall")
int writer(void *ctx)
{
	__u64 args[1] = { (unsigned long)msg };
	__u64 num[1] = { 7 };
	int i;

	for (i = 0; i < MAX_WRITES && i < count; i++)
		ret[i] = oversize ? stream_vprintk(stream_id, "%2000d", num, sizeof(num)) :
				    stream_vprintk(stream_id, "%s", args, sizeof(args));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
