/* SPDX-License-Identifier: GPL-2.0 */
/*
 * logind "sleep" inhibitor locks (systemd-inhibit --what=sleep): while a
 * block-mode one is held, napd does not nap.
 */
#ifndef NAPD_INHIBIT_H
#define NAPD_INHIBIT_H

#include <stddef.h>

#define NAPD_INHIBIT_DIR_DEFAULT	"/run/systemd/inhibit"

/*
 * Is a block-mode sleep inhibitor held?  Reads logind's state file for
 * each lock in @dir.  1 with "WHO (pid N): WHY" in @why, 0 if none (no
 * @dir, logind not running, is none), -errno if @dir cannot be read.
 */
int inhibit_sleep_held(const char *dir, char *why, size_t size);

/*
 * Does one state file's text @text hold naps off: MODE=block and "sleep"
 * in the colon separated WHAT=?  1 with the description in @why, 0 if
 * not.  Pure, for the tests.
 */
int inhibit_parse(const char *text, char *why, size_t size);

#endif /* NAPD_INHIBIT_H */
