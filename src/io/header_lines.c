/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/header_lines.h"

#include "core/error.h"
#include "io/text_parse.h"

int tf_next_content_line(tf_line_cursor *c, char comment, size_t *b, size_t *e)
{
    while (tf_lines_next(c, b, e)) {
        size_t p = *b;
        while (p < *e && tf_is_blank(c->text[p])) ++p;
        if (p < *e && c->text[p] != comment) return 1;
    }
    return 0;
}

tf_status tf_header_ints(const char *name, const tf_line_cursor *c, size_t b, size_t e,
                         uint32_t want, uint64_t min, uint64_t max, const char *what,
                         const char *context, uint64_t *v)
{
    const char *p = c->text + b, *end = c->text + e, *tok;
    size_t len;
    uint32_t n = tf_token_count(p, end);
    if (n != want)
        return tf_fail(TF_ERR_PARSE, "%s:%llu: expected %u field%s (%s), found %u", name,
                       (unsigned long long)c->line, want, want == 1 ? "" : "s", context, n);
    for (uint32_t i = 0; i < want && tf_token_next(&p, end, &tok, &len); ++i) {
        char found[80];
        tf_describe_found(tok, end, found, sizeof found);
        if (!tf_token_u64(tok, len, &v[i]))
            return tf_fail(TF_ERR_PARSE,
                           "%s:%llu: field %u: expected %s (a non-negative integer), found %s",
                           name, (unsigned long long)c->line, i + 1, what, found);
        if (v[i] < min || v[i] > max)
            return tf_fail(TF_ERR_RANGE, "%s:%llu: field %u: expected %s in %llu..%llu, found %s",
                           name, (unsigned long long)c->line, i + 1, what,
                           (unsigned long long)min, (unsigned long long)max, found);
    }
    return TF_OK;
}
