/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain FROSTT .tns records no dims: the note / warning the commands that
 * write tensors print when a mode is longer than its largest index + 1. */
#ifndef TF_CLI_DIMS_NOTE_H
#define TF_CLI_DIMS_NOTE_H
#include "tenfold.h"

/* asked: the format the user asked for (TF_FILE_AUTO = by extension).
 * Writing `path` with AUTO that became the ParTI header form: one note on
 * stdout. An explicit TF_FILE_TNS that loses dims: one warning on stderr
 * naming the lost dims and the formats that keep them. Else nothing. */
void cli_note_tns_dims(const char *path, const tf_tensor *t, tf_file_format asked);
#endif
