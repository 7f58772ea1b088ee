# SPDX-License-Identifier: GPL-2.0
"""benchlib: the experiments of tools/testing/pseudosleep/bench.

common   guest boot, host CPU time of QEMU, statistics, CSV
wake     1. wake latency of HTTP requests per sleep mode
idle     2. idle cost: host CPU and guest interrupts per second
polling  3. polling idle driver vs HLT vs idle=poll: latency, throughput
density  4. request size x load density (server-power-http-kvs Tables 1-2)
plot     gnuplot scripts and PNGs
report   results/REPORT.md and results/README-table.md
"""
