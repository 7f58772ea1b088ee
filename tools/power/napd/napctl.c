// SPDX-License-Identifier: GPL-2.0
/*
 * napctl - ask or tell a running napd through its status socket.
 *
 *   napctl [--socket PATH] status | pause [DURATION] | resume
 *
 * "pause" holds naps off until "resume", or for DURATION (500ms, 5s,
 * 10min, 2h): for a backup, a deploy, an upgrade.  The socket admits root
 * and napd's socket-group.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "opts.h"

#define NAPCTL_TIMEOUT_S	30
#define PAUSE_MS_MAX		(30 * 86400000UL)

static const char usage[] =
"Usage: napctl [--socket PATH] status\n"
"       napctl [--socket PATH] pause [DURATION]\n"
"       napctl [--socket PATH] resume\n"
"\n"
"Ask or tell the running napd(8).\n"
"\n"
"  status            print napd's state as one JSON line\n"
"  pause [DURATION]  no naps until resume, or for DURATION (500ms, 5s,\n"
"                    10min, 2h; up to 30 days)\n"
"  resume            nap again\n"
"  --socket PATH     napd's status socket (default /run/napd.sock)\n";

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "napctl: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n\n%s", usage);
	return 2;
}

int main(int argc, char *argv[])
{
	const char *path = NAPD_SOCKET_DEFAULT, *cmd;
	char req[64], why[PATH_MAX + 256], answer[4096];
	unsigned long ms;
	FILE *out;
	size_t len;
	int i = 1, ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--socket")) {
		path = argv[2];
		i = 3;
	} else if (argc > 1 && !strncmp(argv[1], "--socket=", 9)) {
		path = argv[1] + 9;
		i = 2;
	}
	if (i >= argc)
		return bad_usage("no command%s", "");
	cmd = argv[i++];
	if (!strcmp(cmd, "status") || !strcmp(cmd, "resume")) {
		if (i < argc)
			return bad_usage("%s takes no argument", cmd);
		snprintf(req, sizeof(req), "%s", cmd);
	} else if (!strcmp(cmd, "pause")) {
		if (i + 1 < argc)
			return bad_usage("pause takes one DURATION at most%s", "");
		if (i < argc &&
		    (napd_parse_duration_ms(argv[i], PAUSE_MS_MAX, &ms) || !ms))
			return bad_usage("bad DURATION '%s' (500ms, 5s, 10min, 2h; up to 30 days)",
					 argv[i]);
		if (i < argc)
			snprintf(req, sizeof(req), "pause %lums", ms);
		else
			snprintf(req, sizeof(req), "pause");
	} else {
		return bad_usage("unknown command '%s'", cmd);
	}

	out = fmemopen(answer, sizeof(answer) - 1, "w");
	if (!out) {
		perror("napctl: fmemopen");
		return 1;
	}
	ret = ctl_query(path, req, out, NAPCTL_TIMEOUT_S);
	len = ftell(out);
	fclose(out);
	answer[len < sizeof(answer) ? len : sizeof(answer) - 1] = '\0';
	if (ret) {
		ctl_explain(path, ret, NAPCTL_TIMEOUT_S, why, sizeof(why));
		fprintf(stderr, "napctl: %s\n", why);
		return 1;
	}
	if (strstr(answer, "{\"error\":")) {
		fprintf(stderr, "napctl: napd says: %s", answer);
		return 1;
	}
	fputs(answer, stdout);
	return 0;
}
