"""The policy server's requests/s and latency (p50, p99), for CartPole-sized and Atari-sized observations, over gRPC
(``distrl.PolicyClient``) and HTTP/JSON, with 1, 8 and 32 concurrent clients.

``distrl serve`` runs in its own process, as deployed; the clients are threads of this process, each sending one
request, waiting for its answer, then sending the next (a simulator stepping one env), for ``--seconds`` per cell
after a short warm-up. The policies are small trained runs (Ape-X DQN on CartPole-v1; IMPALA's Nature CNN on
ALE/Pong-v5, 4 x 84 x 84 uint8 frames): what is measured is the server, not the policy's quality.

    python benchmarks/serve_latency.py --seconds 5
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, finished, start  # noqa: E402  (the benchmarks folder's own helper)

POLICIES = {"CartPole-v1 (4 float32)": ("apex-dqn", "CartPole-v1"),
            "ALE/Pong-v5 (4x84x84 uint8)": ("impala", "ALE/Pong-v5")}


def _grpc_client(address, token, obs):
    client = distrl.PolicyClient(address, token)
    return (lambda: client.act(obs)), client.close


def _http_client(address, token, obs):
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    body = json.dumps({"observation": obs.tolist()}).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call():
        conn.request("POST", "/v1/act", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status

    return call, conn.close


def measure(make_client, address, token, obs, clients: int, seconds: float) -> dict:
    latencies: list[list[float]] = [[] for _ in range(clients)]
    go, stop = threading.Event(), threading.Event()
    counting = threading.Event()

    def run(i):
        call, close = make_client(address, token, obs)
        go.wait()
        while not stop.is_set():
            t0 = time.perf_counter()
            call()
            if counting.is_set():
                latencies[i].append(time.perf_counter() - t0)
        close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    go.set()
    time.sleep(min(1.0, seconds / 4))  # warm-up: connections made, batches formed
    counting.set()
    t0 = time.perf_counter()
    time.sleep(seconds)
    counting.clear()
    elapsed = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join(timeout=60)
    every = np.concatenate([np.asarray(x) for x in latencies]) * 1e3
    return {"rps": len(every) / elapsed, "p50_ms": float(np.percentile(every, 50)),
            "p99_ms": float(np.percentile(every, 99))}


def serve(run_dir: Path):
    process = subprocess.Popen([sys.executable, "-m", "distrl", "serve", str(run_dir), "--bind", "127.0.0.1:0",
                                "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    seen = []
    while "distrl: serving" not in (line := process.stderr.readline()):  # (ALE prints its banner first)
        seen.append(line)
        if not line:
            process.kill()
            raise SystemExit("distrl serve did not start: " + "".join(seen))
    grpc_address = line.split("on gRPC ")[1].split(" ")[0]
    http_address = line.split("http://")[1].split("/")[0]
    return process, grpc_address, http_address


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=5.0, help="measured seconds per cell")
    p.add_argument("--clients", nargs="+", type=int, default=[1, 8, 32])
    add_flag(p)
    args = p.parse_args()
    writer = start(["serve-latency"], p, args, keep=("clients",))
    table = Table("observation", "route", "clients", "requests/s", "p50 ms", "p99 ms")
    with tempfile.TemporaryDirectory() as d:
        for label, (system, env) in POLICIES.items():
            run_dir = Path(d) / system
            finished(distrl.train(system, env=env, runtime="inline", total_steps=2000, run_dir=str(run_dir),
                                  progress=False))
            spec = distrl.load_policy(run_dir).spec
            obs = spec.observation_space.sample()
            token = (run_dir / "token").read_text().strip()
            process, grpc_address, http_address = serve(run_dir)
            try:
                for route, make, address in (("gRPC", _grpc_client, grpc_address),
                                             ("HTTP/JSON", _http_client, http_address)):
                    for n in args.clients:
                        r = measure(make, address, token, obs, n, args.seconds)
                        table.row(label, route, n, f"{r['rps']:,.0f}", f"{r['p50_ms']:.2f}", f"{r['p99_ms']:.2f}")
            finally:
                process.terminate()
                process.wait(timeout=30)
    if writer:
        writer.write({"serve-latency": str(table)})


if __name__ == "__main__":
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    main()
