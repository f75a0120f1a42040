from pathlib import Path

import pytest

from mutator.core.program import Program, ProgramError, ProgramForm, discover, load_program, load_programs

HARNESS = """
import torch
def fn(x):
    return x + 1
def inputs():
    return (torch.ones(2),)
"""


@pytest.mark.parametrize("source", [
    "import torch\n@torch.compile\ndef f(x):\n    return x\nprint(f(torch.ones(1)))\n",
    "import torch\nf = torch.compile(lambda x: x, fullgraph=True)\n",
    "import torch\n@torch.compile(backend='inductor')\ndef f(x):\n    return x\n",
    "import torch._dynamo\n@torch._dynamo.optimize('eager')\ndef f(x):\n    return x\n",
    "from torch import compile\nf = compile(abs)\n",
])
def test_script_form_is_any_file_that_calls_torch_compile(source):
    assert Program.from_source(source, "s.py").form is ProgramForm.SCRIPT


def test_harness_form_needs_fn_and_inputs():
    assert Program.from_source(HARNESS, "h.py").form is ProgramForm.HARNESS


def test_module_instance_as_fn_is_harness():
    source = "import torch\nclass M(torch.nn.Module):\n    pass\nfn = M()\ndef inputs():\n    return ()\n"
    assert Program.from_source(source, "h.py").form is ProgramForm.HARNESS


def test_fn_without_inputs_says_what_to_add():
    with pytest.raises(ProgramError, match=r"h\.py: defines fn but no inputs\(\)"):
        Program.from_source("def fn(x):\n    return x\n", "h.py")


def test_neither_form_names_the_file_and_the_readme():
    with pytest.raises(ProgramError, match=r"x\.py: defines neither .* see seeds/README\.md"):
        Program.from_source("import re\nre.compile('a')\n", "x.py")


def test_syntax_error_names_file_and_line():
    with pytest.raises(ProgramError, match=r"bad\.py:2: does not parse"):
        Program.from_source("x = 1\ndef (:\n", "bad.py")


def test_non_utf8_file_names_the_offending_byte(tmp_path: Path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# caf\xe9\nimport torch\n")
    with pytest.raises(ProgramError, match=r"latin\.py: not UTF-8 text \(byte 0xe9 at offset 5\)"):
        load_program(path)


def test_batch_keeps_going_past_bad_files(tmp_path: Path):
    (tmp_path / "good.py").write_text(HARNESS)
    (tmp_path / "bad.py").write_text("def (:\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "also_good.py").write_text(HARNESS)
    programs, errors = load_programs([tmp_path])
    assert [Path(p.name).name for p in programs] == ["good.py", "also_good.py"]
    assert len(errors) == 1 and "bad.py" in str(errors[0])


def test_discover_skips_hidden_and_cache_dirs(tmp_path: Path):
    for rel in ("a.py", ".hidden/b.py", "__pycache__/c.py", "pkg/__init__.py", "pkg/d.py", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])] == ["a.py", "pkg/d.py"]


def test_digest_is_content_identity():
    a = Program.from_source(HARNESS, "a.py")
    b = Program.from_source(HARNESS, "b.py")
    assert a.digest == b.digest
    assert a.digest != Program.from_source(HARNESS + "\n# changed\n", "a.py").digest


@pytest.mark.parametrize("tail", [
    "torch.compile(fn, backend='eager')(*inputs())\n",
    "if __name__ == '__main__':\n    print(torch.compile(fn)(*inputs()))\n",
    "def main():\n    return torch.compile(fn)(*inputs())\n\nmain()\n",
    "def check():\n    return torch._dynamo.optimize('eager')(fn)(*inputs())\n\ndef main():\n    check()\n\n"
    "if __name__ == '__main__':\n    main()\n",
    "for _ in range(2):\n    torch.compile(fn)(*inputs())\n",
    "@torch.compile\ndef compiled(x):\n    return fn(x)\n",
    "class T(unittest.TestCase):\n    def test_it(self):\n        torch.compile(fn)(*inputs())\n\n"
    "if __name__ == '__main__':\n    unittest.main()\n",
])
def test_module_that_compiles_itself_is_a_script_even_with_fn_and_inputs(tail):
    source = "import unittest\n" + HARNESS + tail
    assert Program.from_source(source, "s.py").form is ProgramForm.SCRIPT


@pytest.mark.parametrize("tail", [
    "def drive(f):\n    g = torch.compile(fn)\n    return f(*inputs()), g(*inputs())\n",
    "def unused():\n    return torch.compile(fn)\n",
    "from torch import compile\n",
    "main = lambda: torch.compile(fn)\n",
])
def test_compile_only_inside_what_the_module_never_runs_keeps_harness_form(tail):
    assert Program.from_source(HARNESS + tail, "h.py").form is ProgramForm.HARNESS


def test_aliased_compile_called_at_module_level_is_a_script():
    source = "from torch import compile as jit\n" + HARNESS + "jit(fn)(*inputs())\n"
    assert Program.from_source(source, "s.py").form is ProgramForm.SCRIPT


def test_discover_leaves_out_filed_findings_below_the_root(tmp_path: Path):
    for rel in ("corpus/a.py", "findings/crash-x/first.py", "findings/crash-x/variants/00-A1.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(HARNESS)
    (tmp_path / "findings/crash-x/finding.json").write_text("{}")
    assert [p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])] == ["corpus/a.py"]
    finding = tmp_path / "findings" / "crash-x"
    assert [p.name for p in discover([finding])] == ["first.py", "00-A1.py"]


@pytest.mark.parametrize("source", [
    "from torch.testing._internal.common_utils import make_dynamo_test\n\n@make_dynamo_test\ndef test_x(self):\n    pass\n",
    "import torch._dynamo.testing\ntorch._dynamo.testing.standard_test(None, abs, 1)\n",
    "import torch\nf = torch._dynamo.optimize_assert('eager')(abs)\n",
], ids=["make_dynamo_test", "standard_test", "optimize_assert"])
def test_compiling_through_torch_s_test_helpers_is_script_form(source):
    assert Program.from_source(source, "t.py").form is ProgramForm.SCRIPT


def test_a_declared_script_is_script_form_whatever_its_text_names():
    body = "import helpers\n\nhelpers.run_traced()\n"
    with pytest.raises(ProgramError):
        Program.from_source(body, "t.py")
    declared = "# Harvested by mutator from x.py::T::test_a\n# mutator-form: script (why)\n" + body
    assert Program.from_source(declared, "t.py").form is ProgramForm.SCRIPT
    with pytest.raises(ProgramError):  # only in the header comments
        Program.from_source(body + "# mutator-form: script\n", "t.py")
