"""Writes model files that MLIR 22's parser cannot survive unguarded, for
parse-limits.test: python hostile_mlir.py KIND N [EXAMPLE.mlir] > out.mlir."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])


def attr_on_input(attr):
    # A valid model whose input carries the discardable attribute |attr|:
    # the model's `{` and the attribute dictionary's `{` are 2 levels.
    return ('graph.model @m {\n'
            '  %x = graph.input "x" {a = ' + attr + '} : tensor<2xf32>\n'
            '  %w = graph.param "w" init(#graph.ones) : tensor<2xf32>\n'
            '  %y = graph.mul %x, %w : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n'
            '  %l = graph.reduce_sum %y : tensor<2xf32> -> tensor<f32>\n'
            '  graph.output loss = %l : tensor<f32>\n'
            '}\n')


if kind == 'example-attr':  # an example, |attr| on its first typed op
    text = open(sys.argv[3]).read()
    out = text.replace(' : tensor<', ' {x = %s} : tensor<' % sys.argv[4], 1)
    assert out != text
    sys.stdout.write(out)
elif kind == 'regions':  # module { module { ... } }
    print('module {' * n + '}' * n)
elif kind == 'generic-regions':  # "builtin.module"() ({ ... }) : () -> ()
    print('"builtin.module"() ({' * n + '}) : () -> ()' * n)
elif kind == 'brackets':  # n nested [ in an attribute
    sys.stdout.write(attr_on_input('[' * n + ']' * n))
elif kind == 'in-strings-and-comments':  # n brackets that are not brackets
    sys.stdout.write('// ' + '{' * n + ' array<index: 1>\n' +
                     attr_on_input('"' + '[(<{' * n + '\\" array<index: 1>"'))
elif kind == 'affine-plus':  # d0 + d0 + ... : no bracket, deep recursion
    print('#m = affine_map<(d0) -> (d0' + ' + d0' * n + ')>')
elif kind == 'affine-neg':  # - - - d0
    print('#m = affine_map<(d0) -> (' + '-' * n + 'd0)>')
elif kind == 'split-unclosed':  # chunks of n unclosed { for --split-input-file
    print('\n// -----\n'.join(['module {' * n] * 3))
else:
    sys.exit('unknown kind ' + kind)
