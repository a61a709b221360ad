"""Trained policies out of distrl: ONNX and TorchScript files that act as ``distrl.load_policy`` does (``graphs``,
``formats``), and a policy server for simulators that cannot be stepped from Python (``server``: gRPC and HTTP/JSON
routes, a batcher, checks on every request) with its gRPC client."""

from distrl.deploy.formats import FORMATS, run_exported, write
from distrl.deploy.graphs import HEADS, Graph, acting_graph

__all__ = ["FORMATS", "HEADS", "Graph", "acting_graph", "run_exported", "write"]
