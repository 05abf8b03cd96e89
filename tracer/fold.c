/* Constant folding at compile time: call nodes whose value depends on no
 * graph input run once, eagerly through the dispatcher, when the plan is
 * compiled; their results become plan constants (shared read-only by every
 * context) and their nodes leave the run.
 *
 * A node folds when its operator is a deterministic built-in one (not
 * random, no dropout, not in place), every tensor it reads is itself a
 * folded result (creation operators such as full, zeros, arange,
 * scalar_tensor read none), and no node of the plan writes into the storage
 * of its results (an in-place operator, or a user operator, which may write
 * any argument). Graph constants are not folded into: they may be the
 * caller's tensors, updated between runs. Identical folded calls (same
 * operator, same arguments) share one tensor. */
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"

bool tj_plan_op_is_pure(const tj_op *op)
{
    if (!tj_op_is_builtin(op) || op->is_random || op->mutated_args || strstr(op->base, "dropout")) return false;
    for (int i = 0; i < op->nargs; i++)
        if (op->args[i].name && strcmp(op->args[i].name, "dropout_p") == 0) return false;
    return true;
}

/* Roots of the storages some node writes into: in-place results, the
 * Tensor(a!) arguments of built-in operators (self of in-place ones, the
 * running statistics of native_batch_norm), every argument of user
 * operators. */
static void mark_written(const tj_plan *p, bool *written)
{
    for (int i = 0; i < p->n_nodes; i++) {
        const tj_pnode *n = &p->nodes[i];
        for (int k = 0; k < n->nout; k++)
            if (n->outs[k] >= 0 && p->values[n->outs[k]].kind == TJ_PV_SAME) written[p->values[n->outs[k]].root] = true;
        bool user = !tj_op_is_builtin(n->op);
        if (!user && !n->op->mutated_args) continue;
        for (int a = 0; a < n->nargs; a++)
            if (user || ((n->op->mutated_args >> a) & 1))
                for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++)
                    if (tj_garg_value_at(&n->args[a], k) >= 0) written[p->values[tj_garg_value_at(&n->args[a], k)].root] = true;
    }
}

static bool foldable(const tj_plan *p, const tj_pnode *n, const bool *folded, const bool *written)
{
    if (!tj_plan_op_is_pure(n->op)) return false;
    for (int k = 0; k < n->nout; k++) {
        int v = n->outs[k];
        if (v >= 0 && (p->values[v].kind == TJ_PV_SAME || written[p->values[v].root])) return false;
    }
    for (int a = 0; a < n->nargs; a++)
        for (int k = 0; k < tj_garg_n_values(&n->args[a]); k++)
            if (tj_garg_value_at(&n->args[a], k) >= 0 && !folded[tj_garg_value_at(&n->args[a], k)]) return false;
    return true;
}

/* Same operator and arguments, tensors compared through their canonical
 * (first identical) value. */
static bool same_call(const tj_pnode *x, const tj_pnode *y, const int *canon)
{
    if (x->op != y->op || x->nargs != y->nargs) return false;
    for (int a = 0; a < x->nargs; a++) {
        const tj_garg *s = &x->args[a], *t = &y->args[a];
        if (s->kind != TJ_GA_VALUE && s->kind != TJ_GA_VALUES) {
            if (!tj_garg_equal(s, t)) return false;
            continue;
        }
        if (s->kind != t->kind || tj_garg_n_values(s) != tj_garg_n_values(t)) return false;
        for (int k = 0; k < tj_garg_n_values(s); k++) {
            int u = tj_garg_value_at(s, k), w = tj_garg_value_at(t, k);
            if ((u < 0 || w < 0) ? u != w : canon[u] != canon[w]) return false;
        }
    }
    for (int k = 0; k < x->nout; k++)
        if ((x->outs[k] < 0) != (y->outs[k] < 0)) return false;
    return true;
}

/* Value v becomes a plan constant holding a new reference to t. */
static void set_constant(tj_plan *p, int v, tj_tensor *t)
{
    tj_pvalue *pv = &p->values[v];
    pv->kind = TJ_PV_CONSTANT;
    pv->constant = tj_tensor_retain(t);
    pv->root = v;
    memcpy(pv->strides, t->strides, sizeof pv->strides);
    pv->offset = t->offset;
    pv->rel_offset = 0;
}

/* Runs node i through the dispatcher on the constants it reads. */
static tj_status evaluate(tj_plan *p, int i, tj_tensor **vt)
{
    tj_pnode *n = &p->nodes[i];
    tj_value args[TJ_MAX_ARGS], outs[TJ_MAX_RETURNS];
    size_t list_bytes = sizeof(tj_tensor *) * (size_t)(n->nlist + 1);
    tj_tensor **lists = tj_alloc(list_bytes);
    if (!lists) return tj_oom("tj_compile", list_bytes);
    tj_garg_box(n->args, n->nargs, vt, args, lists);
    tj_status st = tj_dispatch_kernel(n->op, args, n->nargs, outs);
    tj_free(lists, list_bytes);
    if (st != TJ_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tj_last_error());
        return tj_error(st, "tj_compile: folding node %%%s: %s", n->name, msg);
    }
    for (int k = 0; k < n->nout; k++) {
        int v = n->outs[k];
        if (v < 0 || p->values[v].kind == TJ_PV_UNUSED) continue;
        if (outs[k].kind != TJ_V_TENSOR)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_compile: folding node %%%s (%s): result %d is undefined",
                            n->name, n->op->name, k);
        set_constant(p, v, outs[k].u.t);
        vt[v] = outs[k].u.t;
    }
    return TJ_OK;
}

/* Folds node i: reuses an identical folded call's tensors, or evaluates it. */
static tj_status fold_node(tj_plan *p, int i, const int *done, int n_done, int *canon, tj_tensor **vt)
{
    tj_pnode *n = &p->nodes[i];
    int twin = -1;
    for (int j = 0; j < n_done && twin < 0; j++)
        if (same_call(&p->nodes[done[j]], n, canon)) twin = done[j];
    for (int k = 0; twin >= 0 && k < n->nout; k++) /* both computed or both undefined */
        if (n->outs[k] >= 0 && (p->values[n->outs[k]].kind == TJ_PV_UNUSED) !=
                                   (p->values[p->nodes[twin].outs[k]].kind == TJ_PV_UNUSED))
            twin = -1;
    if (twin < 0) return evaluate(p, i, vt);
    p->stats.n_folded_shared++;
    for (int k = 0; k < n->nout; k++) {
        int v = n->outs[k], w = p->nodes[twin].outs[k];
        if (v < 0 || p->values[v].kind == TJ_PV_UNUSED) continue;
        set_constant(p, v, p->values[w].constant);
        vt[v] = p->values[w].constant;
        canon[v] = canon[w];
    }
    return TJ_OK;
}

tj_status tj_plan_fold_constants(tj_plan *p)
{
    size_t nv = (size_t)p->n_values + 1;
    size_t bytes = nv * (2 * sizeof(bool) + sizeof(int) + sizeof(tj_tensor *)) + sizeof(int) * ((size_t)p->n_nodes + 1);
    char *mem = tj_alloc(bytes);
    if (!mem) return tj_oom("tj_compile", bytes);
    memset(mem, 0, bytes);
    tj_tensor **vt = (tj_tensor **)mem;
    int *canon = (int *)(vt + nv);
    int *done = canon + nv;
    bool *folded = (bool *)(done + p->n_nodes + 1);
    bool *written = folded + nv;
    for (int v = 0; v < p->n_values; v++) canon[v] = v;
    mark_written(p, written);
    tj_scope *scope = tj_scope_begin(); /* the dispatcher's results; the plan keeps its own references */
    tj_status st = scope ? TJ_OK : tj_oom("tj_compile", sizeof(void *));
    int n_done = 0;
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) {
        tj_pnode *n = &p->nodes[i];
        if (!foldable(p, n, folded, written)) continue;
        if ((st = fold_node(p, i, done, n_done, canon, vt)) != TJ_OK) break;
        for (int k = 0; k < n->nout; k++)
            if (n->outs[k] >= 0) folded[n->outs[k]] = true;
        done[n_done++] = i;
        if (!n->is_step) p->stats.n_views--;
        n->is_step = false;
        n->folded = true;
        p->stats.n_folded++;
    }
    if (scope) tj_scope_end(scope);
    tj_plan_renumber_steps(p);
    tj_free(mem, bytes);
    return st;
}
