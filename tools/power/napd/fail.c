// SPDX-License-Identifier: GPL-2.0
/* fail(): the error message of a function that reports into a buffer. */
#include <stdarg.h>
#include <stdio.h>

#include "fail.h"

int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
