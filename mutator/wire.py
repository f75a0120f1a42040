"""Length-prefixed pickle frames: how the parent, its workers and their children talk.

Only our own processes are on either end of these pipes; pickle is the right tool for
frozen dataclasses holding numpy arrays.
"""

from __future__ import annotations

import pickle
import struct
from typing import Any, BinaryIO

_HEADER = struct.Struct("!Q")


class WireError(EOFError):
    """The other end closed the pipe or sent a broken frame."""


def encode(obj: Any) -> bytes:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


def send(stream: BinaryIO, obj: Any) -> None:
    stream.write(encode(obj))
    stream.flush()


def recv(stream: BinaryIO) -> Any:
    header = _read_exactly(stream, _HEADER.size)
    (size,) = _HEADER.unpack(header)
    return pickle.loads(_read_exactly(stream, size))


def decode_all(buffer: bytes) -> tuple[list[Any], bool]:
    """Every complete frame in `buffer`, and whether the buffer ended cleanly on a frame."""
    frames: list[Any] = []
    offset = 0
    while offset + _HEADER.size <= len(buffer):
        (size,) = _HEADER.unpack_from(buffer, offset)
        end = offset + _HEADER.size + size
        if end > len(buffer):
            return frames, False
        try:
            frames.append(pickle.loads(buffer[offset + _HEADER.size : end]))
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            return frames, False
        offset = end
    return frames, offset == len(buffer)


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise WireError(f"pipe closed with {remaining} of {size} bytes unread")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
