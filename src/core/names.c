/* SPDX-License-Identifier: BSD-3-Clause */
/* Names <-> enums of backends and formats (the tool's option values). */
#include <string.h>

#include "tenfold.h"

static const char *backend_names[] = {"auto", "cpu", "gpu"};
static const char *format_names[] = {"auto", "coo", "csf", "fcoo", "blco"};

const char *tf_backend_name(tf_backend b)
{
    return (unsigned)b < sizeof backend_names / sizeof *backend_names ? backend_names[b] : "?";
}
const char *tf_format_name(tf_format f)
{
    return (unsigned)f < sizeof format_names / sizeof *format_names ? format_names[f] : "?";
}
int tf_backend_parse(const char *s)
{
    for (unsigned i = 0; i < sizeof backend_names / sizeof *backend_names; ++i)
        if (!strcmp(s, backend_names[i])) return (int)i;
    return -1;
}
int tf_format_parse(const char *s)
{
    for (unsigned i = 0; i < sizeof format_names / sizeof *format_names; ++i)
        if (!strcmp(s, format_names[i])) return (int)i;
    return -1;
}
