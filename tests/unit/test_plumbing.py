import io

import numpy as np
import pytest

from mutator.exec import sandbox, wire
from mutator.core.values import SeqValue, TensorValue, structure_digest

from tests.helpers import tensor


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HF_HOME", "DB_PASSWORD"])
def test_secrets_are_scrubbed(name):
    env = sandbox.scrubbed_environment({name: "x", "PATH": "/bin", "LANG": "C"})
    assert name not in env and env["PATH"] == "/bin" and env["PYTHONHASHSEED"] == "0"


def test_programs_do_not_run_as_on_ci():
    """torch's run_tests() saves XML reports (needing xmlrunner) when CI is set."""
    assert "CI" not in sandbox.scrubbed_environment({"CI": "true", "PATH": "/bin"})


def test_wire_round_trip_and_partial_frames():
    stream = io.BytesIO()
    wire.send(stream, ("call", tensor([1.0, 2.0])))
    wire.send(stream, ("final", None))
    data = stream.getvalue()
    stream.seek(0)
    kind, value = wire.recv(stream)
    assert kind == "call" and isinstance(value, TensorValue) and np.array_equal(value.values, [1.0, 2.0])
    frames, clean = wire.decode_all(data)
    assert len(frames) == 2 and clean
    frames, clean = wire.decode_all(data[:-3])
    assert len(frames) == 1 and not clean
    with pytest.raises(wire.WireError):
        wire.recv(io.BytesIO(data[:5]))


def test_structure_digest_separates_metadata_from_values():
    a, b = tensor([1.0, 2.0]), tensor([3.0, 4.0])
    assert structure_digest(a, with_values=False) == structure_digest(b, with_values=False)
    assert structure_digest(a, with_values=True) != structure_digest(b, with_values=True)
    assert structure_digest(SeqValue("list", (1,)), with_values=False) != structure_digest(SeqValue("tuple", (1,)), with_values=False)
