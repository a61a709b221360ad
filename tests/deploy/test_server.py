"""``distrl serve``: a client in another process drives CartPole through the server with the run's token and is
refused without it; gRPC and HTTP answer the actions ``load_policy`` gives (a recurrent policy's state per session);
every malformed request is refused with one line and the server goes on; TLS on both routes; SIGTERM ends it."""

import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import threading

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import distrl
from distrl.errors import ConfigError
from tests.conftest import ROOT
from tests.runtime.services.inference.tls import self_signed


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for name in ("apex-dqn", "r2d2"):
        out[name] = tmp_path_factory.mktemp("serve") / name
        distrl.train(name, env="CartPole-v1", runtime="inline", total_steps=1000, run_dir=str(out[name]),
                     progress=False)
    return out


def _token(run_dir) -> str:
    return (run_dir / "token").read_text().strip()


@pytest.fixture
def server(runs):
    started = []

    def start(name="apex-dqn", **options):
        started.append(distrl.serve(runs[name], bind="127.0.0.1:0", http="127.0.0.1:0", **options))
        return started[-1]

    yield start
    for s in started:
        s.close()


def _post(address, body, token=None, path="/v1/act", context=None):
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=10) if context else \
        http.client.HTTPConnection(host, int(port), timeout=10)
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request("POST" if path == "/v1/act" else "GET", path, body=data if path == "/v1/act" else None,
                 headers=headers)
    response = conn.getresponse()
    answer = json.loads(response.read() or b"{}")
    conn.close()
    return response.status, answer


def test_grpc_clients_get_load_policys_actions_over_a_cartpole_episode(server, runs):
    srv = server()
    policy = distrl.load_policy(runs["apex-dqn"])
    with distrl.PolicyClient(srv.address, _token(runs["apex-dqn"])) as client:
        assert client.spec["observation"] == {"shape": [4], "dtype": "float32"} and not client.spec["recurrent"]
        env = gym.make("CartPole-v1")
        obs, _ = env.reset(seed=0)
        for t in range(200):
            action = client.act(obs, episode_start=t == 0)
            assert action == policy.act(obs)
            obs, _, terminated, truncated, _ = env.step(int(action))
            if terminated or truncated:
                break
    assert srv.batcher.requests == t + 1


def test_a_recurrent_policys_state_is_each_sessions_own_and_an_episode_start_clears_it(server, runs):
    srv = server("r2d2")
    token = _token(runs["r2d2"])
    policy = distrl.load_policy(runs["r2d2"])
    rng = np.random.default_rng(0)
    episodes = rng.normal(size=(2, 15, 4)).astype(np.float32)
    expected = []
    for ep in episodes:
        policy.reset()
        expected.append([int(policy.act(o)) for o in ep])
    a, b = distrl.PolicyClient(srv.address, token), distrl.PolicyClient(srv.address, token)
    got_a, got_b, got_http = [], [], []
    for t in range(15):  # interleaved: a gRPC stream each, and an HTTP session, on the same server
        got_a.append(int(a.act(episodes[0, t], episode_start=t == 0)))
        got_b.append(int(b.act(episodes[1, t], episode_start=t == 0)))
        status, answer = _post(srv.http_address, {"observation": episodes[0, t].tolist(), "session": "sim-7",
                                                   "episode_start": t == 0}, token)
        assert status == 200
        got_http.append(answer["action"])
    assert got_a == expected[0] and got_b == expected[1] and got_http == expected[0]
    assert int(a.act(episodes[1, 0], episode_start=True)) == expected[1][0]  # a new episode forgets the old one
    a.close()
    b.close()


def _serving_line(process, timeout_s: float = 120.0) -> str:
    """The server's "serving" line (other lines, a library's banner, may come first), read within a deadline."""
    lines: list[str] = []

    def read():
        while line := process.stderr.readline():
            lines.append(line)
            if "distrl: serving" in line:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout_s)
    assert lines and "distrl: serving" in lines[-1], lines
    return lines[-1]


CLIENT = """
import gymnasium as gym, json, sys, urllib.request
url, token = sys.argv[1], sys.argv[2]
env = gym.make("CartPole-v1"); obs, _ = env.reset(seed=0); total, done = 0.0, False
while not done:
    body = json.dumps({"observation": obs.tolist()}).encode()
    request = urllib.request.Request(url, body, {"Authorization": "Bearer " + token})
    action = json.load(urllib.request.urlopen(request))["action"]
    obs, reward, terminated, truncated, _ = env.step(action); total += reward; done = terminated or truncated
print(total)
"""


def test_a_client_in_another_process_drives_cartpole_over_http_with_the_token_and_curl_is_refused_without(runs):
    """The real entry point: ``distrl serve`` in its own process, a ten-line urllib client in another, and curl."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    serve = subprocess.Popen([sys.executable, "-m", "distrl", "serve", str(runs["apex-dqn"]), "--bind",
                              "127.0.0.1:0", "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = _serving_line(serve)
        assert "distrl: serving apex-dqn on CartPole-v1" in line, line
        url = line.split(" and ")[1].split(";")[0]
        played = subprocess.run([sys.executable, "-c", CLIENT, url, _token(runs["apex-dqn"])], capture_output=True,
                                text=True, timeout=120, env=env)
        assert played.returncode == 0, played.stderr
        expected = distrl.evaluate(runs["apex-dqn"], episodes=1, seed=0)["mean_return"]
        assert float(played.stdout) == expected
        refused = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", url, "-d",
                                  '{"observation": [0, 0, 0, 0]}'], capture_output=True, text=True, timeout=30)
        assert refused.stdout == "401"
        wrong = subprocess.run(["curl", "-s", "-H", "Authorization: Bearer wrong", "-X", "POST", url, "-d",
                                '{"observation": [0, 0, 0, 0]}'], capture_output=True, text=True, timeout=30)
        assert "token" in json.loads(wrong.stdout)["error"]
        good = subprocess.run(["curl", "-s", "-H", f"Authorization: Bearer {_token(runs['apex-dqn'])}", "-X", "POST",
                               url, "-d", '{"observation": [0, 0, 0, 0]}'], capture_output=True, text=True, timeout=30)
        assert json.loads(good.stdout)["action"] in (0, 1)
        bad = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                              f"Authorization: Bearer {_token(runs['apex-dqn'])}", "-X", "POST", url, "-d",
                              '{"observation": [0, 0]}'], capture_output=True, text=True, timeout=30)
        assert bad.stdout == "400"
    finally:
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=30)
    assert serve.returncode == 0
    assert "refused 2 without the run's token and 1 invalid" in err and "did not present the run's token" in err


def test_grpc_without_the_token_is_refused(server, runs):
    srv = server()
    with pytest.raises(ConfigError, match="refused the client"):
        distrl.PolicyClient(srv.address, "not-the-token")
    assert srv.refused == 1


@pytest.mark.parametrize("body, says", [
    ({"observation": [0, 0, 0]}, "shape [4]"),
    ({"observation": [0, 0, 0, float("nan")]}, "NaN or inf"),
    ({"observation": [0, 0, 0, 1e300]}, "overflow float32"),
    ({"observation": "left"}, "numbers of shape [4]"),
    ({"observation": [[0, 0], [0, 0]]}, "shape [4]"),
    ({"obs": [0, 0, 0, 0]}, "with an \"observation\""),
    ({"observation": [0, 0, 0, 0], "session": "../../etc"}, "session must be"),
    ({"observation": [0, 0, 0, 0], "episode_start": "yes"}, "episode_start must be"),
    (b"[" * 100_000 + b"]" * 100_000, "JSON object"),
    (b"\xff\xfe", "JSON object"),
])
def test_malformed_http_requests_get_400_with_one_line_and_the_server_goes_on(server, runs, body, says):
    srv = server()
    token = _token(runs["apex-dqn"])
    status, answer = _post(srv.http_address, body, token)
    assert status == 400 and says in answer["error"] and "\n" not in answer["error"]
    assert _post(srv.http_address, {"observation": [0, 0, 0, 0]}, token)[0] == 200


def test_oversized_bodies_and_unknown_routes_are_refused(server, runs, monkeypatch):
    from distrl.deploy import http_route

    monkeypatch.setattr(http_route, "MAX_BODY_BYTES", 1000)
    srv = server()
    token = _token(runs["apex-dqn"])
    assert _post(srv.http_address, {"observation": [0.0] * 500}, token)[0] == 413
    assert _post(srv.http_address, {}, token, path="/v1/spec")[1]["observation"]["shape"] == [4]
    status, answer = _post(srv.http_address, {}, None, path="/v1/spec")
    assert status == 401 and "token is needed" in answer["error"]
    status, answer = _post(srv.http_address, {}, "not-the-token", path="/v1/spec")
    assert status == 401 and "is not the run's" in answer["error"]  # a wrong token is told so, not "needed"
    assert _post(srv.http_address, {}, token, path="/admin")[0] == 404


def test_malformed_grpc_requests_end_that_stream_only(server, runs):
    import grpc

    srv = server()
    token = _token(runs["apex-dqn"])
    for bad in (b"", bytes([2]) + bytes(16), bytes([0]) + bytes(15),
                bytes([0]) + np.array([0, 0, np.nan, 0], np.float32).tobytes()):
        client = distrl.PolicyClient(srv.address, token)
        client._out.put(bad)
        with pytest.raises(grpc.RpcError) as e:
            next(client._responses)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        client.close()
    with distrl.PolicyClient(srv.address, token) as client:
        assert client.act(np.zeros(4, np.float32)) in (0, 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
                         lambda children: st.lists(children, max_size=5)
                         | st.dictionaries(st.sampled_from(["observation", "session", "episode_start", "x"]),
                                           children, max_size=4), max_leaves=30))
def test_generated_bodies_get_an_action_or_a_400_never_a_crash(http_server, body):
    address, token = http_server
    status, answer = _post(address, json.dumps(body, allow_nan=True).encode(), token)
    assert (status == 200 and answer["action"] in (0, 1)) or (status == 400 and answer["error"])


@pytest.fixture(scope="module")
def http_server(runs):
    srv = distrl.serve(runs["apex-dqn"], bind="127.0.0.1:0", http="127.0.0.1:0")
    yield srv.http_address, _token(runs["apex-dqn"])
    srv.close()


def test_with_a_certificate_both_routes_are_tls(server, runs, tmp_path):
    cert, key = self_signed()
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    srv = server(tls_cert=str(tmp_path / "cert.pem"), tls_key=str(tmp_path / "key.pem"))
    token = _token(runs["apex-dqn"])
    with distrl.PolicyClient(srv.address, token, tls_ca=cert) as client:
        assert client.act(np.zeros(4, np.float32)) in (0, 1)
    context = ssl.create_default_context(cadata=cert.decode())
    assert _post(srv.http_address, {"observation": [0, 0, 0, 0]}, token, context=context)[0] == 200
    with pytest.raises((ssl.SSLError, http.client.HTTPException, ConnectionError)):
        _post(srv.http_address, {"observation": [0, 0, 0, 0]}, token)  # plain HTTP gets no answer


def test_bad_serve_options_are_one_line(runs, tmp_path, capsys):
    from distrl.cli import main

    for args, says in ((["--bind", "nowhere"], "is not HOST:PORT"), (["--tls-cert", "c.pem"], "go together"),
                       (["--max-batch", "0"], "--max-batch"), (["--head", "sample"], "acts greedily")):
        assert main(["serve", str(runs["apex-dqn"]), "--http", "off", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and "\n" not in err
    (tmp_path / "no-token").mkdir()
    assert main(["serve", str(tmp_path / "no-token")]) == 2


def _in_threads(fn, n: int, timeout_s: float = 60.0) -> None:
    """``fn(0) ... fn(n - 1)`` at once, each in its own thread; every one must finish within ``timeout_s``."""
    threads = [threading.Thread(target=fn, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout_s)
        assert not t.is_alive()


def test_requests_waiting_together_are_answered_by_one_forward_pass(runs):
    from distrl.deploy.batcher import Batcher
    from distrl.deploy.graphs import acting_graph

    policy = distrl.load_policy(runs["apex-dqn"])
    batcher = Batcher(acting_graph(policy), max_batch=4, max_wait_s=20.0)  # closes at 4 requests, long before 20 s
    obs = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    answers = [None] * 4

    def ask(i):
        answers[i] = batcher.act(obs[i])

    _in_threads(ask, 4)
    batcher.close()
    assert batcher.batches == 1 and batcher.requests == 4
    assert answers == [policy.act(o) for o in obs]


def test_sessions_are_bounded_least_recently_used_first(runs):
    from distrl.deploy.batcher import Batcher
    from distrl.deploy.graphs import acting_graph

    batcher = Batcher(acting_graph(distrl.load_policy(runs["r2d2"])), max_sessions=3)
    for s in range(5):
        batcher.act(np.zeros(4, np.float32), session=("http", s))
    batcher.close()
    assert list(batcher._sessions) == [("http", 2), ("http", 3), ("http", 4)]


def test_recurrent_sessions_batched_together_keep_their_own_state_and_one_sessions_requests_never_share_a_batch(runs):
    """Two sessions step in the same batches (each closes at 2 requests): each session gets the actions of its own
    episode played alone."""
    from distrl.deploy.batcher import Batcher
    from distrl.deploy.graphs import acting_graph

    policy = distrl.load_policy(runs["r2d2"])
    episodes = np.random.default_rng(1).normal(size=(2, 10, 4)).astype(np.float32)
    expected = []
    for ep in episodes:
        policy.reset()
        expected.append([int(policy.act(o)) for o in ep])
    batcher = Batcher(acting_graph(policy), max_batch=2, max_wait_s=20.0)
    got = [[], []]

    def play(i):
        for t in range(10):
            got[i].append(int(batcher.act(episodes[i, t], session=("http", i), episode_start=t == 0)))

    _in_threads(play, 2)
    batcher.close()
    assert got == expected and batcher.requests == 20


def test_inference_that_fails_answers_a_fixed_line_and_logs_the_detail(server, runs, capsys, monkeypatch):
    import grpc

    srv = server()
    token = _token(runs["apex-dqn"])

    def broken(*args):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(srv.batcher, "module", broken)
    status, answer = _post(srv.http_address, {"observation": [0, 0, 0, 0]}, token)
    assert status == 503 and answer["error"] == "inference failed; the server's log says why"
    with distrl.PolicyClient(srv.address, token) as client:
        with pytest.raises(RuntimeError, match="inference failed; the server's log says why") as e:
            client.act(np.zeros(4, np.float32))
        assert "secret" not in str(e.value)
    assert "secret internals" in capsys.readouterr().err
    del grpc


@pytest.mark.parametrize("observation", [["1", "2", "3", "4"], [True, False, True, False], [10**400, 0, 0, 0],
                                         [[0, 0], [0, 0, 0]]])
def test_observations_that_are_not_numbers_are_refused(server, runs, observation):
    srv = server()
    body = json.dumps({"observation": observation}).encode()
    status, answer = _post(srv.http_address, body, _token(runs["apex-dqn"]))
    assert status == 400 and "numbers of shape [4]" in answer["error"]


def test_a_token_that_is_not_ascii_is_refused_and_counted(server, runs, capfd):
    """A lone surrogate (JSON lets one through as an escape) is refused like any wrong token, by each route: counted,
    one line, and no exception in the server."""
    srv = server()
    with pytest.raises(ConfigError, match="refused the client"):
        distrl.PolicyClient(srv.address, "\ud800")
    assert srv.refused == 1
    assert _post(srv.http_address, {"observation": [0, 0, 0, 0]}, "t\u00e9")[0] in (400, 401)
    assert srv.refused == 2
    err = capfd.readouterr().err
    assert "did not present the run's token" in err and "Traceback" not in err


def test_silent_peers_never_keep_a_client_out(server, runs):
    """Twenty streams that never say hello: the longest-waiting ones are dropped, and a client joins at once."""
    import grpc

    from distrl.deploy.grpc_route import METHOD

    srv = server()
    channel = grpc.insecure_channel(srv.address)
    silent = [channel.stream_stream(METHOD)(iter(threading.Event().wait, True)) for _ in range(20)]
    with distrl.PolicyClient(srv.address, _token(runs["apex-dqn"])) as client:
        assert client.act(np.zeros(4, np.float32)) in (0, 1)
    for call in silent:
        call.cancel()
    channel.close()


def test_a_port_in_use_and_a_bad_certificate_are_one_line(server, runs, tmp_path):
    srv = server()
    with pytest.raises(ConfigError, match="cannot listen on"):
        distrl.serve(runs["apex-dqn"], bind=srv.address, http=None)
    (tmp_path / "bad.pem").write_text("not a certificate")
    with pytest.raises(ConfigError, match="not a PEM certificate"):
        distrl.serve(runs["apex-dqn"], bind="127.0.0.1:0", http=None, tls_cert=str(tmp_path / "bad.pem"),
                     tls_key=str(tmp_path / "bad.pem"))
