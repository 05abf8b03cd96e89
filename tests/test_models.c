/* The models' ownership: a model owns its parameters and buffers, whatever
 * scope is open when it is created. */
#include <criterion/criterion.h>

#include "alloc_counter.h"
#include "models/models.h"

/* A model created inside an open scope keeps every tensor when the scope
 * ends (gpt's causal mask once went to the scope: the scope freed it, then
 * model_free released it again), and model_free returns all of them. */
Test(models, create_inside_a_scope_keeps_the_model_tensors, .init = count_allocations)
{
    static const char *const ids[] = {"mlp", "cnn", "gpt", "block768"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        int64_t base = live_allocations();
        tj_scope *s = tj_scope_begin();
        model m;
        cr_assert_eq(model_create(model_find(ids[i]), 0, &m), TJ_OK, "%s: %s", ids[i], tj_last_error());
        int64_t owned = live_allocations() - base;
        cr_assert_not_null(tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32), "%s", tj_last_error());
        tj_scope_end(s);
        cr_assert_eq(live_allocations() - base, owned, "%s: the scope released %lld of the model's blocks", ids[i],
                     (long long)(owned - (live_allocations() - base)));
        if (m.causal_mask) {
            int64_t t = tj_tensor_size(m.causal_mask, 0);
            cr_expect_eq(tj_tensor_item_at(m.causal_mask, 1), 0.0, "%s: mask [0, 1]", ids[i]);
            cr_expect_eq(tj_tensor_item_at(m.causal_mask, t * t - 1), 1.0, "%s: mask [t-1, t-1]", ids[i]);
        }
        model_free(&m);
        cr_assert_eq(live_allocations(), base, "%s: model_free left %lld blocks", ids[i],
                     (long long)(live_allocations() - base));
    }
}
