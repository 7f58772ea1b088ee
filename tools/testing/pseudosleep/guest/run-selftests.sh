#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run every kselftest binary in /selftests; each prints its own KTAP.
# A line "# selftest: NAME" separates them for the host-side parser.
for t in /selftests/*; do
	[ -x "$t" ] || continue
	echo "# selftest: $(basename "$t")"
	"$t"
	echo "# exit: $(basename "$t") $?"
done
