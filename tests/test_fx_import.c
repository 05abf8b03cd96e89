/* Graphs traced by PyTorch's make_fx, written in tjit's text by
 * python/tjit_fx.py, replay in tjit with torch's results.
 *
 * tests/fx_import/ holds, per case, NAME.txt (the exported graph),
 * NAME.in<k>.npy (its inputs) and NAME.out<k>.npy (torch 1.13's float32
 * outputs of the GraphModule on them), written by tests/make_fx_import.py.
 * Each graph is parsed, run by the interpreter (tj_graph_run) and compiled
 * and run (tj_compile, tj_plan_run); every output must have torch's dtype and
 * shape and values within 1e-5 relative and 1e-6 absolute: float32 with
 * sums, matrix products and exp/log taken in another order than torch's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(fx_import, .init = test_scope_open, .fini = test_scope_close);

#define RTOL 1e-5
#define ATOL 1e-6

/* tests/fx_import/NAME<suffix>, or NULL when there is no such file. */
static tj_tensor *load_npy(const char *name, const char *what, int k)
{
    char path[256];
    snprintf(path, sizeof path, "tests/fx_import/%s.%s%d.npy", name, what, k);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fclose(f);
    tj_tensor *t = tj_npy_load(path);
    cr_assert_not_null(t, "%s: %s", path, tj_last_error());
    return t;
}

/* Each of the n outputs `got` against torch's NAME.out<k>.npy, and that
 * torch wrote no more of them. */
static void expect_torch_outputs(const char *name, const char *how, tj_tensor *const *got, int n)
{
    for (int k = 0; k < n; k++) {
        tj_tensor *want = load_npy(name, "out", k);
        cr_assert_not_null(want, "%s: torch wrote %d outputs, the graph returns %d", name, k, n);
        cr_assert_not_null(got[k], "%s (%s): output %d: %s", name, how, k, tj_last_error());
        int64_t numel = test_assert_dtype_shape(got[k], tj_tensor_dtype(want), tj_tensor_ndim(want),
                                                tj_tensor_shape(want));
        double *values = malloc(sizeof(double) * (size_t)(numel ? numel : 1));
        cr_assert_not_null(values);
        for (int64_t i = 0; i < numel; i++) values[i] = tj_tensor_item_at(want, i);
        test_expect_close(got[k], values, numel, RTOL, ATOL);
        free(values);
    }
    cr_expect_null(load_npy(name, "out", n), "%s: torch wrote more than the %d outputs of the graph", name, n);
}

/* Parses tests/fx_import/NAME.txt and checks its interpreted and its
 * compiled runs against torch. */
static void expect_replays_like_torch(const char *name)
{
    char path[256];
    size_t size;
    snprintf(path, sizeof path, "tests/fx_import/%s.txt", name);
    char *text = tj_read_text_file(path, "test_fx_import", TJ_TEXT_FILE_MAX, &size);
    cr_assert_not_null(text, "%s", tj_last_error());
    tj_graph *g = tj_graph_parse(text);
    tj_free_file(text, size);
    cr_assert_not_null(g, "%s: %s", path, tj_last_error());

    int n_in = tj_graph_num_inputs(g), n_out = tj_graph_num_outputs(g);
    tj_tensor *in[16], *out[16];
    cr_assert(n_in <= 16 && n_out <= 16);
    for (int k = 0; k < n_in; k++) cr_assert_not_null(in[k] = load_npy(name, "in", k), "%s: no input %d", name, k);
    cr_expect_null(load_npy(name, "in", n_in), "%s: more inputs than the graph's %d", name, n_in);

    cr_assert_eq(tj_graph_run(g, in, n_in, out), TJ_OK, "%s: tj_graph_run: %s", name, tj_last_error());
    expect_torch_outputs(name, "tj_graph_run", out, n_out);

    tj_plan *plan = tj_compile(g, NULL);
    cr_assert_not_null(plan, "%s: tj_compile: %s", name, tj_last_error());
    cr_assert_eq(tj_plan_num_outputs(plan), n_out);
    cr_assert_eq(tj_plan_run(plan, in, n_in, out), TJ_OK, "%s: tj_plan_run: %s", name, tj_last_error());
    expect_torch_outputs(name, "tj_plan_run", out, n_out);
    tj_plan_free(plan);
    tj_graph_free(g);
}

/* make_fx of nn.Sequential(Linear, ReLU, Linear) called directly: its
 * parameters are get_attr constants (_param_constant0, ...), the larger
 * ones written after 'return'. */
Test(fx_import, mlp_with_parameters_as_constants_matches_torch) { expect_replays_like_torch("mlp_constants"); }

/* The same MLP through functional_call: its parameters are placeholders. */
Test(fx_import, mlp_with_parameters_as_inputs_matches_torch) { expect_replays_like_torch("mlp_functional"); }

/* native_layer_norm's three results through operator.getitem, one read
 * (F.layer_norm) or all three. */
Test(fx_import, layer_norm_results_unpack_as_getitems_did) { expect_replays_like_torch("layer_norm"); }

/* _softmax, _log_softmax and nll_loss_forward (two results, an int64
 * target). */
Test(fx_import, softmax_and_cross_entropy_match_torch) { expect_replays_like_torch("softmax_cross_entropy"); }

/* convolution, relu, max_pool2d_with_indices (its indices unread). */
Test(fx_import, conv_relu_max_pool_matches_torch) { expect_replays_like_torch("conv_relu_pool"); }

/* The same after FX's eliminate_dead_code: no getitem for the indices,
 * written "_" (`%getitem, _ = aten.max_pool2d_with_indices.default(...)`). */
Test(fx_import, results_without_getitem_are_written_as_underscores)
{
    expect_replays_like_torch("conv_relu_pool_dce");
}

/* scalar_tensor, zeros and arange recorded with device and pin_memory
 * keywords (dropped by the exporter), a torch.tensor constant
 * (lift_fresh_copy, written as clone) and a wrapped number. */
Test(fx_import, creation_operators_and_tensor_constants_match_torch) { expect_replays_like_torch("creation"); }

/* An MLP training step: cross-entropy, torch.autograd.grad traced into
 * the graph (ones_like with dtype, layout, device, pin_memory and
 * memory_format keywords), and an SGD update. */
Test(fx_import, training_step_with_traced_gradients_matches_torch) { expect_replays_like_torch("train_step"); }

/* split (uneven), chunk, unbind and split_with_sizes return lists, read
 * through getitem in FX: the exporter writes one view call per piece
 * (aten.slice.Tensor, aten.select.int), as tjit's tracer records them. */
Test(fx_import, list_results_become_one_view_per_piece) { expect_replays_like_torch("split_views"); }

/* nn.GRUCell: its gates are column blocks of one product (unsafe_split,
 * exported as slices) that it updates in place, one block times another. */
Test(fx_import, gru_cell_updates_its_gates_in_place_as_torch) { expect_replays_like_torch("gru_cell"); }

/* nn.LSTM returns (output, (h, c)): three outputs in that order. */
Test(fx_import, lstm_outputs_flatten_as_torch_nests_them) { expect_replays_like_torch("lstm"); }

/* A GPT block: qkv split, views recorded as _reshape_alias (exported as
 * view), a causal mask by masked_fill, softmax, tanh GELU. */
Test(fx_import, attention_block_matches_torch) { expect_replays_like_torch("attention_block"); }

/* BatchNorm2d in training mode: native_batch_norm updating its running
 * statistics (constants here) and num_batches_tracked += 1 in place; the
 * empty uint8 tensor torch records beside it, read by nothing, is left out
 * by the exporter. */
Test(fx_import, batch_norm_in_training_matches_torch) { expect_replays_like_torch("batch_norm_train"); }

/* The gradients of a BatchNorm2d net in evaluation mode: the backward takes
 * the empty save_mean / save_invstd its forward returned. */
Test(fx_import, batch_norm_gradients_in_evaluation_match_torch) { expect_replays_like_torch("batch_norm_eval_grads"); }

/* torch 1.13's make_fx records creation operators with layout, device,
 * pin_memory and memory_format keywords (gm.code writes them `layout =
 * torch.strided, device = device(type='cpu')`): the values meaning tjit's
 * None parse as None and print back left out; the others are refused by
 * name, not run as if they were None. */
Test(fx_import, fx_creation_keywords_meaning_none_read_as_none)
{
    const char *text = "graph(%x_1 : f32[2]):\n"
                       "    %ones_like = aten.ones_like.default(%x_1, dtype = torch.float32, layout = torch.strided, "
                       "device = device(type='cpu'), pin_memory = False, memory_format = torch.preserve_format)\n"
                       "    %zeros = aten.zeros.default([2], layout = None, device = 'cpu')\n"
                       "    %clone = aten.clone.default(%x_1, memory_format = torch.contiguous_format)\n"
                       "    %add = aten.add.Tensor(%ones_like, %zeros)\n"
                       "    %add_1 = aten.add.Tensor(%add, %clone)\n"
                       "    return (%add_1,)\n";
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *printed = tj_graph_to_string(g);
    cr_expect(strstr(printed, "%ones_like = aten.ones_like.default(%x_1, dtype = torch.float32, pin_memory = False)\n"),
              "%s", printed);
    cr_expect(strstr(printed, "%zeros = aten.zeros.default([2])\n"), "%s", printed);
    cr_expect(strstr(printed, "%clone = aten.clone.default(%x_1)\n"), "%s", printed);
    tj_tensor *in = test_f32(1, (int64_t[]){2}, (const float[]){1.5f, -2.f}), *out;
    cr_assert_eq(tj_graph_run(g, &in, 1, &out), TJ_OK, "%s", tj_last_error());
    test_expect_f32(out, (const float[]){2.5f, -1.f}, 2, 0);
    free(printed);
    tj_graph_free(g);
}

/* F.unfold / F.fold, repeat_interleave (by an int: torch records it without
 * output_size, written with the traced size) and torch.cdist, with their
 * gradients: im2col, col2im, repeat_interleave.Tensor, _cdist_forward,
 * _cdist_backward */
Test(fx_import, fold_repeat_interleave_and_cdist_with_gradients_match_torch) { expect_replays_like_torch("fold_cdist"); }

Test(fx_import, fx_creation_keywords_off_the_cpu_or_strided_are_named)
{
    static const struct {
        const char *keyword, *needle;
    } refused[] = {
        {"layout = torch.sparse_coo", "aten::zeros_like: argument 'layout' takes None or torch.strided"},
        {"device = device(type='cuda', index=0)", "argument 'device' takes None, device(type='cpu') or 'cpu'"},
        {"device = 'meta'", "argument 'device' takes None, device(type='cpu') or 'cpu'"},
        {"memory_format = torch.channels_last", "argument 'memory_format' takes None, torch.contiguous_format or"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char text[256];
        snprintf(text, sizeof text, "graph(%%x_1 : f32[2]):\n    %%z = aten.zeros_like.default(%%x_1, %s)\n"
                 "    return (%%z,)\n", refused[i].keyword);
        test_expect_error(tj_graph_parse(text), TJ_ERR_PARSE, "line 2", refused[i].needle);
    }
}

/* cross_entropy with label_smoothing takes the mean of masked_select's
 * selection, whose size depends on the targets: the exporter writes that
 * mean in a static form (a sum of where(mask, x, 0) over the count of
 * true elements); a -100 target is ignored. */
Test(fx_import, label_smoothing_mean_of_a_selection_in_a_static_form)
{
    expect_replays_like_torch("smoothed_cross_entropy");
}

/* Python scalars given to the traced function are baked into its calls:
 * their placeholders, read by none, are left out of the text. */
Test(fx_import, python_scalars_baked_into_the_graph) { expect_replays_like_torch("scaled"); }

/* torch.linalg.solve records _linalg_solve_ex and _linalg_check_errors on
 * its info, a call without results: the exporter writes the solve with
 * check_errors=True, which raises as the check does. */
Test(fx_import, linalg_solve_with_its_check_as_check_errors) { expect_replays_like_torch("linalg_solve_checked"); }

/* With class weights, label smoothing divides by the kept targets' weights:
 * gather(weight, 0, masked_select(target, kept)) summed, which the exporter
 * writes as a gather at every position zeroed where the target is ignored. */
Test(fx_import, weighted_label_smoothing_in_a_static_form)
{
    expect_replays_like_torch("weighted_smoothed_cross_entropy");
}

/* cross_entropy of [N, C, T] logits: nll_loss2d_forward on a [N, C, T, 1]
 * view, and nll_loss2d_backward for its gradient (implicit operators: the
 * pixels as nll_loss_forward's rows, decomps/nn.c). */
Test(fx_import, sequence_cross_entropy_and_its_gradient) { expect_replays_like_torch("sequence_cross_entropy"); }
