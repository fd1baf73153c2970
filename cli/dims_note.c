/* SPDX-License-Identifier: BSD-3-Clause */
/* The note / warning about dims that plain FROSTT .tns cannot record. */
#include <stdio.h>
#include <string.h>

#include "dims_note.h"
#include "verbosity.h"

/* "mode 2: 1899 -> 1898, mode 3: 200 -> 193" into buf. */
static const char *lost_dims(const tf_tensor *t, const uint64_t *implied, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t m = 0; m < t->order && n < len; ++m) {
        if (t->dims[m] <= implied[m]) continue;
        int k = snprintf(buf + n, len - n, "%smode %u: %llu -> %llu", n ? ", " : "", m + 1,
                         (unsigned long long)t->dims[m], (unsigned long long)implied[m]);
        if (k < 0) break;
        n += (size_t)k;
    }
    return buf;
}

void cli_note_tns_dims(const char *path, const tf_tensor *t, tf_file_format asked)
{
    uint64_t implied[TF_MAX_ORDER];
    const tf_file_format wrote = tf_write_format(path, t, asked);
    if (asked == TF_FILE_AUTO && wrote == TF_FILE_TNS_HEADER && !cli_quiet()) {
        char buf[TF_MAX_ORDER * 64];
        tf_tensor_implied_dims(t, implied);
        printf("note:   %s: plain .tns would shrink dims (%s), so it has the ParTI dims header "
               "(tns-header); --to tns writes plain FROSTT\n",
               path, lost_dims(t, implied, buf, sizeof buf));
    } else if (asked == TF_FILE_TNS && tf_tensor_implied_dims(t, implied) > 0) {
        char buf[TF_MAX_ORDER * 64];
        cli_warn("%s: plain FROSTT .tns records no dims; read back they shrink (%s); tns-header, "
                 "sptensor and bin keep them", path, lost_dims(t, implied, buf, sizeof buf));
    }
}
