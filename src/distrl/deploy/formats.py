"""Writing a :class:`~distrl.deploy.graphs.Graph` as ONNX (torch's dynamo exporter, opset of its choice) or as
TorchScript (a traced module, loadable from C++ with libtorch), with the batch dimension left free.

The file appears only when complete (written beside it, then renamed), and only after the written graph has been
run on the example observations and gave the module's outputs: an exporter's silent mistake is a failed command,
not a policy that acts differently in production. The metadata (system, env, head, spaces) travels inside the file:
ONNX ``metadata_props``, TorchScript's ``distrl.json`` extra file.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import warnings
from pathlib import Path

import numpy as np
import torch

from distrl.deploy.graphs import Graph
from distrl.errors import ConfigError

FORMATS = {"onnx": ".onnx", "torchscript": ".pt"}
TOLERANCE = 1e-4  # float outputs of the exported graph against the module's, absolute and relative


def _needs(modules: tuple[str, ...], fmt: str) -> None:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"--format {fmt} needs {' and '.join(missing)}: pip install 'distrl[export]'")


def _write_onnx(graph: Graph, path: Path) -> None:
    _needs(("onnx", "onnxscript", "onnxruntime"), "onnx")  # onnxruntime: the written file is run before it appears
    import onnx

    batch = torch.export.Dim("batch", min=1)
    dynamic = {name: {0: batch} for name in graph.inputs}
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the exporter logs each of its stages, and the operators it skips, at WARNING
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            program = torch.onnx.export(graph.module, tuple(graph.inputs.values()), input_names=list(graph.inputs),
                                        output_names=graph.outputs, dynamic_shapes=dynamic, dynamo=True,
                                        verbose=False)
    finally:
        quiet.setLevel(level)
    proto = program.model_proto
    for key, value in graph.metadata.items():
        proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(path))


def _write_torchscript(graph: Graph, path: Path) -> None:
    with warnings.catch_warnings():  # tracing's notes on constants, and TorchScript's deprecation (libtorch loads it)
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(graph.module, tuple(graph.inputs.values()), check_trace=False)
        torch.jit.save(traced, str(path), _extra_files={"distrl.json": json.dumps(graph.metadata)})


def run_exported(path: Path, fmt: str, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs of an exported file on ``inputs`` (onnxruntime for ONNX, ``torch.jit.load`` for TorchScript)."""
    if fmt == "onnx":
        _needs(("onnxruntime",), "onnx")
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return session.run(None, inputs)
    with warnings.catch_warnings():  # TorchScript is deprecated in favour of torch.export; libtorch still loads it
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torch.jit.load(str(path))
    with torch.inference_mode():
        out = module(*(torch.as_tensor(v) for v in inputs.values()))
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def _check(graph: Graph, path: Path, fmt: str) -> None:
    """The written file gives the module's ``checked`` outputs on a batch of another size than the example's (a
    batch size frozen into the graph fails here)."""
    inputs = {k: torch.cat([v, v[:1]]) for k, v in graph.inputs.items()}
    with torch.inference_mode():
        expected = graph.module(*inputs.values())
    expected = [e.numpy() for e in (expected if isinstance(expected, tuple) else (expected,))]
    try:
        got = run_exported(path, fmt, {k: v.numpy() for k, v in inputs.items()})
    except ConfigError:
        raise
    except Exception as e:
        raise RuntimeError(f"the exported {fmt} graph fails on a batch of 3 ({type(e).__name__}): the export kept a "
                           "shape of its example batch of 2") from e
    for name, e, g in zip(graph.outputs, expected, got):
        if name not in graph.checked:
            continue
        close = np.array_equal(e, g) if e.dtype.kind in "iub" else np.allclose(e, g, rtol=TOLERANCE, atol=TOLERANCE)
        if e.shape != g.shape or not close:
            raise RuntimeError(f"the exported {fmt} graph's {name!r} differs from the policy's on the same inputs")


def write(graph: Graph, fmt: str, out: Path, force: bool = False) -> Path:
    """Write ``graph`` to ``out`` in ``fmt`` and check it; an existing ``out`` is replaced only with ``force``."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    out = Path(out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a folder; give the file to write (e.g. {out / ('policy' + FORMATS[fmt])})")
    if out.exists() and not force:
        raise ConfigError(f"{out} exists; --force replaces it")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(b"")  # a folder that cannot be written fails here, in one line, before minutes of export
    except OSError as e:
        raise ConfigError(f"cannot write {out}: {e.strerror}") from None
    try:
        (_write_onnx if fmt == "onnx" else _write_torchscript)(graph, tmp)
        _check(graph, tmp, fmt)
        os.replace(tmp, out)
    except OSError as e:  # the disk filled, the folder went away
        raise ConfigError(f"cannot write {out}: {e.strerror or e}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return out
