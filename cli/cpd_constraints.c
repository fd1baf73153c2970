/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd`'s constraints; see cpd_constraints.h. */
#include "cpd_constraints.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* "1,3" -> the mask of modes 1 and 3 (1-based, 1..TF_MAX_ORDER). */
static int parse_modes(const char *opt, const char *s, const char *whole, uint32_t *mask)
{
    uint32_t m = 0;
    const char *p = s;
    for (;;) {
        char *end = NULL;
        const unsigned long v = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
        if (!end || v < 1 || v > TF_MAX_ORDER || (*end != ',' && *end != '\0'))
            return cli_usage("cpd", "%s: expected 1-based modes like 1,3 (numbers 1..%u, comma-separated), got '%s'",
                             opt, TF_MAX_ORDER, whole);
        m |= 1u << (v - 1);
        if (*end == '\0') break;
        p = end + 1;
    }
    *mask = m;
    return CLI_OK;
}

/* LAMBDA[@MODES]: a number >= 0, on every mode or those listed. */
static int parse_penalty(const char *opt, const char *s, double *value, uint32_t *modes)
{
    *modes = CPD_ALL_MODES;
    if (!s) return CLI_OK;
    char num[64];
    const char *at = strchr(s, '@');
    const size_t n = at ? (size_t)(at - s) : strlen(s);
    if (n == 0 || n >= sizeof num)
        return cli_usage("cpd", "%s: expected LAMBDA[@MODES] (a number >= 0, then optionally @ and 1-based modes "
                                "like 1,3), got '%s'", opt, s);
    memcpy(num, s, n);
    num[n] = '\0';
    char name[16];
    snprintf(name, sizeof name, "%s LAMBDA", opt);
    int rc = cli_double("cpd", name, num, 0.0, INFINITY, value);
    if (rc == CLI_OK && at) rc = parse_modes(opt, at + 1, s, modes);
    return rc;
}

static const char *const method_names[] = {"auto", "admm", "hals"};

const char *cpd_method_name(int method)
{
    return method >= 0 && method < 3 ? method_names[method] : "auto";
}

int cpd_constraints_parse(const cpd_constraint_args *a, cpd_constraints *c)
{
    memset(c, 0, sizeof *c);
    tf_cpd_update_default(&c->update);
    int rc = CLI_OK;
    if (a->nonneg_flag) {
        c->nonneg = CPD_ALL_MODES;
        if (a->nonneg && (rc = parse_modes("--nonneg", a->nonneg, a->nonneg, &c->nonneg))) return rc;
    }
    if ((rc = parse_penalty("--l1", a->l1, &c->l1, &c->l1_modes)) ||
        (rc = parse_penalty("--l2", a->l2, &c->l2, &c->l2_modes)))
        return rc;
    uint64_t max_inner = c->update.max_inner, hals_inner = c->update.hals_max_inner;
    if ((rc = cli_choice("cpd", "--nonneg-method", a->method, method_names, 3, &c->method)) ||
        (rc = cli_u64("cpd", "--admm-inner", a->admm_inner, 1, 100000, &max_inner)) ||
        (rc = cli_double_below("cpd", "--admm-tol", a->admm_tol, 0.0, 1.0, &c->update.inner_tol)) ||
        (rc = cli_u64("cpd", "--hals-inner", a->hals_inner, 1, 100000, &hals_inner)) ||
        (rc = cli_double_below("cpd", "--hals-tol", a->hals_tol, 0.0, 1.0, &c->update.hals_tol)))
        return rc;
    c->update.max_inner = (uint32_t)max_inner;
    c->update.hals_max_inner = (uint32_t)hals_inner;
    c->any = a->nonneg_flag || a->l1 || a->l2;
    const char *admm_opt = a->admm_inner ? "--admm-inner" : a->admm_tol ? "--admm-tol" : NULL;
    const char *hals_opt = a->hals_inner ? "--hals-inner" : a->hals_tol ? "--hals-tol" : NULL;
    if (!c->any && (admm_opt || hals_opt || a->method))
        return cli_usage("cpd", "%s: %s, which run only with --nonneg, --l1 or --l2",
                         a->method ? "--nonneg-method" : admm_opt ? admm_opt : hals_opt,
                         a->method ? "chooses how the constraints are imposed"
                                   : admm_opt ? "sets AO-ADMM's inner iterations" : "sets HALS's column sweeps");
    if (!a->method && admm_opt && hals_opt)
        return cli_usage("cpd", "%s and %s: set the limits of two methods; choose one with --nonneg-method admm|hals",
                         admm_opt, hals_opt);
    if (!a->method && (admm_opt || hals_opt)) /* an inner limit names its method */
        c->method = admm_opt ? CPD_METHOD_ADMM : CPD_METHOD_HALS;
    if (c->method == CPD_METHOD_HALS && admm_opt)
        return cli_usage("cpd", "%s: sets AO-ADMM's inner iterations, but --nonneg-method hals runs HALS "
                                "(--hals-inner, --hals-tol)", admm_opt);
    if (c->method == CPD_METHOD_ADMM && hals_opt)
        return cli_usage("cpd", "%s: sets HALS's column sweeps, but --nonneg-method admm runs AO-ADMM "
                                "(--admm-inner, --admm-tol)", hals_opt);
    return CLI_OK;
}

/* The highest mode a mask names (0: none). */
static uint32_t top_mode(uint32_t mask)
{
    uint32_t top = 0;
    for (uint32_t m = 0; m < 32; ++m)
        if (mask >> m & 1u) top = m + 1;
    return top;
}

int cpd_constraints_apply(cpd_constraints *c, uint32_t order)
{
    if (!c->any) return CLI_OK;
    const char *name[3] = {"--nonneg", "--l1", "--l2"};
    const uint32_t mask[3] = {c->nonneg, c->l1_modes, c->l2_modes};
    for (int k = 0; k < 3; ++k) {
        const uint32_t top = mask[k] == CPD_ALL_MODES ? 0 : top_mode(mask[k]);
        if (top > order)
            return cli_fail_all("cpd: %s: mode %u, but the tensor has %u modes (1..%u)", name[k], top, order, order);
    }
    tf_cpd_update *u = &c->update;
    u->kind = c->method == CPD_METHOD_ADMM   ? TF_CPD_UPDATE_AO_ADMM
              : c->method == CPD_METHOD_HALS ? TF_CPD_UPDATE_HALS
                                             : TF_CPD_UPDATE_AUTO;
    for (uint32_t m = 0; m < order; ++m) {
        u->mode[m].nonneg = (int)(c->nonneg >> m & 1u);
        u->mode[m].l1 = c->l1_modes >> m & 1u ? c->l1 : 0.0;
        u->mode[m].l2 = c->l2_modes >> m & 1u ? c->l2 : 0.0;
        if (u->kind == TF_CPD_UPDATE_HALS && u->mode[m].l1 > 0.0 && !u->mode[m].nonneg)
            return cli_fail_all("cpd: --nonneg-method hals: --l1 on mode %u, which is not --nonneg (HALS imposes l1 "
                                "on non-negative modes only; --nonneg-method admm imposes it anywhere)", m + 1);
    }
    return CLI_OK;
}

void cpd_constraints_describe(const cpd_constraints *c, uint32_t order, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t m = 0; m < order && n < len; ++m) {
        const tf_cpd_constraint *k = &c->update.mode[m];
        int w = snprintf(buf + n, len - n, "%smode %u", m ? "; " : "", m + 1);
        if (w > 0) n += (size_t)w;
        int first = 1;
        if (k->nonneg && n < len && (w = snprintf(buf + n, len - n, " nonneg")) > 0) n += (size_t)w, first = 0;
        if (k->l1 > 0 && n < len && (w = snprintf(buf + n, len - n, "%s l1 %g", first ? "" : ",", k->l1)) > 0)
            n += (size_t)w, first = 0;
        if (k->l2 > 0 && n < len && (w = snprintf(buf + n, len - n, "%s l2 %g", first ? "" : ",", k->l2)) > 0)
            n += (size_t)w, first = 0;
        if (first && n < len && (w = snprintf(buf + n, len - n, " none")) > 0) n += (size_t)w;
    }
}

void cpd_constraints_json(const cpd_constraints *c, uint32_t order, const tf_cpd_report *rep, cli_json *j)
{
    const tf_cpd_update_kind ran = rep ? rep->update_kind : c->any ? c->update.kind : TF_CPD_UPDATE_ALS;
    json_str(j, "algorithm", ran == TF_CPD_UPDATE_ALS ? "CP-ALS" : tf_cpd_update_name(ran));
    if (!c->any) return;
    json_str(j, "nonneg_method", cpd_method_name(c->method));
    if (rep && rep->update_note[0]) json_str(j, "algorithm_choice", rep->update_note);
    json_array(j, "constraints");
    for (uint32_t m = 0; m < order; ++m) {
        const tf_cpd_constraint *k = &c->update.mode[m];
        json_object(j, NULL);
        json_u64(j, "mode", m + 1);
        json_bool(j, "nonneg", k->nonneg);
        json_num(j, "l1", k->l1);
        json_num(j, "l2", k->l2);
        json_end(j);
    }
    json_end(j);
    if (ran == TF_CPD_UPDATE_AO_ADMM) {
        json_u64(j, "admm_max_inner", c->update.max_inner);
        json_num(j, "admm_tol", c->update.inner_tol);
    } else if (ran == TF_CPD_UPDATE_HALS) {
        json_u64(j, "hals_max_inner", c->update.hals_max_inner);
        json_num(j, "hals_tol", c->update.hals_tol);
    }
}
