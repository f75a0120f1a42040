# expect: PASS
# expect on 2.14: MISMATCH
# expect on 2.13: MISMATCH
# why: a class attribute is deleted between two calls inside main(), so the instance's lookup falls through to the base class; Dynamo guards type(y).__dict__ and recompiles once for a state no earlier call had (the class's contents are part of the state), and every result matches eager

import torch


def main():
    class Plain:
        gain = 2.0

    class Loud(Plain):
        gain = 5.0

    def amplify(x, y):
        return x * y.gain

    opt = torch.compile(amplify, backend="eager")
    speaker = Loud()
    x = torch.arange(4.0)
    outs = [opt(x, speaker)]
    del Loud.gain
    outs.append(opt(x, speaker))
    Loud.gain = 7.0
    outs.append(opt(x, speaker))
    print([o.tolist() for o in outs])


main()
