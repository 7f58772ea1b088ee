// SPDX-License-Identifier: GPL-2.0
/* Small sysfs and procfs helpers shared by the pseudo-sleep selftests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pseudosleep_util.h"

int ps_read(const char *path, char *buf, int len)
{
	int fd, n;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

int ps_write(const char *path, const char *str)
{
	int fd, ret = 0;
	size_t len = strlen(str);

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, str, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

long long ps_read_num(const char *path)
{
	char buf[64], *end;
	long long v;

	if (ps_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return -1;
	return v;
}

int ps_find_irq(const char *name)
{
	char line[1024];
	int irq = -1;
	FILE *f;

	f = fopen("/proc/interrupts", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long n = strtol(line, &end, 10);

		if (end == line || *end != ':')
			continue;
		if (strstr(end, name)) {
			irq = n;
			break;
		}
	}
	fclose(f);
	return irq;
}

int ps_irq_without_handler(void)
{
	char path[300], buf[256];
	struct dirent *de;
	int irq = -1;
	DIR *d;

	d = opendir("/sys/kernel/irq");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/irq/%s/actions",
			 de->d_name);
		if (ps_read(path, buf, sizeof(buf)) == 0) {
			irq = atoi(de->d_name);
			break;
		}
	}
	closedir(d);
	return irq;
}

bool ps_have_pseudosleep(void)
{
	return access(PS_STATS "naps", R_OK) == 0;
}
