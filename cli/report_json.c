/* SPDX-License-Identifier: BSD-3-Clause */
/* The JSON reports' "input" and "tensor" objects, shared by cpd and tucker. */
#include <math.h>

#include "gen_spec.h"
#include "json.h"
#include "report.h"

void cli_json_input(cli_json *j, const char *path, const tf_tensor *t, const tf_read_info *in)
{
    const char *spec = cli_generated(path);
    json_object(j, "input");
    if (spec) { /* --gen: no file (null), the SPEC and the rate */
        json_num(j, "file", NAN);
        json_str(j, "generated", spec);
        json_num(j, "nnz_per_second",
                 in->seconds > 0 ? (double)(in->total_nnz ? in->total_nnz : t->nnz) / in->seconds : NAN);
        json_u64(j, "generator_peak_bytes", cli_gen_peak()); /* this process's */
    } else {
        json_str(j, "file", path);
    }
    json_str(j, "format", spec ? "generated" : cli_file_format_name(in->format));
    json_str(j, "compression", in->compressed ? cli_compression_name(in->compressed) : "none");
    json_u64(j, "bytes", in->bytes);
    json_u64(j, "lines", in->lines);
    json_u64(j, "entries", in->entries);
    json_u64(j, "duplicates_summed", in->duplicates);
    json_u64(j, "zeros_dropped", in->zeros);
    json_u64(j, "zeros_kept", in->zeros_kept);
    json_u64(j, "index_base", (uint64_t)in->index_base);
    json_str(j, "index_base_from", cli_base_source_name(in->base_source));
    json_num(j, "read_seconds", in->seconds);
    json_end(j);

    json_object(j, "tensor");
    json_u64(j, "order", t->order);
    json_array(j, "dims");
    for (uint32_t m = 0; m < t->order; ++m) json_u64(j, NULL, t->dims[m]);
    json_end(j);
    json_u64(j, "nnz", t->nnz);
    json_num(j, "density", cli_density(t));
    json_u64(j, "coo_bytes", tf_tensor_bytes(t));
    json_end(j);
}
