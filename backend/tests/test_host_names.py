"""Host names (app/hosts/names.py): normalised at registration (NFKC, blanks trimmed), no control or invisible
characters, unique among live hosts whatever the case; migration 0015 keeps existing look-alikes, renamed."""
import os
import subprocess
import sys

import psycopg
import pytest

from app.hosts.service import create_registration_token
from tests.conftest import ROOT, ZEN4_INVENTORY


def _register(client, session, name: str):
    token, _ = create_registration_token(session)
    return client.post("/api/runners/register", json={
        "registration_token": token, "name": name, "hostname": "x.local", "version": "0",
        "inventory": ZEN4_INVENTORY, "labels": {}})


def test_a_name_is_stored_in_its_normal_form(client, session):
    r = _register(client, session, "  \uff37\uff25\uff22\uff0d\uff11\u00a0 rack\u3000 2 ")  # full-width, no-break
    assert r.status_code == 201, r.text
    host = client.get(f"/api/hosts/{r.json()['host_id']}").json()
    assert host["name"] == "WEB-1 rack 2"


@pytest.mark.parametrize("look_alike", ["web-1", "WEB-1", "Web-1 ", " web-1", "\uff57\uff45\uff42-1", "web-1\u00a0"])
def test_a_look_alike_of_a_live_name_is_refused(client, session, look_alike):
    assert _register(client, session, "web-1").status_code == 201
    r = _register(client, session, look_alike)
    assert r.status_code == 409, (look_alike, r.text)
    assert "in any case" in r.json()["detail"]


@pytest.mark.parametrize("bad", ["web\u200b1", "web\x1b[2J", "web\u202e1", "web\t1", "web\n1", "web\u00ad1",
                                 "\u200b", "   "])
def test_control_and_invisible_characters_are_refused(client, session, bad):
    r = _register(client, session, bad)
    assert r.status_code == 422, (bad, r.text)


def test_the_index_holds_the_rule_in_the_database(session):
    from sqlalchemy.exc import IntegrityError

    from app.hosts.models import Host

    session.add(Host(name="db-1", hostname="a", token_hash="a" * 64))
    session.commit()
    session.add(Host(name="DB-1", hostname="b", token_hash="b" * 64))
    with pytest.raises(IntegrityError):
        session.commit()
    session.rollback()


def test_migration_0015_renames_existing_look_alikes_and_builds_the_index():
    server = os.environ["HOSTBENCH_TEST_PG_SERVER"].replace("postgresql+psycopg://", "postgresql://")
    db = "hostbench_test_mig0015" + os.environ.get("PYTEST_XDIST_WORKER", "")
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{db}" with (force)')
        conn.execute(f'create database "{db}"')
    url = os.environ["HOSTBENCH_TEST_PG_SERVER"].rsplit("/", 1)[0] + f"/{db}"
    env = dict(os.environ, DATABASE_URL=url)

    def alembic(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), *args],
                       cwd=ROOT / "backend", env=env, check=True, capture_output=True)

    alembic("upgrade", "0014")
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for i, (name, deleted) in enumerate([("web-1", False), ("WEB-1", False), ("Web-1", False), ("web-1", True),
                                             ("db", False)]):
            conn.execute("insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, "
                         "labels, peak_overrides, deleted_at) values (%s, 'h', '', %s, now(), '{}', '{}', '{}', "
                         "case when %s then now() end)", (name, f"{i:064d}", deleted))
    alembic("upgrade", "head")
    with psycopg.connect(dsn, autocommit=True) as conn:
        names = [r[0] for r in conn.execute("select name from hosts order by id")]
        assert names == ["web-1", "WEB-1 (host 2)", "Web-1 (host 3)", "web-1", "db"]
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, "
                         "labels, peak_overrides) values ('DB', 'h', '', %s, now(), '{}', '{}', '{}')", ("f" * 64,))
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{db}" with (force)')
