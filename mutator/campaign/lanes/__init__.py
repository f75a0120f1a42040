"""The lanes beside the fuzz loop, one module each; the interface they meet is
`mutator.campaign.lane` (`Lane`, and `Loop`, what a lane may use of the loop).

    repair      an invalid mutant made valid: the rules (in the worker that found it
                invalid), else the LLM, beside the loop
    llm         family L: mutants the LLM writes, chosen by recent yield like any family
    peers       AFL-style sync: the peers' entries and signatures, at the start, every
                --sync-every and once before the session stops
    reducing    every new finding reduced in the background, recorded by the loop

`mutate fuzz` (`mutator/commands/fuzz.py`) makes the ones a session runs with and passes
them to the `Fuzzer`; a new lane is a module here and one line there.
"""
