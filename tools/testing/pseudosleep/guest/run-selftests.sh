#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# run-selftests.sh [NAME...]: run the named kselftest binaries of
# /selftests (default: all); each prints its own KTAP.  A line
# "# selftest: NAME" separates them for the host-side parser.
cd /selftests || exit 1
[ $# -gt 0 ] || set -- *
for t in "$@"; do
	t=/selftests/$t
	[ -x "$t" ] || continue
	echo "# selftest: $(basename "$t")"
	"$t"
	echo "# exit: $(basename "$t") $?"
done
