/* SPDX-License-Identifier: BSD-3-Clause */
/* The tuning policy inside the library: a caller's tf_tuning, of whatever
 * size it was compiled with, taken into a whole one (src/core/tuning.c). */
#ifndef TF_CORE_TUNING_H
#define TF_CORE_TUNING_H
#include "tenfold.h"

/* *dst = the library's defaults overlaid with the first src->size bytes of
 * src (NULL: the defaults alone); dst->size = sizeof *dst. A src->size below
 * sizeof(size_t) (0: a struct tf_tuning_default never filled) is TF_ERR_ARG
 * naming `who`. */
tf_status tf_tuning_take(tf_tuning *dst, const tf_tuning *src, const char *who);
/* Writes the whole tuning src into the caller's dst, as far as dst->size
 * reaches (dst->size unchanged). */
void tf_tuning_give(tf_tuning *dst, const tf_tuning *src);
#endif
