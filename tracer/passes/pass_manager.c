/* Runs graph passes to a fixed point and reports node counts. */
#include "tracer/graph_internal.h"

tj_status tj_run_passes(tj_graph *g, const tj_graph_pass *passes, const char *const *names, int n, FILE *report)
{
    if (!g) return tj_error_null("tj_run_passes: NULL graph");
    if (n > 0 && !passes) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_run_passes: NULL passes");
    for (int i = 0; i < n; i++) /* checked first: a NULL entry was called after the others had run */
        if (!passes[i]) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_run_passes: pass %d is NULL", i);
    for (int round = 0; round < 8; round++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            int before = g->n_nodes;
            int r = passes[i](g);
            if (r < 0) return tj_last_status();
            changed += r;
            if (report)
                fprintf(report, "%-12s %6d -> %6d nodes\n", names && names[i] ? names[i] : "pass", before, g->n_nodes);
        }
        if (!changed) break;
    }
    return TJ_OK;
}
