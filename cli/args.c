/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared option parsing and number conversion for the tenfold commands. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbosity.h"
#include "gen_spec.h"

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tenfold %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\ntry 'tenfold %s --help'\n", cmd);
    return CLI_USAGE;
}

static int run_rank;        /* this process's MPI rank (cli_set_rank) */
static int failed_together; /* the run failed on every rank alike */

void cli_set_rank(int rank) { run_rank = rank; }

int cli_failed_together(void) { return failed_together; }

int cli_alike(int rc)
{
    if (rc != CLI_OK) failed_together = 1;
    return rc;
}

static int stdout_errno;
static const char *stdout_alias;

void cli_set_stdout_alias(const char *alias) { stdout_alias = alias; }

void cli_flush_stdout(void)
{
    /* A write that failed inside an earlier printf (a full buffer) left
     * ferror set and, unless something since changed it, its reason in
     * errno: taken when it is one a write gives. */
    const int saved = errno;
    const int from_write = saved == ENOSPC || saved == EPIPE || saved == EIO || saved == EBADF ||
                           saved == EFBIG || saved == EDQUOT;
    errno = 0;
    const int failed = fflush(stdout) != 0;
    if ((failed || ferror(stdout)) && !stdout_errno) stdout_errno = failed ? errno : from_write ? saved : 0;
}

int cli_stdout_errno(void) { return stdout_errno; }

static int fail_held;

void cli_hold_failures(int on) { fail_held = on; }

int cli_fail(void)
{
    const char *msg = tf_last_error();
    if (fail_held) return CLI_FAIL; /* the caller says it (tf_last_error() keeps it) */
    if (tf_last_error_shared()) { /* every rank has it: rank 0 says it */
        failed_together = 1;
        if (run_rank != 0) return CLI_FAIL;
    }
    if (!msg || !*msg) msg = "unknown error";
    fputs("tenfold: ", stderr);
    /* the alias of standard output (outfile.h) as a whole name (not followed
     * by another digit) reads "standard output" */
    const size_t n = stdout_alias ? strlen(stdout_alias) : 0;
    for (const char *p = msg; *p;) {
        const char *at = n ? strstr(p, stdout_alias) : NULL;
        while (at && isdigit((unsigned char)at[n])) at = strstr(at + 1, stdout_alias);
        if (!at) { fputs(p, stderr); break; }
        fwrite(p, 1, (size_t)(at - p), stderr);
        fputs("standard output", stderr);
        p = at + n;
    }
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_fail_all(const char *fmt, ...)
{
    failed_together = 1;
    if (run_rank != 0) return CLI_FAIL;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tenfold: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return CLI_FAIL;
}

static const cli_opt *find_long(const cli_opt *opts, const char *name, size_t len)
{
    for (const cli_opt *o = opts; o->name; ++o)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
    return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char c)
{
    for (const cli_opt *o = opts; o->name; ++o)
        if (o->short_name && o->short_name == c) return o;
    return NULL;
}

static int add_positional(cli_args *a, const char *s, int max_pos)
{
    if (a->npos >= max_pos) return cli_usage(a->cmd, "unexpected argument '%s'", s);
    a->pos[a->npos++] = s;
    return -1;
}

/* Handles one option; *i advances past a separate value. */
static int take_option(cli_args *a, const cli_opt *o, const char *shown, const char *inline_value,
                       int argc, char **argv, int *i)
{
    if (o->flag && o->value) { /* an optional value: inline, or a next argument starting with a digit */
        *o->flag = 1;
        if (inline_value) *o->value = inline_value;
        else if (*i + 1 < argc && isdigit((unsigned char)argv[*i + 1][0])) *o->value = argv[++*i];
        return -1;
    }
    if (o->flag) {
        if (inline_value) return cli_usage(a->cmd, "option %s takes no value", shown);
        *o->flag = 1;
        return -1;
    }
    if (inline_value) {
        *o->value = inline_value;
        return -1;
    }
    if (*i + 1 >= argc) return cli_usage(a->cmd, "option %s needs a value", shown);
    *o->value = argv[++*i];
    return -1;
}

int cli_parse(cli_args *a, const char *cmd, const char *help, int argc, char **argv,
              const cli_opt *opts, int min_pos, int max_pos, const char *pos_names)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    if (max_pos > CLI_MAX_POS) max_pos = CLI_MAX_POS;
    const cli_opt *first = NULL; /* --gen, standing in for pos[0] */
    for (const cli_opt *o = opts; o->name; ++o)
        if (o->value == &cli_gen_arg) {
            first = o;
            *o->value = NULL;
        }
    const int cap = first && max_pos < CLI_MAX_POS ? max_pos + 1 : max_pos;
    for (int i = 1; i < argc; ++i) {
        const char *s = argv[i];
        int rc = -1;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            errno = 0;
            fputs(help, stdout);
            cli_flush_stdout();
            return CLI_OK;
        }
        if (!strcmp(s, "--")) {
            for (++i; i < argc && rc < 0; ++i) rc = add_positional(a, argv[i], cap);
            if (rc >= 0) return rc;
            break;
        }
        if (s[0] != '-' || s[1] == '\0') {
            rc = add_positional(a, s, cap);
        } else if (s[1] == '-') {
            const char *name = s + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const cli_opt *o = find_long(opts, name, len);
            if (!o) return cli_usage(cmd, "unknown option '%.*s'", (int)(len + 2), s);
            if (o == first && *o->value) return cli_usage(cmd, "--%s given twice", o->name);
            char shown[64];
            snprintf(shown, sizeof shown, "--%s", o->name);
            rc = take_option(a, o, shown, eq ? eq + 1 : NULL, argc, argv, &i);
        } else {
            const cli_opt *o = find_short(opts, s[1]);
            if (!o) return cli_usage(cmd, "unknown option '-%c'", s[1]);
            char shown[64];
            snprintf(shown, sizeof shown, "-%c/--%s", o->short_name, o->name);
            if (o->flag && s[2]) return cli_usage(cmd, "unknown option '%s'", s);
            rc = take_option(a, o, shown, s[2] ? s + 2 : NULL, argc, argv, &i);
        }
        if (rc >= 0) return rc;
    }
    if (first && *first->value) {
        if (a->npos + 1 > max_pos)
            return cli_usage(cmd, "--%s takes the place of the input file: give one, not both", first->name);
        memmove(a->pos + 1, a->pos, (size_t)a->npos * sizeof *a->pos);
        a->pos[0] = *first->value;
        a->npos++;
    } else if (a->npos > max_pos) {
        return cli_usage(cmd, "unexpected argument '%s'", a->pos[max_pos]);
    }
    if (a->npos < min_pos) return cli_usage(cmd, "missing argument (expected %s)", pos_names);
    return cli_verbosity_resolve(cmd);
}

/* Optional decimal multiplier suffix: k = 1e3, M = 1e6, G = 1e9. */
static uint64_t suffix_scale(const char *e)
{
    if (!strcmp(e, "k") || !strcmp(e, "K")) return 1000ULL;
    if (!strcmp(e, "M")) return 1000000ULL;
    if (!strcmp(e, "G")) return 1000000000ULL;
    return 0;
}

int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s) return CLI_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long v = isdigit((unsigned char)s[0]) ? strtoull(s, &end, 10) : 0;
    uint64_t scale = end && *end ? suffix_scale(end) : 1;
    int ok = end && end != s && errno == 0 && scale != 0 && v <= UINT64_MAX / scale;
    if (ok) v *= scale;
    if (!ok && end && end != s && (*end == 'e' || *end == 'E' || *end == '.')) { /* 2e7: exact integers only */
        double d = strtod(s, &end);
        ok = !*end && d >= 0 && d <= 9007199254740992.0 && d == (double)(unsigned long long)d;
        if (ok) v = (unsigned long long)d;
    }
    if (!ok || v < lo || v > hi)
        return cli_usage(cmd, "%s: expected an integer in %llu..%llu, got '%s'", opt,
                         (unsigned long long)lo, (unsigned long long)hi, s);
    *out = v;
    return CLI_OK;
}

int cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *out)
{
    uint64_t v = 0;
    if (!s) return CLI_OK;
    if (lo < 0) return cli_usage(cmd, "%s: internal error (negative range)", opt);
    int rc = cli_u64(cmd, opt, s, (uint64_t)lo, (uint64_t)hi, &v);
    if (rc == CLI_OK) *out = (int)v;
    return rc;
}

/* "a number in [0, 1)", "a finite number >= 0", "a finite number": the
 * range of a number option, as every message about it says it. */
static void describe_range(char *buf, size_t len, double lo, double hi, int open_hi)
{
    if (isinf(lo) && isinf(hi)) snprintf(buf, len, "a finite number");
    else if (isinf(hi)) snprintf(buf, len, "a finite number >= %g", lo);
    else if (isinf(lo)) snprintf(buf, len, "a finite number %s %g", open_hi ? "<" : "<=", hi);
    else snprintf(buf, len, "a number in [%g, %g%c", lo, hi, open_hi ? ')' : ']');
}

/* The one number parser of the options: [lo, hi], or [lo, hi) with open_hi. */
static int parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi, int open_hi,
                        double *out)
{
    if (!s) return CLI_OK;
    char range[96];
    describe_range(range, sizeof range, lo, hi, open_hi);
    char *end = NULL;
    errno = 0;
    const double v = *s && !isspace((unsigned char)*s) ? strtod(s, &end) : NAN;
    if (!end || end == s || *end) return cli_usage(cmd, "%s: expected %s, got '%s'", opt, range, s);
    if (errno == ERANGE && fabs(v) <= DBL_MIN) /* underflow: 0 or a subnormal */
        return cli_usage(cmd, "%s: '%s' is too small%s: below %g, the smallest normal double (give 0 for zero); "
                              "expected %s", opt, s, signbit(v) ? " in magnitude" : "", DBL_MIN, range);
    if (errno == ERANGE) /* overflow: "1e400"; a written "inf" is not a finite number (below) */
        return cli_usage(cmd, "%s: '%s' is too large%s: beyond %g, the largest double; expected %s", opt, s,
                         v < 0 ? " in magnitude" : "", DBL_MAX, range);
    if (!isfinite(v) || v < lo || v > hi || (open_hi && v >= hi))
        return cli_usage(cmd, "%s: expected %s, got '%s'", opt, range, s);
    *out = v;
    return CLI_OK;
}

int cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out)
{
    return parse_double(cmd, opt, s, lo, hi, 0, out);
}

int cli_double_below(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out)
{
    return parse_double(cmd, opt, s, lo, hi, 1, out);
}

int cli_size(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
    if (!s) return CLI_OK;
    char *end = NULL;
    errno = 0;
    const double v = *s && !isspace((unsigned char)*s) ? strtod(s, &end) : NAN;
    double mult = 1.0;
    if (end && end != s && *end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mult = 0x1p10; break;
        case 'M': mult = 0x1p20; break;
        case 'G': mult = 0x1p30; break;
        case 'T': mult = 0x1p40; break;
        case 'P': mult = 0x1p50; break;
        case 'E': mult = 0x1p60; break;
        default: mult = 0.0; break;
        }
        if (mult > 0 && (end[1] == 'i' || end[1] == 'I') && (end[2] == 'B' || end[2] == 'b')) end += 2;
        else if (mult > 0 && (end[1] == 'B' || end[1] == 'b')) end += 1;
        ++end;
    }
    const double bytes = v * mult;
    if (!end || end == s || *end || !(mult > 0) || isnan(bytes) || bytes < 0 || (errno == ERANGE && v < 1))
        return cli_usage(cmd, "%s: expected a size such as 8G, 512M, 64K or a number of bytes, got '%s'", opt, s);
    if (errno == ERANGE || !(bytes < 0x1p63))
        return cli_usage(cmd, "%s: '%s' is too large: at most 2^63 - 1 bytes (8E, 8 EiB)", opt, s);
    *out = (uint64_t)bytes;
    return CLI_OK;
}

int cli_split(const char *cmd, const char *opt, const char *s, char **buf, const char **out, int max,
              int *n)
{
    *buf = NULL;
    *n = 0;
    if (!s || !*s) return cli_usage(cmd, "%s: expected a comma-separated list, got '%s'", opt, s ? s : "");
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    if (!copy) return cli_usage(cmd, "%s: out of memory", opt);
    memcpy(copy, s, len + 1);
    int count = 0;
    for (char *p = copy;; ++count) {
        if (count == max) {
            free(copy);
            return cli_usage(cmd, "%s: at most %d values, got more in '%s'", opt, max, s);
        }
        out[count] = p;
        char *c = strchr(p, ',');
        if (!c) { ++count; break; }
        *c = '\0';
        p = c + 1;
    }
    *buf = copy;
    *n = count;
    return CLI_OK;
}

int cli_u64_list(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                 uint64_t *out, int max, int *n)
{
    char *buf = NULL;
    const char *piece[64];
    if (max > 64) max = 64;
    int rc = cli_split(cmd, opt, s, &buf, piece, max, n);
    for (int i = 0; rc == CLI_OK && i < *n; ++i) rc = cli_u64(cmd, opt, piece[i], lo, hi, &out[i]);
    free(buf);
    return rc;
}

int cli_double_list(const char *cmd, const char *opt, const char *s, double lo, double hi, int open_hi,
                    double *out, int max, int *n)
{
    char *buf = NULL;
    const char *piece[64];
    if (max > 64) max = 64;
    int rc = cli_split(cmd, opt, s, &buf, piece, max, n);
    for (int i = 0; rc == CLI_OK && i < *n; ++i) rc = parse_double(cmd, opt, piece[i], lo, hi, open_hi, &out[i]);
    free(buf);
    return rc;
}

int cli_choice(const char *cmd, const char *opt, const char *s, const char *const *names, int count,
               int *out)
{
    if (!s) return CLI_OK;
    for (int i = 0; i < count; ++i)
        if (!strcmp(s, names[i])) {
            *out = i;
            return CLI_OK;
        }
    char list[256] = "";
    for (int i = 0; i < count; ++i) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < count) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    return cli_usage(cmd, "%s: expected one of %s, got '%s'", opt, list, s);
}

/* A thread count above what the library starts (tf_thread_limit) is
 * clamped there: said once, on stderr, not under -q. */
static void note_thread_limit(int asked)
{
    static int said;
    const int limit = tf_thread_limit();
    if (said || cli_quiet()) return;
    const char *omp = getenv("OMP_NUM_THREADS");
    const long env = omp ? strtol(omp, NULL, 10) : 0; /* "8" or a list "8,4": the first level's */
    if (asked > limit)
        fprintf(stderr, "tenfold: note: -t %d is more threads than tenfold starts on this machine: using %d "
                        "(4 per online CPU, at least 64)\n", asked, limit);
    else if (asked == 0 && env > limit)
        fprintf(stderr, "tenfold: note: OMP_NUM_THREADS=%ld is more threads than tenfold starts on this machine: "
                        "using %d (4 per online CPU, at least 64)\n", env, limit);
    else return;
    said = 1;
}

int cli_threads(const char *cmd, const char *s, int *out)
{
    *out = 0;
    const int rc = cli_int(cmd, "-t/--threads", s, 0, 4096, out);
    if (rc == CLI_OK) note_thread_limit(*out);
    return rc;
}
