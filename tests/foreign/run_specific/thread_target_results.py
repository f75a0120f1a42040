# expect: PASS
# why: two threading.Thread(target=...) threads in a global list run the compiled function and store results keyed by index; thread idents live in a global dict but are never printed

import threading
import torch

torch.manual_seed(5)
inputs = [torch.randn(3, 3) for _ in range(2)]
results = {}
thread_ids = {}


def sym_part(m):
    return (m + m.T) * 0.5


opt = torch.compile(sym_part, backend="eager")


def job(i):
    thread_ids[i] = threading.get_ident()
    results[i] = opt(inputs[i])


threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
    t.join()

for i in range(2):
    torch.testing.assert_close(results[i], sym_part(inputs[i]))
    assert torch.equal(results[i], results[i].T)
print("symmetric results:", len(results), "threads seen:", len(thread_ids))
