/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel helpers napd uses, under the kernel's names, defined once
 * here: napd builds on its own, for the initramfs and its Debian package,
 * without tools/include, whose <linux/compiler.h> and <linux/kernel.h>
 * these follow.
 */
#ifndef NAPD_COMPILER_H
#define NAPD_COMPILER_H

/* Argument @a is a printf format for the arguments from @b on. */
#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

/* 0, or a build error when @e is true: usable inside an expression. */
#define BUILD_BUG_ON_ZERO(e)	((int)(sizeof(struct { int:(-!!(e)); })))

/* A build error when @a is a pointer rather than an array. */
#define __must_be_array(a)	\
	BUILD_BUG_ON_ZERO(__builtin_types_compatible_p(__typeof__(a), \
						       __typeof__(&(a)[0])))

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]) + __must_be_array(a))

#endif /* NAPD_COMPILER_H */
