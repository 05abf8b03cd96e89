/* mlp: Linear(784->256) . ReLU . Linear(256->256) . ReLU . Linear(256->10). */
#include "layers.h"

static tj_status mlp_init(model *m)
{
    tj_status st = linear_params(m, "fc1", 784, 256, true);
    if (st == TJ_OK) st = linear_params(m, "fc2", 256, 256, true);
    if (st == TJ_OK) st = linear_params(m, "fc3", 256, 10, true);
    return st;
}

static tj_tensor *mlp_forward(const model *m, tj_tensor *const *p, tj_tensor *x)
{
    (void)m;
    x = tj_flatten(x, 1, -1);
    x = tj_relu(tj_linear(x, p[0], p[1]));
    x = tj_relu(tj_linear(x, p[2], p[3]));
    return tj_linear(x, p[4], p[5]);
}

const model_def mlp_def = {
    .id = "mlp",
    .x_dtype = TJ_FLOAT32,
    .x_ndim = 2,
    .x_shape = {64, 784},
    .y_ndim = 1,
    .y_shape = {64},
    .trainable = true,
    .init = mlp_init,
    .forward = mlp_forward,
    .loss = classification_loss,
};
