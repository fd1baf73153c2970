/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

tf_status tf_open_input(const char *path, int *fd, const char **name, int *is_stdin)
{
    const int in = !strcmp(path, "-");
    if (is_stdin) *is_stdin = in;
    *name = in ? TF_STDIN_NAME : path;
    *fd = in ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
    if (*fd >= 0) return TF_OK;
    if (in) return tf_fail(TF_ERR_IO, "standard input ('-'): cannot read it: %s", strerror(errno));
    return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
}
