"""A failure's shape: a message without the program's own names and numbers."""


def test_a_message_s_own_names_and_numbers_do_not_tell_errors_apart():
    from mutator.reduce.shape import masked, program_names

    assert masked("TypeError: Shadow is not hashable\n\nfrom user code: ...", {"Shadow"}) == \
        masked("TypeError: Box is not hashable", {"Box"}) == "TypeError: <name> is not hashable"
    assert masked("<P object at 0x7f00ab>: expected 3 dims, got 12") == masked("<P object at 0x1>: expected 1 dims, got 2")
    assert masked("issubclass() arg 1 must be a class") != masked("'int' object is not subscriptable")
    assert {"Shadow", "fn", "x", "target", "seen"} <= program_names(
        "import torch\nclass Shadow:\n    def fn(self, x):\n        self.target = x\nseen = []\n")
    assert "torch" not in program_names("import torch\n")
