# expect: PASS
# why: the program's own backends keep what Dynamo hands them (the last GraphModule, its FakeTensor example inputs, a count, a list of graphs on a recorder object); those globals exist only when compiled (eager never calls a backend) and are the compiler's output, not compared; the values the program computes and checks agree

import torch

LAST_GRAPH = None
LAST_INPUTS = None
GRAPHS_SEEN = 0


def keep_last(gm, example_inputs):
    global LAST_GRAPH, LAST_INPUTS, GRAPHS_SEEN
    LAST_GRAPH = gm
    LAST_INPUTS = example_inputs
    GRAPHS_SEEN += 1
    return gm.forward


class GraphLog:
    def __init__(self):
        self.graphs = []
        self.op_names = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        self.op_names.extend(str(node.target) for node in gm.graph.nodes if node.op == "call_function")
        return gm.forward


log = GraphLog()


def mix(x, y):
    return (x * y).relu() + y.mean()


def spread(x):
    return torch.cat([x, -x]).cumsum(0)


fast_mix = torch.compile(mix, backend=keep_last)
fast_spread = torch.compile(spread, backend=log)
x, y = torch.linspace(-1, 1, 6), torch.full((6,), 2.0)
first = fast_mix(x, y)
second = fast_spread(first)
torch.testing.assert_close(first, mix(x, y))
torch.testing.assert_close(second, spread(mix(x, y)))
print("mix", first.tolist())
print("spread", second[-1].item())
