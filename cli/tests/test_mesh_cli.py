"""`./hostbench mesh` without a server (httpx.MockTransport): the body it posts (hosts by name), following the mesh
to its end, the matrix and the JSON line, the exit status. backend/tests/test_mesh.py holds the server's side."""
import argparse
import io
import json

import httpx

from hostbench_cli import mesh, remote

HOSTS = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]


def _cell(s, c, mbps, rtt, status="succeeded"):
    return {"server_host_id": s, "client_host_id": c, "round": 0, "status": status, "mbps": mbps, "rtt_us": rtt}


def _mesh(status, cells):
    return {"id": 7, "mode": "all_pairs", "status": status, "rounds": 3, "wall_s": 12.5, "runs": {}, "server": None,
            "hosts": HOSTS, "cells": cells, "aggregate_mbps": None,
            "slowest_link": {"server_host_id": 3, "client_host_id": 1, "mbps": 95.0},
            "slowest_host": {"host_id": 1, "name": "a", "mean_mbps": 500.0}}


def test_mesh_posts_by_name_follows_and_prints_the_matrix(capsys):
    posted = []
    done = [_cell(2, 1, 900.0, 30.0), _cell(3, 1, 95.0, 31.0), _cell(3, 2, 950.0, 29.0)]
    answers = iter([_mesh("running", []), _mesh("done", done)])

    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.path == "/api/hosts":
            return httpx.Response(200, json={"data": HOSTS})
        if req.method == "POST":
            posted.append(json.loads(req.content))
            return httpx.Response(201, json=_mesh("queued", []))
        return httpx.Response(200, json=next(answers))

    client = httpx.Client(base_url="http://hb.test", transport=httpx.MockTransport(handler))
    server = remote.Server("http://hb.test", "t", client)
    args = argparse.Namespace(hosts="a, b,3", mode="all_pairs", server_host=None, ops="tcp_stream",
                              params='{"duration_s": 1}', wait=True, timeout=None)
    out = io.StringIO()
    assert mesh.cmd_mesh(server, args, out, poll_s=0) == 0
    assert posted == [{"mode": "all_pairs", "host_ids": [1, 2, 3], "ops": ["tcp_stream"],
                       "params": {"duration_s": 1}}]
    line = json.loads(out.getvalue())
    assert line["id"] == 7 and line["status"] == "done" and line["slowest_link"]["mbps"] == 95.0
    err = capsys.readouterr().err
    assert "95 / 31" in err and "slowest link: a -> c 95 Mbit/s" in err and "slowest host: a" in err
    # a link not measured: exit 1
    answers = iter([_mesh("done", [*done[:2], _cell(3, 2, None, None, "failed")])])
    assert mesh.cmd_mesh(server, args, io.StringIO(), poll_s=0) == 1


def test_params_that_are_not_json_are_one_line():
    server = remote.Server("http://hb.test", "t", httpx.Client(base_url="http://hb.test", transport=httpx.MockTransport(
        lambda req: httpx.Response(200, json={"data": HOSTS}))))
    args = argparse.Namespace(hosts="a,b", mode="all_pairs", server_host=None, ops="tcp_stream", params="{x",
                              wait=False, timeout=None)
    try:
        mesh.body_of(server, args)
    except remote.RemoteError as exc:
        assert "--params is not JSON" in str(exc)
    else:
        raise AssertionError("no error")
