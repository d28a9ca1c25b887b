/* SPDX-License-Identifier: MIT */
/*
 * check.h - the unit-test harness: CHECK / CHECK_EQ print both sides and the line on failure and
 * count failures; TEST_MAIN runs the listed tests and exits nonzero if any check failed.
 */
#ifndef GPUSHIM_CHECK_H
#define GPUSHIM_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static const char *check_test = "";

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__,       \
				check_test, #cond);                                                \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long va_ = (long long)(a), vb_ = (long long)(b);                              \
		if (va_ != vb_) {                                                                  \
			fprintf(stderr, "%s:%d: %s: %s == %s failed: %lld != %lld\n", __FILE__,    \
				__LINE__, check_test, #a, #b, va_, vb_);                           \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *sa_ = (a), *sb_ = (b);                                                 \
		if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                                            \
			fprintf(stderr, "%s:%d: %s: %s == %s failed: \"%s\" != \"%s\"\n",          \
				__FILE__, __LINE__, check_test, #a, #b, sa_ ? sa_ : "(null)",      \
				sb_ ? sb_ : "(null)");                                             \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

#define RUN(fn)                                                                                    \
	do {                                                                                       \
		check_test = #fn;                                                                  \
		fn();                                                                              \
	} while (0)

#define TEST_RESULT()                                                                              \
	(check_failures ? (fprintf(stderr, "%d check(s) failed\n", check_failures), 1) : 0)

#endif /* GPUSHIM_CHECK_H */
