#!/usr/bin/env python3
"""Writes a small ResNet (torchvision's BasicBlock layout) for 1x28x28 images
as an ampc model file.

    python3 gen_resnet.py > resnet.mlir

The checked-in model file is this script's output; test/Examples checks it
stays in sync. Architecture: conv 3x3 -> batch_norm -> relu stem, one
BasicBlock per stage (conv 3x3 -> bn -> relu -> conv 3x3 -> bn, plus the
input, through a strided conv 1x1 -> bn where the shape changes, then relu),
stages at widths 16/32/64 with stride 1/2/2 (28x28, 14x14, 7x7), global
average pooling (reduce_mean over H and W), a linear classifier and
cross_entropy. Names as torchvision's resnet state_dict (conv1, bn1,
layerN.0.conv1, layerN.0.downsample.0/1, fc); convolutions are initialised
as torchvision's (kaiming_normal, fan_out, relu), batch norms with ones and
zeros, the classifier as nn.Linear.
"""
import argparse
import sys


class Writer:
    def __init__(self):
        self.lines = []

    def emit(self, text):
        self.lines.append("  " + text)

    def value(self, name, text):
        self.emit(f"%{name} = {text}")
        return f"%{name}"


def t(shape, ty="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + ty + ">"


def generate(batch, widths, classes, momentum):
    w = Writer()
    B = batch
    ssa = lambda n: n.replace(".", "_")
    conv_init = '#graph.kaiming_normal<mode = "fan_out", nonlinearity = "relu">'
    linear_init = "#graph.kaiming_uniform<a = 2.23606797749979>"

    def param(name, shape, init):
        return w.value(ssa(name), f'graph.param "{name}" init({init}) : {t(shape)}')

    def buffer(name, shape, init):
        return w.value(ssa(name), f'graph.buffer "{name}" init({init}) : {t(shape)}')

    # Parameters first, in state_dict order, then the computation.
    params = {}

    def conv_params(name, cin, cout, k):
        params[name] = param(name + ".weight", [cout, cin, k, k], conv_init)

    def bn_params(name, c):
        params[name] = (param(name + ".weight", [c], "#graph.ones"),
                        param(name + ".bias", [c], "#graph.zeros"),
                        buffer(name + ".running_mean", [c], "#graph.zeros"),
                        buffer(name + ".running_var", [c], "#graph.ones"))

    image = w.value("image", f'graph.input "image" : {t([B, 1, 28, 28])}')
    label = w.value("label", f'graph.input "label" : {t([B], "i64")}')
    conv_params("conv1", 1, widths[0], 3)
    bn_params("bn1", widths[0])
    stages = []
    cin = widths[0]
    for i, cout in enumerate(widths):
        stride = 1 if i == 0 else 2
        p = f"layer{i + 1}.0."
        conv_params(p + "conv1", cin, cout, 3)
        bn_params(p + "bn1", cout)
        conv_params(p + "conv2", cout, cout, 3)
        bn_params(p + "bn2", cout)
        down = stride != 1 or cin != cout
        if down:
            conv_params(p + "downsample.0", cin, cout, 1)
            bn_params(p + "downsample.1", cout)
        stages.append((p, cin, cout, stride, down))
        cin = cout
    fc_w = param("fc.weight", [classes, widths[-1]], linear_init)
    bound = widths[-1] ** -0.5  # nn.Linear's bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    fc_b = param("fc.bias", [classes], f"#graph.uniform<a = {-bound:.9e}, b = {bound:.9e}>")

    n = [0]

    def fresh(base):
        n[0] += 1
        return f"{base}{n[0]}"

    def conv(x, xs, name, cout, k, stride):
        pad = k // 2
        hw = (xs[2] + 2 * pad - k) // stride + 1
        ys = [B, cout, hw, hw]
        attrs = f"padding = array<i64: {pad}, {pad}>"
        if stride != 1:
            attrs += f", stride = array<i64: {stride}, {stride}>"
        wt = params[name]
        return w.value(fresh("c"), f"graph.conv2d {x}, {wt} {{{attrs}}} : {t(xs)}, "
                                   f"{t([cout, xs[1], k, k])} -> {t(ys)}"), ys

    def bn(x, xs, name):
        g, b, m, v = params[name]
        c = [xs[1]]
        # num_batches_tracked: PyTorch's third BatchNorm buffer, so the
        # checkpoint loads into torch.nn.BatchNorm2d with strict=True.
        return w.value(fresh("n"), f"graph.batch_norm {x}, {m}, {v}, {g}, {b} {{eps = 1.000000e-05, "
                                   f"momentum = {momentum:.6e}, "
                                   f"num_batches_tracked = \"{name}.num_batches_tracked\"}} : "
                                   f"{t(xs)}, {t(c)}, {t(c)}, {t(c)}, "
                                   f"{t(c)} -> {t(xs)}")

    def relu(x, xs):
        return w.value(fresh("r"), f"graph.relu {x} : {t(xs)}")

    w.lines.append("")
    w.lines.append("  // stem")
    xs = [B, 1, 28, 28]
    x, xs = conv(image, xs, "conv1", widths[0], 3, 1)
    x = relu(bn(x, xs, "bn1"), xs)
    for p, ci, co, stride, down in stages:
        w.lines.append(f"  // {p[:-1]}: BasicBlock {ci} -> {co}, stride {stride}")
        h, hs = conv(x, xs, p + "conv1", co, 3, stride)
        h = relu(bn(h, hs, p + "bn1"), hs)
        h, hs = conv(h, hs, p + "conv2", co, 3, 1)
        h = bn(h, hs, p + "bn2")
        if down:
            s, ss = conv(x, xs, p + "downsample.0", co, 1, stride)
            s = bn(s, ss, p + "downsample.1")
        else:
            s = x
        x = relu(w.value(fresh("a"), f"graph.add {h}, {s} : {t(hs)}, {t(hs)} -> {t(hs)}"), hs)
        xs = hs
    w.lines.append("  // head: global average pooling, classifier")
    pooled = w.value("pooled", f"graph.reduce_mean {x} {{axes = array<i64: 2, 3>}} : {t(xs)} -> {t([B, xs[1]])}")
    logits = w.value("logits", f"graph.linear {pooled}, {fc_w}, {fc_b} : {t([B, xs[1]])}, "
                               f"{t([classes, xs[1]])}, {t([classes])} -> {t([B, classes])}")
    loss = w.value("loss", f"graph.cross_entropy {logits}, {label} : {t([B, classes])}, {t([B], 'i64')} -> {t([])}")
    w.emit(f"graph.output loss = {loss} : {t([])}, logits = {logits} : {t([B, classes])}")

    header = [
        f"// ResNet for 1x28x28 images (Fashion-MNIST): BasicBlock stages {'/'.join(map(str, widths))}, "
        f"batch_norm, batch {B}.",
        "// Generated by examples/resnet/gen_resnet.py; edit the script, not this file.",
        "graph.model @resnet {",
    ]
    return "\n".join(header + w.lines + ["}"]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--widths", default="16,32,64", help="stage widths (stride 1, then 2)")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--momentum", type=float, default=0.1, help="batch_norm momentum")
    a = ap.parse_args()
    widths = [int(v) for v in a.widths.split(",")]
    sys.stdout.write(generate(a.batch, widths, a.classes, a.momentum))


if __name__ == "__main__":
    main()
