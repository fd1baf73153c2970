/* SPDX-License-Identifier: BSD-3-Clause */
/* The records the ranks of a run compare before they work together
 * (tf_agree, tf_mpi_agree in src/ranks/mpi.c). */
#include <stdio.h>
#include <string.h>

#include "tenfold.h"

/* FNV-1a, 64 bits: the values are short texts. */
static uint64_t text_hash(const char *s, uint64_t h)
{
    for (; *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
    return h;
}

void tf_agree_add(tf_agree *a, const char *name, const char *value)
{
    if (!a) return;
    if (!value) value = "";
    if (a->n >= TF_AGREE_FIELDS) { /* full: the last field takes the rest */
        tf_agree_field *f = &a->field[TF_AGREE_FIELDS - 1];
        snprintf(f->name, sizeof f->name, "more");
        snprintf(f->text, sizeof f->text, "(several values)");
        f->hash = text_hash(value, text_hash(name ? name : "", f->hash));
        return;
    }
    tf_agree_field *f = &a->field[a->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name ? name : "");
    const size_t len = strlen(value);
    if (len < sizeof f->text) memcpy(f->text, value, len + 1);
    else snprintf(f->text, sizeof f->text, "%.*s...", (int)sizeof f->text - 4, value);
    f->hash = text_hash(value, 0xCBF29CE484222325ULL);
}
