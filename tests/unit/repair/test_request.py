"""What a repair request knows of its mutant: the construct the operator inserted, the lines it changed."""

from __future__ import annotations

from mutator.repair.request import construct_of, keeps_construct

from tests.unit.repair.helpers import request


def test_the_inserted_construct_is_what_the_mutant_has_more_of_than_its_parent():
    parent = "import torch\ndef fn(x):\n    return x\ndef inputs():\n    return (torch.ones(2),)\n"
    mutant = ("import torch\ndef fn(x):\n    try:\n        return x\n    except ValueError:\n        raise\n"
              "def inputs():\n    return (torch.ones(2),)\n")
    req = request(mutant, "NameError", "name 'q' is not defined", line=4, parent=parent)
    assert set(req.inserted_construct()) == {"Try", "ExceptHandler", "Name:ValueError", "Raise"}
    assert keeps_construct(req, mutant) and not keeps_construct(req, parent)
    assert construct_of("x = 1\n") == construct_of("x = 2\n")  # sizes may change
    assert req.changed_lines() == [3, 4, 5, 6]  # the return is indented anew
