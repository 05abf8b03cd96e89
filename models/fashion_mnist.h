/* Fashion-MNIST as Debian's dataset-fashion-mnist installs it. */
#ifndef TJIT_MODELS_FASHION_MNIST_H
#define TJIT_MODELS_FASHION_MNIST_H

#include "tjit/tjit.h"

#define FASHION_MNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

typedef struct fashion_mnist {
    tj_tensor *images; /**< f32 [N, 1, 28, 28], scaled to [0,1] then (x - 0.2860) / 0.3530 */
    tj_tensor *labels; /**< i64 [N], 0..9 */
    int64_t n;
} fashion_mnist;

/** Loads the training (60,000) or test (10,000) split from `dir` (NULL: the
 * Debian location). Missing files give TJ_ERR_IO with a message naming the
 * package; corrupt ones, or files holding no image, TJ_ERR_PARSE. The
 * tensors belong to the caller (fashion_mnist_free). */
tj_status fashion_mnist_load(const char *dir, bool train, fashion_mnist *out);
/** Loads both splits, or none: on failure (errors as fashion_mnist_load)
 * nothing stays allocated and both are empty. */
tj_status fashion_mnist_load_splits(const char *dir, fashion_mnist *train, fashion_mnist *test);
void fashion_mnist_free(fashion_mnist *d);

#endif
