"""The coordinator's gRPC transport: a call without the league's token, or with another, is refused before its
message is read; a request that is not one is refused in one line; a client finds the league by its folder."""

import json

import grpc
import pytest
import torch

from distrl.errors import ConfigError
from distrl.league import EloRatings, Matchmaker
from distrl.league.coordinator import Coordinator
from distrl.league.server import METHOD, SERVICE, TOKEN_KEY, LeagueClient, LeagueServer


@pytest.fixture
def league(tmp_path):
    c = Coordinator(Matchmaker("naive"), EloRatings(), {"system": "ppo", "settings": {}, "game": "g"})
    c.add_player("main", "main")
    c.publish("main", {"w": torch.zeros(2)})
    server = LeagueServer(c, "the-token")
    server.write(tmp_path)
    (tmp_path / "token").write_text("the-token\n")
    yield server, tmp_path
    LeagueClient.close_all()
    server.close()


def _raw_call(address: str, payload: bytes, metadata=()):
    with grpc.insecure_channel(address) as channel:
        return channel.unary_unary(f"/{SERVICE}/{METHOD}")(payload, metadata=metadata, timeout=10)


@pytest.mark.parametrize("metadata", [(), ((TOKEN_KEY, "wrong"),), ((TOKEN_KEY, "the-token-and-more"),)])
def test_a_call_without_the_token_is_refused(league, metadata):
    server, _ = league
    with pytest.raises(grpc.RpcError) as e:
        _raw_call(server.address, b'{"op": "hello"}', metadata)
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_bad_request_is_one_line_and_a_large_one_is_not_read(league):
    server, _ = league
    with pytest.raises(grpc.RpcError) as e:
        _raw_call(server.address, b'{"op": "drop"}', ((TOKEN_KEY, "the-token"),))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "\n" not in e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        _raw_call(server.address, b" " * 100_000, ((TOKEN_KEY, "the-token"),))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_client_finds_the_league_by_its_folder(league):
    _, folder = league
    client = LeagueClient.of(str(folder))
    assert LeagueClient.of(str(folder)) is client  # one per process
    assert json.loads(client.request({"op": "next", "player": "main", "last": None})) == {"opponent": "main",
                                                                                          "version": 1}


def test_a_folder_without_a_running_league_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="no running coordinator"):
        LeagueClient(str(tmp_path))
