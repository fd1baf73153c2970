/* SPDX-License-Identifier: BSD-3-Clause */
/* Names <-> enums of backends, formats, CP updates and SDDMM algorithms (the tool's option values). */
#include <string.h>

#include "core/error.h"

static const char *backend_names[] = {"auto", "cpu", "gpu"};
static const char *format_names[] = {"auto", "coo", "csf", "fcoo", "blco", "csf-short"};
static const char *sddmm_algo_names[] = {"auto", "sm-l2", "sm-sm", "row", "cusparse", "reference"};

const char *tf_backend_name(tf_backend b)
{
    return (unsigned)b < sizeof backend_names / sizeof *backend_names ? backend_names[b] : "?";
}
const char *tf_format_name(tf_format f)
{
    return (unsigned)f < sizeof format_names / sizeof *format_names ? format_names[f] : "?";
}
const char *tf_cpd_update_name(tf_cpd_update_kind k)
{
    static const char *names[] = {"ALS", "AO-ADMM", "HALS", "auto"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "unknown";
}
const char *tf_sddmm_algo_name(tf_sddmm_algo a)
{
    return (unsigned)a < sizeof sddmm_algo_names / sizeof *sddmm_algo_names ? sddmm_algo_names[a] : "unknown";
}
int tf_backend_parse(const char *s)
{
    if (!s) return tf_fail(TF_ERR_ARG, "tf_backend_parse: s is NULL"), -1;
    for (unsigned i = 0; i < sizeof backend_names / sizeof *backend_names; ++i)
        if (!strcmp(s, backend_names[i])) return (int)i;
    return -1;
}
int tf_format_parse(const char *s)
{
    if (!s) return tf_fail(TF_ERR_ARG, "tf_format_parse: s is NULL"), -1;
    for (unsigned i = 0; i < sizeof format_names / sizeof *format_names; ++i)
        if (!strcmp(s, format_names[i])) return (int)i;
    return -1;
}
