#!/usr/bin/python3
"""PyTorch reproducer of `tjit train`: the WORKLOADS.md recipe in PyTorch 1.13.

    /usr/bin/python3 bench/torch_train.py mlp|cnn [--epochs N] [--threads T]
        [--seed S] [--data DIR] [--init FILE]

Trains the same model (bench/torch_ref.py's nn.Modules, tjit's parameter
names) on Fashion-MNIST (Debian's dataset-fashion-mnist IDX files, or --data
DIR): pixels scaled to [0, 1], normalised with mean 0.2860, std 0.3530; batch
64, shuffled each epoch (torch.randperm from the seed); cross entropy; SGD lr
0.01, momentum 0.9; PyTorch's default initialisation from torch.manual_seed
(or the parameters of a safetensors file, e.g. one `tjit train --save` or
`tjit bench --export` wrote, with --init). Prints the test accuracy after each
epoch and ends with 'test accuracy: 0.xxxx', like `tjit train`, so that

    build/tools/tjit train cnn --epochs 3 --mode decomposed
    /usr/bin/python3 bench/torch_train.py cnn --epochs 3

compare in one command each.
"""
import argparse
import gzip
import os
import struct
import sys
import time

MEAN, STD = 0.2860, 0.3530
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file of unsigned bytes (gzip-compressed) as a numpy array."""
    import numpy

    with gzip.open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 4 or blob[0] or blob[1] or blob[2] != 8 or not 1 <= blob[3] <= 4:
        sys.exit(f"torch_train: {path} is not an IDX file of unsigned bytes")
    ndim = blob[3]
    shape = struct.unpack(f">{ndim}I", blob[4 : 4 + 4 * ndim])
    data = numpy.frombuffer(blob, dtype=numpy.uint8, offset=4 + 4 * ndim)
    if data.size != int(numpy.prod(shape)):
        sys.exit(f"torch_train: {path} is truncated or has trailing bytes")
    return data.reshape(shape)


def load_split(data_dir, train):
    import torch

    prefix = "train" if train else "t10k"
    images = os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz")
    labels = os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz")
    for p in (images, labels):
        if not os.path.exists(p):
            sys.exit(f"torch_train: {p} not found: install Debian's package with "
                     "`apt-get install dataset-fashion-mnist`, or pass --data DIR")
    x = torch.from_numpy(read_idx(images).copy()).float().div_(255.0).sub_(MEAN).div_(STD).unsqueeze(1)
    y = torch.from_numpy(read_idx(labels).copy()).long()
    return x, y


def accuracy(model, x, y, flatten):
    import torch

    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), 1000):
            xb = x[i : i + 1000]
            if flatten:
                xb = xb.flatten(1)
            correct += (model(xb).argmax(1) == y[i : i + 1000]).sum().item()
    return correct / len(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=["mlp", "cnn"])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0, help="threads for PyTorch, OpenMP and OpenBLAS (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--init", help="start from the parameters in this safetensors file")
    args = ap.parse_args()
    if args.epochs < 1 or args.batch_size < 1 or args.threads < 0:
        ap.error("--epochs and --batch-size must be at least 1, --threads at least 0")
    if args.threads:
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[k] = str(args.threads)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_train: PyTorch is not installed (Debian: apt-get install python3-torch)")
        return 0
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_ref import build_models, load_safetensors

    if args.threads:
        torch.set_num_threads(args.threads)
    train_x, train_y = load_split(args.data, True)
    test_x, test_y = load_split(args.data, False)
    torch.manual_seed(args.seed)
    model = build_models()[args.model]()
    if args.init:
        model.load_state_dict(load_safetensors(args.init), strict=True)
    flatten = args.model == "mlp"
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(args.seed)
    print(f"training {args.model} on Fashion-MNIST ({len(train_x)} images) with PyTorch {torch.__version__}, "
          f"batch {args.batch_size}, {torch.get_num_threads()} thread(s), seed {args.seed}", flush=True)
    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        model.train()
        perm = torch.randperm(len(train_x), generator=gen)
        running = None
        for i in range(0, len(train_x), args.batch_size):
            idx = perm[i : i + args.batch_size]
            xb, yb = train_x[idx], train_y[idx]
            if flatten:
                xb = xb.flatten(1)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        model.eval()
        acc = accuracy(model, test_x, test_y, flatten)
        print(f"epoch {epoch}: loss {running:.4f}, test accuracy {acc:.4f} ({time.time() - t0:.1f} s)", flush=True)
    print(f"test accuracy: {acc:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
