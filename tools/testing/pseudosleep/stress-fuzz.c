// SPDX-License-Identifier: GPL-2.0
/*
 * stress-fuzz: hostile writes to the pseudo-sleep and pollist sysfs files.
 *
 * Usage: stress-fuzz [-n WRITES] [-s SEED] [-j JOBS] [-k KEEP] [-r] TARGET...
 * A TARGET is KIND:PATH with KIND one of
 *   irqlist        /sys/power/wake_irq (bitmap list of armed IRQs)
 *   bool           a power/nosleep file (strict whole-word boolean)
 *   memsleep       /sys/power/mem_sleep
 *   uint:LO:HI     a pollist parameter (kstrtouint base 0, range LO..HI)
 *   ro             a read-only file: every write must fail
 *
 * Each write is one write(2) of a generated input: random bytes (up to and
 * past a page), boundary numbers, valid values, whitespace and NUL
 * variants.  Around each write the file is read: a rejected write must
 * leave it unchanged; an accepted one must read back in canonical form
 * (and, where the input is a plain value, as that value).  Where the
 * accepted language is documented exactly, acceptance must match it.
 *
 * -j JOBS forks JOBS writers, one target each (round robin), then a storm
 * of JOBS writers on the first target without per-write checks, whose end
 * state must still be canonical.  -r (race mode, used while naps run)
 * keeps naps wakeable: irqlist values always include KEEP (-k LIST),
 * memsleep only gets "pseudo" or garbage, bool files only "1" or garbage.
 * Last, a child that dropped to uid/gid 65534 must be refused every write.
 *
 * Prints "FUZZ writes=N accepted=N rejected=N violations=N" and exits 1
 * on any violation, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum kind { K_IRQ, K_BOOL, K_MEMSLEEP, K_UINT, K_RO };

struct target {
	enum kind kind;
	const char *path;
	unsigned long lo, hi;
	char orig[8192];
};

#define MAXT 32
static struct target tg[MAXT];
static int ntg;
static unsigned long long rng;
static const char *keep = "";
static int race;
static long n_writes, n_acc, n_rej, n_viol;

static unsigned int rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng >> 11);
}

static void usage(void)
{
	fprintf(stderr, "usage: stress-fuzz [-n WRITES] [-s SEED] [-j JOBS] "
		"[-k KEEP] [-r] KIND:PATH...\n"
		"  KIND: irqlist | bool | memsleep | uint:LO:HI | ro\n");
	exit(2);
}

static int rd(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, tot = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + tot, sz - 1 - tot)) > 0)
		tot += n;
	close(fd);
	buf[tot] = 0;
	return n < 0 ? -errno : (int)tot;
}

/* One write(2); returns bytes written or -errno. */
static long wr(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY);
	long r;

	if (fd < 0)
		return -errno;
	r = write(fd, buf, len);
	if (r < 0)
		r = -errno;
	close(fd);
	return r;
}

static void viol(const struct target *t, const char *what, const char *in,
		 size_t len, long r, const char *before, const char *after)
{
	char shown[64];
	size_t i, k = 0;

	for (i = 0; i < len && k < sizeof(shown) - 5; i++)
		k += snprintf(shown + k, sizeof(shown) - k,
			      isprint((unsigned char)in[i]) ? "%c" : "\\x%02x",
			      (unsigned char)in[i]);
	n_viol++;
	if (n_viol <= 20)
		printf("FUZZ-VIOLATION %s: %s: input[%zu]=\"%s%s\" ret=%ld "
		       "before=\"%.40s\" after=\"%.40s\"\n", t->path, what, len,
		       shown, i < len ? "..." : "", r, before, after);
}

/* Canonical bitmap list: ascending, disjoint, non-adjacent ranges. */
static int irq_canonical(const char *s)
{
	long prev = -2, a, b;
	char *e;

	if (!strcmp(s, "\n"))
		return 1;
	while (*s && *s != '\n') {
		if (!isdigit((unsigned char)*s))
			return 0;
		a = strtol(s, &e, 10);
		b = a;
		if (*e == '-') {
			b = strtol(e + 1, &e, 10);
			if (b <= a)
				return 0;
		}
		if (a <= prev + 1)
			return 0;
		prev = b;
		if (*e == ',')
			e++;
		else if (*e != '\n')
			return 0;
		s = e;
	}
	return !strcmp(s, "\n");
}

/* A plain list "a,b-c" without the :used/group and N forms: its set as a
 * canonical string, or NULL when the input is not such a list. */
static char *irq_plain_canon(const char *in, size_t len, char *out, size_t osz)
{
	static unsigned char set[65536];
	char buf[4096], *s, *e;
	long a, b, i, max = -1;
	size_t k = 0;

	if (len >= sizeof(buf) || memchr(in, 0, len))
		return NULL;
	memcpy(buf, in, len);
	buf[len] = 0;
	if (len && buf[len - 1] == '\n')
		buf[--len] = 0;
	memset(set, 0, sizeof(set));
	for (s = buf; *s;) {
		if (!isdigit((unsigned char)*s))
			return NULL;
		a = strtol(s, &e, 10);
		b = a;
		if (*e == '-') {
			if (!isdigit((unsigned char)e[1]))
				return NULL;
			b = strtol(e + 1, &e, 10);
		}
		if (b < a || b >= (long)sizeof(set) || (*e && *e != ','))
			return NULL;
		for (i = a; i <= b; i++)
			set[i] = 1;
		if (b > max)
			max = b;
		s = *e ? e + 1 : e;
		if (*e && !*s)
			return NULL;
	}
	out[0] = 0;
	for (i = 0; i <= max; i++) {
		if (!set[i])
			continue;
		for (b = i; b + 1 <= max && set[b + 1]; b++)
			;
		k += snprintf(out + k, osz - k, k ? ",%ld" : "%ld", i);
		if (b > i)
			k += snprintf(out + k, osz - k, "-%ld", b);
		i = b;
	}
	snprintf(out + k, osz - k, "\n");
	return out;
}

static const char *bool_words[][2] = {
	{ "0", "1" }, { "n", "y" }, { "N", "Y" }, { "no", "yes" },
	{ "off", "on" }, { "false", "true" },
};

/* Expected result of a C-string input (the kernel sees the buffer up to
 * the first NUL); -1 for not a boolean. */
/* The kernel's view of a write: the buffer up to the first NUL, less one
 * trailing newline, copied to @out.  Its length, or -1 if it does not fit. */
static long written_line(const char *in, size_t len, char *out, size_t size)
{
	size_t l = strnlen(in, len);

	if (l >= size)
		return -1;
	memcpy(out, in, l);
	out[l] = 0;
	if (l && out[l - 1] == '\n')
		out[--l] = 0;
	return l;
}

static int bool_expect(const char *in, size_t len)
{
	char s[64];
	unsigned int i, j;

	if (written_line(in, len, s, sizeof(s)) < 0)
		return -1;
	for (i = 0; i < sizeof(bool_words) / sizeof(bool_words[0]); i++)
		for (j = 0; j < 2; j++)
			if (!strcmp(s, bool_words[i][j]))
				return j;
	return -1;
}

/* kstrtouint(s, 0): optional '+', 0x hex / 0 octal / decimal, one
 * trailing newline.  Returns 0 and *v, or -1. */
static int kstrtouint_model(const char *in, size_t len, unsigned long *v)
{
	static char s[4200];
	unsigned long long x = 0;
	unsigned int base = 10, d;
	char *p;

	if (written_line(in, len, s, sizeof(s)) < 0)
		return -1;
	p = s;
	if (*p == '+')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    isxdigit((unsigned char)p[2])) {
		base = 16;
		p += 2;
	} else if (p[0] == '0') {
		base = 8;
	}
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (isxdigit((unsigned char)*p))
			d = tolower((unsigned char)*p) - 'a' + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		x = x * base + d;
		if (x > UINT_MAX)
			return -1;
	}
	*v = x;
	return 0;
}

static const char *nic_first(void)
{
	static char b[32];
	size_t n = strspn(keep, "0123456789");

	snprintf(b, sizeof(b), "%.*s", (int)n, keep);
	return b;
}

/* Fill buf with an input for target t; returns its length. */
static size_t gen(const struct target *t, char *buf, size_t sz)
{
	static const char *bounds[] = {
		"0", "1", "-1", "-0", "+1", "4294967295", "4294967296",
		"18446744073709551615", "18446744073709551616", "2147483648",
		"0x0", "0xffffffff", "0x100000000", "010", "09", "0-", "-",
		"1-0", "0-0", "0,", ",0", ",", "0,,1", "N", "0-N", "0-1:1/2",
		"0-31:0/1", "0-31:2/0", "0-31:33/1", "1:1", "7 ", " 7", "7\n\n",
		"\n", "", "\t1", "1\r", "yes\n", "yes ", "YES", "True", "t",
		"onn", "10", "00", "s2idle", "deep", "pseudo", "pseudo\n",
		"pseudo\nxx", "pseudoo", "[pseudo]", "mem", "freeze",
		"10000000", "10000001", "999", "1000", "16", "17", "0x10",
		"0x11", "1e3", "1.5", "65535", "65536", "1024-1030",
	};
	unsigned int c = rnd() % 12, i;
	size_t len;

	switch (c) {
	case 0:	/* random bytes, short */
	case 1:
		len = 1 + rnd() % 64;
		for (i = 0; i < len; i++)
			buf[i] = rnd();
		return len;
	case 2:	/* random bytes around and past a page */
		len = 4090 + rnd() % 1200;
		if (rnd() % 3 == 0)
			len = 1 + rnd() % (sz - 1);
		for (i = 0; i < len; i++)
			buf[i] = rnd();
		return len;
	case 3:	/* long digit / list strings around a page */
		len = 4094 + rnd() % 5;
		for (i = 0; i < len; i++)
			buf[i] = rnd() % 4 ? '0' + rnd() % 10 : ',';
		if (rnd() % 2)
			memset(buf, '0', len - 1), buf[len - 1] = '1';
		return len;
	case 4:	/* a NUL inside */
		len = snprintf(buf, sz, "%s", bounds[rnd() % (sizeof(bounds) /
							     sizeof(bounds[0]))]);
		buf[len++] = 0;
		len += snprintf(buf + len, sz - len, "junk");
		return len;
	case 5:
	case 6:
	case 7:
		return snprintf(buf, sz, "%s", bounds[rnd() % (sizeof(bounds) /
							       sizeof(bounds[0]))]);
	default: /* a valid value of the kind */
		switch (t->kind) {
		case K_IRQ:
			if (race || rnd() % 2)
				return snprintf(buf, sz, "%s%s\n", keep,
						rnd() % 2 ? "" : ",0");
			return snprintf(buf, sz, "%s\n", rnd() % 3 ?
					nic_first() : "");
		case K_BOOL:
			return snprintf(buf, sz, "%s\n",
					bool_words[rnd() % 6][race ? 1 :
							      rnd() % 2]);
		case K_MEMSLEEP:
			return snprintf(buf, sz, "%s\n", race ? "pseudo" :
					(const char *[]){ "s2idle", "pseudo",
							  "deep" }[rnd() % 3]);
		case K_UINT:
			return snprintf(buf, sz, "%lu\n", t->lo + rnd() %
					(t->hi - t->lo + 1));
		default:
			return snprintf(buf, sz, "1\n");
		}
	}
}

static char *canon_prefix(const char *in, size_t l, char *buf, size_t sz)
{
	snprintf(buf, sz, "%.*s", (int)l, in);
	return buf;
}

/* In race mode, inputs that would leave naps unwakeable are not sent:
 * valid values other than the safe ones, and list forms this model does
 * not evaluate (":" groups, "N"). */
static int race_unsafe(const struct target *t, const char *in, size_t len)
{
	char canon[8192];
	size_t l = strnlen(in, len);

	if (!race)
		return 0;
	switch (t->kind) {
	case K_IRQ:
		/* Only KEEP itself (plus more), or garbage that names no IRQ
		 * at all up to its first NUL (no digit, no "N"). */
		if (len >= 4096)
			return 1;
		if (!strncmp(in, keep, strlen(keep)) &&
		    (in[strlen(keep)] == ',' || in[strlen(keep)] == '\n' ||
		     strlen(keep) == len))
			return !irq_plain_canon(in, len, canon, sizeof(canon));
		canon_prefix(in, l, canon, sizeof(canon));
		return strpbrk(canon, "0123456789N") != NULL ||
			strspn(canon, " \t\n\v\f\r,") == strlen(canon);
	case K_BOOL:
		return bool_expect(in, len) == 0;
	case K_MEMSLEEP:
		return (l >= 4 && !strncmp(in, "deep", 4)) ||
			(l >= 6 && !strncmp(in, "s2idle", 6));
	default:
		return 0;
	}
}

static void check(struct target *t, const char *in, size_t len, long r,
		  const char *before, const char *after)
{
	char canon[8192], *sel;
	unsigned long v;
	int e;

	n_writes++;
	/* kernfs hands a store at most one page and reports a short write:
	 * the value is then the first page's. */
	if (len > 4096 && r == 4096)
		len = 4096;
	if (r < 0) {
		n_rej++;
		if (strcmp(before, after))
			viol(t, "rejected write changed the value", in, len, r,
			     before, after);
	} else {
		n_acc++;
		if ((size_t)r != len)
			viol(t, "short accept", in, len, r, before, after);
	}
	switch (t->kind) {
	case K_RO:
		if (r >= 0)
			viol(t, "read-only file accepted a write", in, len, r,
			     before, after);
		return;
	case K_IRQ:
		if (r >= 0 && !irq_canonical(after))
			viol(t, "not canonical", in, len, r, before, after);
		if (len < 4096 && irq_plain_canon(in, len, canon,
						   sizeof(canon)) &&
		    r >= 0 && strcmp(after, canon))
			viol(t, "read back differs from input", in, len, r,
			     before, after);
		return;
	case K_BOOL:
		if (strcmp(after, "0\n") && strcmp(after, "1\n"))
			viol(t, "not 0 or 1", in, len, r, before, after);
		if (len >= 4096)
			return;
		e = bool_expect(in, len);
		if ((e < 0) != (r < 0))
			viol(t, e < 0 ? "accepted a non-boolean" :
			     "refused a boolean", in, len, r, before, after);
		else if (r >= 0 && after[0] - '0' != e)
			viol(t, "wrong value", in, len, r, before, after);
		return;
	case K_MEMSLEEP:
		sel = strchr(after, '[');
		if (!sel || !strchr(sel, ']'))
			viol(t, "no selection", in, len, r, before, after);
		else if (r >= 0 && (strncmp(sel + 1, in, strcspn(sel + 1, "]"))
				    || strcspn(sel + 1, "]") !=
				    strcspn(in, "\n")))
			viol(t, "selection differs from input", in, len, r,
			     before, after);
		return;
	case K_UINT:
		v = strtoul(after, &sel, 10);
		if (!isdigit((unsigned char)after[0]) || strcmp(sel, "\n") ||
		    v < t->lo || v > t->hi)
			viol(t, "not a decimal in range", in, len, r, before,
			     after);
		if (len >= 4096)
			return;
		e = kstrtouint_model(in, len, &v) == 0 && v >= t->lo &&
			v <= t->hi;
		if (e != (r >= 0))
			viol(t, e ? "refused a valid number" :
			     "accepted an invalid number", in, len, r, before,
			     after);
		else if (r >= 0 && strtoul(after, NULL, 10) != v)
			viol(t, "wrong value", in, len, r, before, after);
		return;
	}
}

static void fuzz(int *idx, int nidx, long n, int checked)
{
	static char in[8192], before[8192], after[8192];
	struct target *t;
	size_t len;
	long i, r;

	for (i = 0; i < n; i++) {
		t = &tg[idx[rnd() % nidx]];
		do	/* a 0-byte write never reaches the store: not a test */
			len = gen(t, in, sizeof(in));
		while (!len || race_unsafe(t, in, len));
		if (checked)
			rd(t->path, before, sizeof(before));
		r = wr(t->path, in, len);
		if (!checked)
			continue;
		rd(t->path, after, sizeof(after));
		check(t, in, len, r, before, after);
	}
}

/* Run fn in JOBS children; their counters come back through a pipe. */
static void in_children(int jobs, long n, int storm)
{
	int p[2], j, k, idx;
	long c[4];

	if (pipe(p))
		exit(1);
	for (j = 0; j < jobs; j++) {
		if (fork() == 0) {
			close(p[0]);
			rng += 0x9e3779b97f4a7c15ULL * (j + 1 + storm * 64);
			idx = storm ? 0 : j % ntg;
			n_writes = n_acc = n_rej = n_viol = 0;
			fuzz(&idx, 1, n / jobs, !storm);
			if (storm)
				n_writes = n / jobs;
			c[0] = n_writes, c[1] = n_acc, c[2] = n_rej;
			c[3] = n_viol;
			if (write(p[1], c, sizeof(c)) != sizeof(c))
				_exit(1);
			fflush(stdout);
			_exit(0);
		}
	}
	close(p[1]);
	for (k = 0; k < jobs && read(p[0], c, sizeof(c)) == sizeof(c); k++) {
		n_writes += c[0], n_acc += c[1], n_rej += c[2], n_viol += c[3];
	}
	close(p[0]);
	while (wait(NULL) > 0)
		;
	if (k != jobs) {
		printf("FUZZ-VIOLATION a writer died\n");
		n_viol++;
	}
}

static void unprivileged(void)
{
	char before[8192], after[8192];
	int i, st;
	pid_t pid;
	long r;

	for (i = 0; i < ntg; i++) {
		rd(tg[i].path, before, sizeof(before));
		pid = fork();
		if (pid == 0) {
			if (setgroups(0, NULL))
				_exit(3);
			if (setgid(65534) || setuid(65534))
				_exit(3);
			r = wr(tg[i].path, tg[i].kind == K_IRQ ? "\n" : "1\n",
			       tg[i].kind == K_IRQ ? 1 : 2);
			_exit(r >= 0 ? 1 : (r == -EACCES || r == -EPERM) ?
			      0 : 4);
		}
		waitpid(pid, &st, 0);
		rd(tg[i].path, after, sizeof(after));
		n_writes++;
		n_rej++;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
		    strcmp(before, after)) {
			n_viol++;
			printf("FUZZ-VIOLATION %s: uid 65534: status %d, "
			       "value %s\n", tg[i].path, WEXITSTATUS(st),
			       strcmp(before, after) ? "changed" : "kept");
		}
	}
}

int main(int argc, char **argv)
{
	long n = 1000;
	int jobs = 1, opt, i, all[MAXT];
	char *e, *c;

	rng = 20261121;
	while ((opt = getopt(argc, argv, "n:s:j:k:r")) != -1) {
		switch (opt) {
		case 'n':
			n = strtol(optarg, &e, 10);
			if (*e || n < 1)
				usage();
			break;
		case 's':
			rng = strtoull(optarg, &e, 10) | 1;
			if (*e)
				usage();
			break;
		case 'j':
			jobs = strtol(optarg, &e, 10);
			if (*e || jobs < 1 || jobs > 64)
				usage();
			break;
		case 'k':
			keep = optarg;
			break;
		case 'r':
			race = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || (race && !*keep))
		usage();
	for (i = optind; i < argc && ntg < MAXT; i++) {
		struct target *t = &tg[ntg];

		c = strchr(argv[i], ':');
		if (!c)
			usage();
		*c = 0;
		t->path = c + 1;
		if (!strcmp(argv[i], "irqlist")) {
			t->kind = K_IRQ;
		} else if (!strcmp(argv[i], "bool")) {
			t->kind = K_BOOL;
		} else if (!strcmp(argv[i], "memsleep")) {
			t->kind = K_MEMSLEEP;
		} else if (!strcmp(argv[i], "ro")) {
			t->kind = K_RO;
		} else if (!strcmp(argv[i], "uint")) {
			t->kind = K_UINT;
			t->lo = strtoul(t->path, &e, 10);
			if (*e != ':')
				usage();
			t->hi = strtoul(e + 1, &e, 10);
			if (*e != ':' || t->hi < t->lo)
				usage();
			t->path = e + 1;
		} else {
			usage();
		}
		if (rd(t->path, t->orig, sizeof(t->orig)) < 0) {
			fprintf(stderr, "stress-fuzz: cannot read %s\n",
				t->path);
			return 2;
		}
		all[ntg] = ntg;
		ntg++;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Sequential, then one writer per target, then a storm. */
	fuzz(all, ntg, n / 2, 1);
	if (jobs > 1) {
		in_children(jobs, n / 4, 0);
		in_children(jobs, n - n / 2 - n / 4, 1);
		for (i = 0; i < ntg; i++) {
			char after[8192];

			rd(tg[i].path, after, sizeof(after));
			if ((tg[i].kind == K_IRQ && !irq_canonical(after)) ||
			    (tg[i].kind == K_BOOL && strcmp(after, "0\n") &&
			     strcmp(after, "1\n"))) {
				n_viol++;
				printf("FUZZ-VIOLATION %s: after storm: %s\n",
				       tg[i].path, after);
			}
		}
	} else {
		fuzz(all, ntg, n - n / 2, 1);
	}
	if (geteuid() == 0)
		unprivileged();
	/* Put every value back (mem_sleep: the selected word only). */
	for (i = 0; i < ntg; i++) {
		char *s = tg[i].orig, *b, w[64];

		if (tg[i].kind == K_RO)
			continue;
		if (tg[i].kind == K_MEMSLEEP && (b = strchr(s, '['))) {
			snprintf(w, sizeof(w), "%.*s", (int)strcspn(b + 1, "]"),
				 b + 1);
			s = w;
		}
		if (wr(tg[i].path, s, strlen(s)) < 0) {
			n_viol++;
			printf("FUZZ-VIOLATION %s: cannot restore \"%s\"\n",
			       tg[i].path, s);
		}
	}
	printf("FUZZ writes=%ld accepted=%ld rejected=%ld violations=%ld\n",
	       n_writes, n_acc, n_rej, n_viol);
	return n_viol ? 1 : 0;
}
