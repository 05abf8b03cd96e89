/* cnn: Conv2d(1->16, k5, pad 2) . ReLU . MaxPool2d(2) . Conv2d(16->32, k5,
 * pad 2) . ReLU . MaxPool2d(2) . flatten . Linear(1568->128) . ReLU .
 * Linear(128->10). */
#include "layers.h"

static tj_status cnn_init(model *m)
{
    tj_status st = conv2d_params(m, "conv1", 1, 16, 5);
    if (st == TJ_OK) st = conv2d_params(m, "conv2", 16, 32, 5);
    if (st == TJ_OK) st = linear_params(m, "fc1", 1568, 128, true);
    if (st == TJ_OK) st = linear_params(m, "fc2", 128, 10, true);
    return st;
}

static tj_tensor *conv_relu_pool(tj_tensor *x, tj_tensor *w, tj_tensor *b)
{
    static const int64_t one[2] = {1, 1}, pad[2] = {2, 2}, two[2] = {2, 2}, zero[2] = {0, 0};
    x = tj_relu(tj_conv2d(x, w, b, one, pad, one, 1));
    return tj_max_pool2d(x, two, two, zero, one, false);
}

static tj_tensor *cnn_forward(const model *m, tj_tensor *const *p, tj_tensor *x)
{
    (void)m;
    x = conv_relu_pool(x, p[0], p[1]);
    x = conv_relu_pool(x, p[2], p[3]);
    x = tj_flatten(x, 1, -1);
    x = tj_relu(tj_linear(x, p[4], p[5]));
    return tj_linear(x, p[6], p[7]);
}

const model_def cnn_def = {
    .id = "cnn",
    .x_dtype = TJ_FLOAT32,
    .x_ndim = 4,
    .x_shape = {64, 1, 28, 28},
    .y_ndim = 1,
    .y_shape = {64},
    .trainable = true,
    .init = cnn_init,
    .forward = cnn_forward,
    .loss = classification_loss,
};
