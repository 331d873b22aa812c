#!/usr/bin/env python3
"""Exports the PyTorch round-trip fixtures of test/Import/torch.

Needs PyTorch, onnx and onnxruntime (scripts/setup.sh installs them into the
build venv with AMPC_WITH_TORCH=1). For each model (MODELS below: mlp, cnn,
gpt, attn, deconv, rnn, encoder, textcnn) it writes into OUT/MODEL/:

  model.onnx          torch.onnx.export of the nn.Module (the legacy
                      TorchScript exporter, dynamo=False, opset 17; see
                      docs/import.md), in train mode: BatchNorm uses the
                      batch's statistics
  x.npy, label.npy    a fixed batch (seeded)
  expected.safetensors
                      loss     PyTorch's FP32 cross-entropy (mean) on the batch
                      grad.N   d loss / d N for every parameter N (the
                               state_dict names, which are the ONNX
                               initializer names)
                      __metadata__ ort_loss: onnxruntime's loss from model.onnx
                      on the same batch (a check of the export itself)

  model_dynamo.onnx   the same module through torch.onnx.export(dynamo=True,
                      optimize=False): the dynamo exporter without its graph
                      optimizer, which keeps the state_dict names (needs
                      onnxscript); its node metadata (stack traces) and
                      value_info are dropped to keep the file small
                      (nothing the import reads)

  make_fixtures.py OUT [--models mlp,cnn,...]

Deterministic: the same PyTorch gives the same bytes for the batch and
within float rounding the same numbers.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.tanh(self.fc2(F.relu(self.fc1(x)))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


class Block(nn.Module):
    """A GPT block: pre-norm causal self-attention and an MLP, with residuals."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class HandAttention(nn.Module):
    """Causal self-attention as GPT code writes it by hand (nanoGPT): a
    registered tril buffer, q @ k^T * 1/sqrt(d), masked_fill with -inf, and
    einsum for the output projection."""

    def __init__(self, d=16, heads=2, seq=8, classes=6):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Parameter(torch.randn(d, d) * 0.2)
        self.head = nn.Linear(d, classes)
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        y = torch.einsum("btd,ed->bte", y, self.proj)
        return self.head(torch.tanh(y))


class GPT(nn.Module):
    def __init__(self, vocab=32, seq=8, d=16, heads=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.1)
        self.block = Block(d, heads)
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        return self.head(self.ln_f(self.block(self.tok(idx) + self.pos)))


class Deconv(nn.Module):
    """A small encoder-decoder: a strided Conv2d down, a ConvTranspose2d
    (stride 2, padding 1, output_padding 1) back up, then a classifier."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1,
                                     output_padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        x = F.relu(self.up(F.relu(self.down(x))))
        return self.fc(torch.flatten(x, 1))


class Recurrent(nn.Module):
    """A sequence tagger with PyTorch's three recurrent layers: a two-layer
    bidirectional LSTM (batch_first), a GRU and a ReLU RNN over its output,
    and a classifier on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True,
                            bidirectional=True)
        self.gru = nn.GRU(24, 10, batch_first=True)
        self.rnn = nn.RNN(10, 6, nonlinearity="relu", batch_first=True)
        self.head = nn.Linear(6, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        y, _ = self.rnn(y)
        return self.head(y)


class Encoder(nn.Module):
    """Two nn.TransformerEncoderLayer (post-norm, then pre-norm) with a
    key-padding mask kept as a buffer (a row per batch position: the last
    two tokens of sample 0 and the last of sample 1 are padding), and a
    classifier on every token. The TorchScript exporter writes each layer's
    train-mode Dropout (p = 0) with a mask output nothing reads, and
    nn.MultiheadAttention's unflatten as an int64 Mod of constants."""

    def __init__(self):
        super().__init__()
        self.post = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                               batch_first=True)
        self.pre = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                              batch_first=True, norm_first=True)
        kpm = torch.zeros(4, 8, dtype=torch.bool)
        kpm[0, 6:] = True
        kpm[1, 7:] = True
        self.register_buffer("kpm", kpm)
        self.head = nn.Linear(16, 6)

    def forward(self, x):
        y = self.post(x, src_key_padding_mask=self.kpm)
        return self.head(self.pre(y, src_key_padding_mask=self.kpm))


class TextCNN(nn.Module):
    """1-D convolutions over a [N, C, L] sequence, as a text or audio CNN
    has them: Conv1d (padding 1), MaxPool1d, a strided Conv1d, AvgPool1d,
    a global max over the sequence, then F.normalize (ReduceL2) and a
    classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(8, 12, 3, padding=1)
        self.conv2 = nn.Conv1d(12, 12, 3, stride=2, padding=1)
        self.head = nn.Linear(12, 5)

    def forward(self, x):
        y = F.max_pool1d(torch.relu(self.conv1(x)), 2)
        y = F.avg_pool1d(torch.relu(self.conv2(y)), 2)
        y = F.adaptive_max_pool1d(y, 1).squeeze(-1)
        return self.head(4.0 * F.normalize(y, dim=-1))


def batch(name, g):
    if name == "mlp":
        return torch.randn(8, 16, generator=g), torch.randint(0, 4, (8,), generator=g)
    if name in ("cnn", "deconv"):
        return torch.randn(4, 3, 8, 8, generator=g), torch.randint(0, 5, (4,), generator=g)
    if name == "attn":
        return torch.randn(4, 8, 16, generator=g), torch.randint(0, 6, (4, 8), generator=g)
    if name == "rnn":
        return torch.randn(4, 7, 8, generator=g), torch.randint(0, 5, (4, 7), generator=g)
    if name == "textcnn":
        return torch.randn(4, 8, 12, generator=g), torch.randint(0, 5, (4,), generator=g)
    if name == "encoder":
        return torch.randn(4, 8, 16, generator=g), torch.randint(0, 6, (4, 8), generator=g)
    idx = torch.randint(0, 32, (4, 9), generator=g)
    return idx[:, :-1].contiguous(), idx[:, 1:].contiguous()


MODELS = {"mlp": MLP, "cnn": CNN, "gpt": GPT, "attn": HandAttention,
          "deconv": Deconv, "rnn": Recurrent, "encoder": Encoder,
          "textcnn": TextCNN}


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": metadata}
    blobs, offset = [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def export(model, x, path):
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["logits"], dynamo=False,
                      opset_version=17, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)


def export_dynamo(model, x, path):
    import onnx
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["logits"], dynamo=True, optimize=False,
                      external_data=False, verbose=False)
    m = onnx.load(path)

    def strip(g):
        for n in g.node:
            del n.metadata_props[:]
            n.doc_string = ""
        del g.value_info[:]

    strip(m.graph)
    del m.metadata_props[:]
    m.doc_string = ""
    onnx.save(m, path)


def make(name, out):
    torch.manual_seed(0)
    model = MODELS[name]().train()
    x, label = batch(name, torch.Generator().manual_seed(1))
    os.makedirs(out, exist_ok=True)
    # Export first: the TorchScript exporter runs the module, and BatchNorm's
    # running statistics move; the loss and gradients use the same weights.
    state = {k: v.clone() for k, v in model.state_dict().items()}
    export(model, x, os.path.join(out, "model.onnx"))
    model.load_state_dict(state)
    export_dynamo(model, x, os.path.join(out, "model_dynamo.onnx"))
    model.load_state_dict(state)
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), label.reshape(-1))
    loss.backward()
    tensors = {"loss": loss.detach().reshape(())}
    for n, p in model.named_parameters():
        tensors["grad." + n] = p.grad.detach()
    meta = {"torch": torch.__version__, "exporter": "torchscript"}
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(os.path.join(out, "model.onnx"),
                                    providers=["CPUExecutionProvider"])
        lo = torch.from_numpy(sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0])
        ol = F.cross_entropy(lo.reshape(-1, lo.shape[-1]), label.reshape(-1))
        meta["ort_loss"] = "%.9g" % ol.item()
    except ImportError:
        pass
    write_safetensors(os.path.join(out, "expected.safetensors"), tensors, meta)
    np.save(os.path.join(out, "x.npy"), x.numpy())
    np.save(os.path.join(out, "label.npy"), label.numpy())
    print("%s: loss %.9g (onnxruntime %s), %d parameters" % (
        name, loss.item(), meta.get("ort_loss", "-"), len(tensors) - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args()
    for name in a.models.split(","):
        make(name, os.path.join(a.out, name))


if __name__ == "__main__":
    main()
