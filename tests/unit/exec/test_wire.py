"""Length-prefixed frames: a round trip, and a stream cut short."""

import io

import numpy as np
import pytest

from mutator.exec import wire
from mutator.core.values import TensorValue

from tests.helpers import tensor


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
