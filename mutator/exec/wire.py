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


class FrameReader:
    """Decode frames as bytes arrive from a pipe, without re-reading what came before."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.frames: list[Any] = []
        self.broken = False

    def feed(self, data: bytes) -> list[Any]:
        """Append `data`; return the frames it completed."""
        self._buffer += data
        new: list[Any] = []
        while not self.broken and len(self._buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(self._buffer, 0)
            end = _HEADER.size + size
            if len(self._buffer) < end:
                break
            try:
                new.append(pickle.loads(bytes(self._buffer[_HEADER.size:end])))
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
                self.broken = True
            del self._buffer[:end]
        self.frames.extend(new)
        return new


def decode_all(buffer: bytes) -> tuple[list[Any], bool]:
    """Every complete frame in `buffer`, and whether the buffer ended cleanly on a frame."""
    reader = FrameReader()
    reader.feed(buffer)
    return reader.frames, not reader.broken and not reader._buffer


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
