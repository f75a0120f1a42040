"""mutator: a mutation-based, coverage-guided fuzzer for TorchDynamo (docs/design.md).

The packages are layers; each imports only the ones listed before it (checked by
tests/unit/test_layers.py):

    core        what a program and one run are: programs, values, observations, verdicts,
                features, atomic storage, the parse lock (torch-free)
    runtime     inside a worker's forked child: runs one program (imports torch)
    mutation    the operators and the Mutator that picks them
    llm         the optional, budgeted chat-completions client
    repair      invalid mutants made valid again: rules, then the LLM
    judge       one program judged: the check (runs, confirmation), the oracle, comparison
    exec        where programs run: the local warm pool, Ray actors, the sandbox
    findings    a bug's identity and its directory: signatures, the store, known bugs,
                root-cause groups, canonical forms
    reduce      a finding made minimal: passes, the reducer, what matters, reproducers
    report      what `mutate report` writes: report.md, its tables, the versions
    harvest     programs from the user's test files and reproducers, and from the LLM
    campaign    the fuzz loop and its lanes, the campaign directory, corpus, schedule, sync
    commands    the `mutate` command line: the only place where parts are wired together
"""
