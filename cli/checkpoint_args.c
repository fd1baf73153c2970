/* SPDX-License-Identifier: BSD-3-Clause */
#include "checkpoint_args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* One item of --checkpoint-every: N (iterations) or T with a unit s, m, h. */
static int every_item(const char *cmd, const char *s, size_t n, tf_checkpoint *out)
{
    char item[64];
    if (n == 0 || n >= sizeof item)
        return cli_usage(cmd, "--checkpoint-every: expected N (iterations) or T followed by s, m or h, got '%.*s'",
                         (int)n, s);
    memcpy(item, s, n);
    item[n] = '\0';
    const char unit = item[n - 1];
    if (unit == 's' || unit == 'm' || unit == 'h') {
        item[n - 1] = '\0';
        char *e = NULL;
        errno = 0;
        const double v = strtod(item, &e);
        if (!item[0] || *e || errno || !isfinite(v) || !(v > 0.0))
            return cli_usage(cmd, "--checkpoint-every: expected a time > 0 before '%c', got '%.*s'", unit, (int)n, s);
        if (out->every_seconds > 0.0) return cli_usage(cmd, "--checkpoint-every: two times in '%s'", s);
        out->every_seconds = v * (unit == 's' ? 1.0 : unit == 'm' ? 60.0 : 3600.0);
        return 0;
    }
    uint64_t k = 0;
    int rc = cli_u64(cmd, "--checkpoint-every", item, 1, UINT32_MAX, &k);
    if (rc) return rc;
    if (out->every_iters) return cli_usage(cmd, "--checkpoint-every: two iteration counts in '%s'", s);
    out->every_iters = (uint32_t)k;
    return 0;
}

int cli_checkpoint_parse(const char *cmd, const char *path, const char *every, const char *resume, tf_checkpoint *out)
{
    memset(out, 0, sizeof *out);
    if (path && (!*path || !strcmp(path, "-")))
        return cli_usage(cmd, "--checkpoint: expected a stem (STEM.mode1.mat ... STEM.state), got '%s'", path);
    if (resume && (!*resume || !strcmp(resume, "-")))
        return cli_usage(cmd, "--resume: expected the stem of a checkpoint, got '%s'", resume);
    if (every && !path) return cli_usage(cmd, "--checkpoint-every: only with --checkpoint STEM");
    out->path = path;
    out->resume = resume;
    for (const char *s = every; s && *s;) {
        const char *comma = strchr(s, ',');
        const size_t n = comma ? (size_t)(comma - s) : strlen(s);
        int rc = every_item(cmd, s, n, out);
        if (rc) return rc;
        s = comma ? comma + 1 : s + n;
        if (comma && !*s) return cli_usage(cmd, "--checkpoint-every: nothing after the comma in '%s'", every);
    }
    return 0;
}

void cli_checkpoint_describe(const tf_checkpoint *c, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t at = 0;
    if (c->resume) at += (size_t)snprintf(buf + at, len - at, "resume from %s", c->resume);
    if (c->path && at < len) {
        at += (size_t)snprintf(buf + at, len - at, "%scheckpoint to %s ", at ? "; " : "", c->path);
        if (!c->every_iters && !(c->every_seconds > 0.0) && at < len)
            at += (size_t)snprintf(buf + at, len - at, "after every iteration");
        if (c->every_iters && at < len)
            at += (size_t)snprintf(buf + at, len - at, "every %u iterations", c->every_iters);
        if (c->every_seconds > 0.0 && at < len)
            at += (size_t)snprintf(buf + at, len - at, "%severy %g s", c->every_iters ? " and " : "", c->every_seconds);
        if (at < len) snprintf(buf + at, len - at, " and after the last");
    }
}
