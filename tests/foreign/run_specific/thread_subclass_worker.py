# expect: PASS
# why: a threading.Thread subclass kept in a global calls the compiled function in its run(); results equal eager and the thread id stored globally is run-specific and not compared

import threading
import torch


def smooth(x):
    return (x[:-1] + x[1:]) / 2


compiled_smooth = torch.compile(smooth, backend="eager")


class Worker(threading.Thread):
    def __init__(self, data):
        super().__init__(name="smoother")
        self.data = data
        self.result = None
        self.ident_seen = None

    def run(self):
        self.ident_seen = threading.get_ident()
        self.result = compiled_smooth(self.data)


worker = Worker(torch.arange(6.0))
worker.start()
worker.join()

assert worker.result is not None
torch.testing.assert_close(worker.result, smooth(torch.arange(6.0)))
print(worker.name, worker.result.tolist())
