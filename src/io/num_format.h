/* SPDX-License-Identifier: BSD-3-Clause */
/* Fast text formatting of indices and values for the writers. */
#ifndef TF_IO_NUM_FORMAT_H
#define TF_IO_NUM_FORMAT_H

#include <stdint.h>

/* Longest output of tf_format_value, without a terminator. */
#define TF_VALUE_MAX_CHARS 26

/* Decimal v at dst; returns the end (no terminator). */
char *tf_format_u64(char *dst, uint64_t v);
/* v as an integer when it is integral and |v| < 2^53, else "%.17g"
 * (round-trips exactly); returns the end (no terminator). */
char *tf_format_value(char *dst, double v);
#endif
