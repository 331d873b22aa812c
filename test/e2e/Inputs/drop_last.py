"""Checks a --no-drop-last epoch of tiny_classifier (lr 0, so the weights
are the checkpoint's throughout) against a hand computation in float64:
the per-sample cross-entropies c_i of all N samples from the checkpoint's
weights; the logged step losses l_s over batches of n_s real samples must
satisfy sum(n_s * l_s) == sum(c_i) (every sample once, each batch's loss the
mean over its real samples: an unmasked padded row would count twice).
Usage: drop_last.py METRICS.jsonl MODEL.safetensors X.npy Y.npy BATCH
Also prints the steps per epoch PyTorch's DataLoader takes for N and BATCH
with drop_last False and True."""
import json
import math
import struct
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from e2e import read_safetensors  # noqa: E402


def read_npy(path):
    with open(path, "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<H", raw[8:10])
    header = eval(raw[10:10 + hlen].decode())  # a Python literal dict
    body = raw[10 + hlen:]
    fmt = {"<f4": "f", "<i8": "q"}[header["descr"]]
    n = len(body) // struct.calcsize(fmt)
    return header["shape"], list(struct.unpack("<%d%s" % (n, fmt), body))


def main(metrics, model, xpath, ypath, batch):
    batch = int(batch)
    _, t = read_safetensors(model)
    w = struct.unpack("<6f", t["fc.weight"][1])
    b = struct.unpack("<2f", t["fc.bias"][1])
    (n, f), x = read_npy(xpath)
    _, y = read_npy(ypath)
    total = 0.0
    for i in range(n):
        row = x[i * f:(i + 1) * f]
        z = [sum(w[c * f + k] * row[k] for k in range(f)) + b[c]
             for c in range(2)]
        m = max(z)
        total += m + math.log(sum(math.exp(v - m) for v in z)) - z[y[i]]
    losses = [j["loss"] for j in map(json.loads, open(metrics)) if "loss" in j]
    sizes = [min(batch, n - s * batch) for s in range(len(losses))]
    weighted = sum(k * l for k, l in zip(sizes, losses))
    print("DataLoader steps per epoch: drop_last=False %d, drop_last=True %d"
          % (math.ceil(n / batch), n // batch))
    print("steps %d, samples %s" % (len(losses), sizes))
    rel = abs(weighted - total) / abs(total)
    print("sum(n_s * loss_s) %.7g, sum of per-sample losses %.7g: %s"
          % (weighted, total, "ok" if rel < 1e-5 else "MISMATCH"))


if __name__ == "__main__":
    main(*sys.argv[1:])
