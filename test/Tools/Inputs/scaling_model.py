"""Writes large graph.model files for the compile-scaling test.

  scaling_model.py chain N        elementwise chain of N ops (add/mul/relu
                                  cycling) on one input and one parameter
  scaling_model.py params N       N parameters, each summed into the loss
  scaling_model.py unused N       one used parameter and N - 1 unused ones
"""
import sys

T = "tensor<4x8xf32>"


def chain(n, out):
    out.append('  %x = graph.input "x" : ' + T)
    out.append('  %w = graph.param "w" init(#graph.zeros) : ' + T)
    prev = "%x"
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(f"  %v{i} = graph.add {prev}, %w : {T}, {T} -> {T}")
        elif kind == 1:
            out.append(f"  %v{i} = graph.mul {prev}, %w : {T}, {T} -> {T}")
        else:
            out.append(f"  %v{i} = graph.relu {prev} : {T}")
        prev = f"%v{i}"
    out.append(f"  %loss = graph.reduce_sum {prev} : {T} -> tensor<f32>")
    out.append(f"  graph.output loss = %loss : tensor<f32>")


def params(n, out, used):
    out.append('  %x = graph.input "x" : ' + T)
    for i in range(n):
        out.append(f'  %p{i} = graph.param "p{i}" init(#graph.zeros) : {T}')
    prev = "%x"
    for i in range(n if used else 1):
        out.append(f"  %s{i} = graph.add {prev}, %p{i} : {T}, {T} -> {T}")
        prev = f"%s{i}"
    out.append(f"  %loss = graph.reduce_sum {prev} : {T} -> tensor<f32>")
    out.append(f"  graph.output loss = %loss : tensor<f32>")


def main():
    what, n = sys.argv[1], int(sys.argv[2])
    out = [f"graph.model @scale_{what}_{n} {{"]
    if what == "chain":
        chain(n, out)
    elif what in ("params", "unused"):
        params(n, out, what == "params")
    else:
        sys.exit(f"unknown kind {what}")
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
