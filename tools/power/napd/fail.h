/* SPDX-License-Identifier: GPL-2.0 */
/* fail(): the error message of a function that reports into a buffer. */
#ifndef NAPD_FAIL_H
#define NAPD_FAIL_H

#include <stddef.h>

#include "compiler.h"

/* Format the message into @err (@errlen bytes); returns -1. */
__printf(3, 4)
int fail(char *err, size_t errlen, const char *fmt, ...);

#endif
