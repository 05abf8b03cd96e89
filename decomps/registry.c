/* Built-in decompositions: registered into the operator table at start-up
 * (the registry calls tj_register_builtin_decompositions once). Each family's
 * file exports a registration function listed here. */
#include "internal.h"

void tj_register_views_decompositions(void);
void tj_register_linalg_decompositions(void);
void tj_register_nn_norm_decompositions(void);
void tj_register_attention_decompositions(void);
void tj_register_nn_decompositions(void);
void tj_register_inplace_decompositions(void);
void tj_register_elementwise_decompositions(void);
void tj_register_math_decompositions(void);
void tj_register_reductions_decompositions(void);
void tj_register_arith_decompositions(void);
void tj_register_compare_decompositions(void);
void tj_register_movement_decompositions(void);
void tj_register_creation_decompositions(void);
void tj_register_inplace_ops_decompositions(void);
void tj_register_blas_decompositions(void);
void tj_register_pool_decompositions(void);
void tj_register_adaptive_pool_decompositions(void);
void tj_register_conv_decompositions(void);
void tj_register_embedding_decompositions(void);
void tj_register_embedding_bag_decompositions(void);
void tj_register_optim_decompositions(void);
void tj_register_einsum_decompositions(void);
void tj_register_tri_repeat_decompositions(void);
void tj_register_all_any_decompositions(void);
void tj_register_pixel_shuffle_decompositions(void);
void tj_register_overload_decompositions(void);
void tj_register_pad_decompositions(void);
void tj_register_masked_decompositions(void);
void tj_register_repeat_interleave_decompositions(void);
void tj_register_cdist_decompositions(void);
void tj_register_transformer_decompositions(void);
void tj_register_lapack_decompositions(void);
void tj_register_search_decompositions(void);
void tj_register_stats_decompositions(void);
void tj_register_shrink_decompositions(void);
void tj_register_random_decompositions(void);
void tj_register_trilu_indices_decompositions(void);
void tj_register_special_decompositions(void);

void tj_register_builtin_decompositions(void)
{
    tj_register_views_decompositions();
    tj_register_linalg_decompositions();
    tj_register_nn_norm_decompositions();
    tj_register_attention_decompositions();
    tj_register_nn_decompositions();
    tj_register_inplace_decompositions();
    tj_register_elementwise_decompositions();
    tj_register_math_decompositions();
    tj_register_reductions_decompositions();
    tj_register_arith_decompositions();
    tj_register_compare_decompositions();
    tj_register_movement_decompositions();
    tj_register_creation_decompositions();
    tj_register_inplace_ops_decompositions();
    tj_register_blas_decompositions();
    tj_register_pool_decompositions();
    tj_register_adaptive_pool_decompositions();
    tj_register_conv_decompositions();
    tj_register_embedding_decompositions();
    tj_register_embedding_bag_decompositions();
    tj_register_optim_decompositions();
    tj_register_einsum_decompositions();
    tj_register_tri_repeat_decompositions();
    tj_register_all_any_decompositions();
    tj_register_pixel_shuffle_decompositions();
    tj_register_overload_decompositions();
    tj_register_pad_decompositions();
    tj_register_masked_decompositions();
    tj_register_repeat_interleave_decompositions();
    tj_register_cdist_decompositions();
    tj_register_transformer_decompositions();
    tj_register_lapack_decompositions();
    tj_register_search_decompositions();
    tj_register_stats_decompositions();
    tj_register_shrink_decompositions();
    tj_register_random_decompositions();
    tj_register_trilu_indices_decompositions();
    tj_register_special_decompositions();
}
