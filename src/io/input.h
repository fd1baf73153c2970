/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening an input ("-" is standard input). */
#ifndef TF_IO_INPUT_H
#define TF_IO_INPUT_H

#include <stddef.h>

#include "tenfold.h"

/* The name standard input has in messages. */
#define TF_STDIN_NAME "<stdin>"

/* Opens path for reading into *fd (close it after). "-" is standard input:
 * a duplicate of descriptor 0 (closing it leaves standard input open),
 * *name = TF_STDIN_NAME; otherwise *name = path. *is_stdin may be NULL. */
tf_status tf_open_input(const char *path, int *fd, const char **name, int *is_stdin);

#endif
