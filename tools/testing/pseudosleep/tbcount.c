// SPDX-License-Identifier: GPL-2.0
/*
 * tbcount: a QEMU TCG plugin that counts how often each translation block
 * runs, for nap-profile.  With -icount the guest's clock counts executed
 * instructions, so (block address, instructions, executions) is an exact
 * profile of where a nap's time goes.  At exit it writes one line per
 * block that ran: "ADDRESS INSNS COUNT" (hex, decimal, decimal) to the
 * file given as out=PATH.
 *
 * Debian ships no qemu-plugin.h, so the few entry points of the plugin
 * API (version 1, QEMU 7.2) used here are declared below.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
	enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t id, void *userdata), void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* Open addressing; a block is (address, length): QEMU may split one. */
#define NBLOCKS (1u << 22)
struct block {
	uint64_t pc;
	uint64_t insns;
	uint64_t count;
};
static struct block *blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_path = "tbcount.out";

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	uint64_t insns = qemu_plugin_tb_n_insns(tb);
	uint64_t i = ((pc * 0x9E3779B97F4A7C15ull) ^ insns) >> 42;
	struct block *b;

	pthread_mutex_lock(&lock);
	for (;; i++) {
		b = &blocks[i & (NBLOCKS - 1)];
		if (!b->insns) {
			b->pc = pc;
			b->insns = insns;
			break;
		}
		if (b->pc == pc && b->insns == insns)
			break;
	}
	pthread_mutex_unlock(&lock);
	/* -icount runs one vCPU at a time: the plain add does not race. */
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->count, 1);
}

static void dump(qemu_plugin_id_t id, void *userdata)
{
	FILE *f = fopen(out_path, "w");
	uint32_t i;

	if (!f) {
		perror(out_path);
		return;
	}
	for (i = 0; i < NBLOCKS; i++)
		if (blocks[i].count)
			fprintf(f, "%016llx %llu %llu\n",
				(unsigned long long)blocks[i].pc,
				(unsigned long long)blocks[i].insns,
				(unsigned long long)blocks[i].count);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4)) {
			fprintf(stderr, "tbcount: unknown argument %s\n", argv[i]);
			return -1;
		}
		out_path = argv[i] + 4;
	}
	blocks = calloc(NBLOCKS, sizeof(*blocks));
	if (!blocks)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, dump, NULL);
	return 0;
}
