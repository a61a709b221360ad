"""Reading back what a W&B offline run logged, for the tests: its ``.wandb`` file is a log of protobuf records in
32 KiB blocks (a 7-byte file header; each chunk: CRC32, length, kind 1 full / 2 first / 3 middle / 4 last)."""

import struct
import time
from pathlib import Path

BLOCK = 32768
HEADER = 7
WRITTEN_S = 60.0  # how long a finished run's log may take to reach the file


def records(path: Path) -> list:
    """Every record of a finished run's log. W&B's service writes the file from its own process and may still be
    writing when ``finish()`` returns (seen on a loaded machine: no history, no exit record yet): read again until
    the exit record, the last one, is there, for at most ``WRITTEN_S``."""
    deadline = time.monotonic() + WRITTEN_S
    while True:
        out = _read(path)
        if any(r.WhichOneof("record_type") == "exit" for r in out) or time.monotonic() > deadline:
            return out
        time.sleep(0.05)


def _read(path: Path) -> list:
    from google.protobuf.message import DecodeError
    from wandb.proto import wandb_internal_pb2 as pb

    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", data[:7]
    out, pos, pending = [], HEADER, b""
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # the block's tail is padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos:pos + HEADER])
        if length == 0 and kind == 0:
            pos += left
            continue
        pending += data[pos + HEADER:pos + HEADER + length]
        pos += HEADER + length
        if kind in (1, 4):
            record = pb.Record()
            try:
                record.ParseFromString(pending)
            except DecodeError:  # a record still being written: what came before it
                break
            out.append(record)
            pending = b""
    return out


def history(path: Path) -> list[dict[str, str]]:
    return [{i.key or "/".join(i.nested_key): i.value_json for i in r.history.item}
            for r in records(path) if r.WhichOneof("record_type") == "history"]
