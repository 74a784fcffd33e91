"""Investigations in cognee's real stores (Ladybug + LanceDB), offline."""

from __future__ import annotations

import json

import pytest

from conftest import SEED, cli, cli_json, clean_env, investigation, seed_with_prefix
from memory_core.core.investigation import InputError
from memory_core.store.models import collection, node_id


def nodes_of(status, prefix):
    return {n["key"]: n for n in status["nodes"] if n["key"].startswith(prefix)}


async def test_load_status_round_trip(app, prefix):
    result = await app.load(seed_with_prefix(prefix))
    assert sorted(result["added"]) == sorted(prefix + k for k in ("Q", "A", "B", "C", "E_qa", "E_email", "K"))
    status = await app.status()
    mine = nodes_of(status, prefix)
    assert {k: n["type"] for k, n in mine.items()} == {
        prefix + "Q": "question",
        prefix + "A": "hypothesis",
        prefix + "B": "hypothesis",
        prefix + "C": "hypothesis",
        prefix + "E_qa": "evidence",
        prefix + "E_email": "evidence",
        prefix + "K": "conclusion",
    }
    assert all(n["state"] == "alive" for n in mine.values())
    assert mine[prefix + "K"]["confidence"] == 0.8
    assert mine[prefix + "A"]["prior"] == 0.4
    assert mine[prefix + "E_qa"]["source_id"].startswith("QA-2021-0315")
    seed = json.loads(SEED.read_text())
    assert mine[prefix + "E_qa"]["text"] == seed["evidence"][0]["claim"]
    edges = [e for e in status["edges"] if e["from"].startswith(prefix)]
    assert {
        "type": "depends_on",
        "from": prefix + "K",
        "to": prefix + "E_qa",
        "critical": True,
        "group": None,
    } in edges
    assert {"type": "supports", "from": prefix + "E_qa", "to": prefix + "A", "weight": 0.8} in edges
    assert len(edges) == 3


async def test_reload_is_a_noop_and_never_resets_state_or_weight(app, prefix):
    text = seed_with_prefix(prefix)
    await app.load(text)
    e_id = node_id("evidence", prefix + "E_qa")
    await app.store.set_states({e_id: ("refuted", 7)})
    await app.store.set_weights({e_id: 0.0, node_id("hypothesis", prefix + "B"): 0.93})
    again = await app.load(text)
    assert again["added"] == [] and again["edges_added"] == [] and again["epoch"] is None
    mine = nodes_of(await app.status(), prefix)
    assert mine[prefix + "E_qa"]["state"] == "refuted" and mine[prefix + "E_qa"]["epoch"] == 7
    assert mine[prefix + "E_qa"]["feedback_weight"] == 0.0
    assert mine[prefix + "B"]["feedback_weight"] == 0.93


async def test_reload_adds_only_new_nodes_and_edges(app, prefix):
    ev = [{"key": "E1", "claim": f"{prefix} the pump failed in May."}]
    await app.load(
        investigation(
            prefix,
            evidence=ev,
            conclusions=[{"key": "K1", "statement": "pump failure"}],
            edges=[{"type": "depends_on", "from": "K1", "to": "E1"}],
        )
    )
    ev2 = ev + [{"key": "E2", "claim": f"{prefix} the valve failed in June."}]
    result = await app.load(
        investigation(
            prefix,
            evidence=ev2,
            conclusions=[{"key": "K1", "statement": "pump failure"}],
            edges=[
                {"type": "depends_on", "from": "K1", "to": "E1"},
                {"type": "depends_on", "from": "K1", "to": "E2", "critical": False},
            ],
        )
    )
    assert result["added"] == [prefix + "E2"]
    assert result["edges_added"] == [f"depends_on {prefix}K1 -> {prefix}E2"]


async def test_new_node_resting_on_dead_evidence_enters_invalidated(app, prefix):
    ev = [{"key": "E1", "claim": f"{prefix} the sensor log shows a spike at noon."}]
    await app.load(investigation(prefix, evidence=ev))
    await app.store.set_states({node_id("evidence", prefix + "E1"): ("refuted", 3)})
    result = await app.load(
        investigation(
            prefix,
            evidence=ev,
            conclusions=[{"key": "K", "statement": "spike at noon"}],
            edges=[{"type": "depends_on", "from": "K", "to": "E1"}],
        )
    )
    assert result["invalidated"] == [prefix + "K"]
    assert nodes_of(await app.status(), prefix)[prefix + "K"]["state"] == "invalidated"


async def test_delete_removes_graph_node_and_vector_row(app, prefix):
    await app.load(seed_with_prefix(prefix))
    k_id = node_id("conclusion", prefix + "K")
    assert k_id in await app.store.vector_ids(collection("conclusion"))
    await app.store.delete({k_id: "conclusion"})
    assert await app.store.raw_nodes([k_id]) == {}
    assert k_id not in await app.store.vector_ids(collection("conclusion"))
    hits = await app.store.search(collection("conclusion"), "X knew by March 2021", 50)
    assert k_id not in {str(h.id) for h in hits}


@pytest.mark.parametrize(
    "mutate,fragment",
    [
        (
            lambda d: d.update(edges=d["edges"] + [{"type": "depends_on", "from": "K", "to": "NOPE"}]),
            "names unknown key",
        ),
        (lambda d: d["evidence"].append(dict(d["evidence"][0])), "duplicate key"),
        (lambda d: d["evidence"].append(dict(d["evidence"][0], key="e_QA")), "duplicate key"),
        (
            lambda d: d.update(edges=[{"type": "supports", "from": "A", "to": "E_qa", "weight": 0.5}]),
            "supports edge goes from evidence",
        ),
        (
            lambda d: d.update(edges=[{"type": "supports", "from": "E_qa", "to": "A", "weight": 1.5}]),
            "outside 0..1",
        ),
        (lambda d: d["conclusions"][0].pop("statement"), "missing 'statement'"),
        (lambda d: d["hypotheses"][0].update(statement="   "), "'statement' is empty"),
        (lambda d: d.update(edges=[{"type": "depends_on", "from": "K", "to": "K"}]), "itself"),
        (lambda d: d["evidence"][0].update(colour="red"), "unknown field(s) colour"),
    ],
)
async def test_invalid_files_rejected_with_nothing_written(app, prefix, mutate, fragment):
    data = json.loads(SEED.read_text())
    mutate(data)
    text = (
        json.dumps(data)
        .replace('"key": "', f'"key": "{prefix}')
        .replace('"from": "', f'"from": "{prefix}')
        .replace('"to": "', f'"to": "{prefix}')
    )
    before = (await app.status(), app.journal.epoch())
    with pytest.raises(InputError) as error:
        await app.load(text)
    assert fragment in str(error.value)
    assert (await app.status(), app.journal.epoch()) == before


async def test_nan_and_bad_json_rejected(app):
    for text, fragment in [
        (
            '{"question": {"key": "Q", "text": "x"}, "hypotheses": [{"key": "H", "statement": "s", "prior": NaN}]}',
            "NaN",
        ),
        ('{"question": {"key": "Q", "text": "x"', "invalid JSON"),
        (b'{"question": {"key": "Q", "text": "\xff"}}', "not valid UTF-8"),
    ]:
        with pytest.raises(InputError) as error:
            await app.load(text)
        assert fragment in str(error.value)


async def test_offline_embedder_really_embeds(app):
    from cognee.infrastructure.databases.vector.embeddings import get_embedding_engine

    engine = get_embedding_engine()
    assert (
        type(engine).__name__ == "FastembedEmbeddingEngine"
        and engine.model == "sentence-transformers/all-MiniLM-L6-v2"
    )
    a, b, c = await engine.embed_text(
        [
            "The QA report was back-dated.",
            "Someone falsified the date on the quality report.",
            "Bananas are rich in potassium.",
        ]
    )
    cos = lambda x, y: (
        sum(p * q for p, q in zip(x, y)) / (sum(p * p for p in x) ** 0.5 * sum(q * q for q in y) ** 0.5)
    )
    assert len(a) == 384
    assert cos(a, b) > cos(a, c) + 0.2


LOAD_AND_STATUS = [
    {"name": "load", "op": "cli", "argv": ["load", str(SEED)]},
    {"name": "status", "op": "cli", "argv": ["status", "--json"]},
]


@pytest.mark.slow
def test_ids_states_and_weights_survive_restart(tmp_path):
    from harness import run_batch

    root = tmp_path / "r"
    # load and status in one process (tests/support/cli_batch.py: the CLI's entry point per step)
    r = {x["name"]: x for x in run_batch(root, LOAD_AND_STATUS, tmp_path / "batch")}
    assert r["load"]["code"] == 0 and r["status"]["code"] == 0, r["load"]["stderr"][-2000:]
    first = json.loads(r["status"]["stdout"])
    proc = cli(root, "revise", "Forensic audit: the March QA report was back-dated.", "--target", "E_qa")
    assert proc.returncode == 0, proc.stderr
    second = cli_json(root, "status")  # a third process
    states = {n["key"]: (n["state"], n["feedback_weight"], n["epoch"]) for n in second["nodes"]}
    assert states["E_qa"] == ("refuted", 0.0, 2) and states["A"][0] == "superseded" and states["B"][1] > 0.5
    assert "K" not in states
    # ids are derived from keys: the same in every process. The id cognee gives the node here
    # (store.models.node_id: cognee's DataPoint.id_for) equals FALSIFY's own derivation
    # (core.identity, no cognee) computed in a cold interpreter with another hash seed, so
    # neither depends on the process (test_cognee_contract checks the two agree key by key)
    import os, subprocess, sys

    code = "from memory_core.core.identity import node_id; print(node_id('evidence', 'E_qa'))"
    for seed in ("1", "2"):
        cold = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=str(SEED.parent.parent),
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert cold.returncode == 0, cold.stderr[-2000:]
        assert cold.stdout.strip() == str(node_id("evidence", "E_qa"))
    assert len(first["nodes"]) == 7


@pytest.mark.slow
def test_no_command_without_key_prints_how_to_set_it(tmp_path):
    proc = cli(None, env=clean_env(FALSIFY_HOME=str(tmp_path)))
    assert proc.returncode == 0
    assert "LLM_API_KEY" in proc.stdout and "--demo" in proc.stdout and "offline" in proc.stdout


@pytest.mark.slow
def test_root_records_embedder_and_refuses_another(tmp_path, tmp_path_factory):
    from harness import copy_root, loaded_root

    # a write created the root (status on a missing root is exit 2): the loaded template's
    # ``load`` through the CLI, in a process of its own; a copy of it here
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "r")
    meta = json.loads((root / "falsify.json").read_text())
    assert meta["embedder"]["provider"] == "fastembed-local"
    proc = cli(
        root,
        "status",
        env=clean_env(
            EMBEDDING_PROVIDER="openai",
            EMBEDDING_MODEL="openai/text-embedding-3-small",
            EMBEDDING_DIMENSIONS="1536",
            EMBEDDING_API_KEY="sk-test",
        ),
    )
    assert proc.returncode == 4
    assert "built with embedder" in proc.stderr


@pytest.mark.slow
def test_shell_beats_stray_dotenv(tmp_path, tmp_path_factory):
    """cognee would load a .env found from the working directory with override;
    FALSIFY points COGNEE_ENV_FILE at an empty file, so the shell wins."""
    import sys

    import forkserver
    from conftest import REPO

    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text("FALSIFY_GATE1_THRESHOLD=1.5\nSYSTEM_ROOT_DIRECTORY=/nonexistent/elsewhere\n")
    from harness import copy_root, loaded_root

    env = clean_env(FALSIFY_GATE1_THRESHOLD="0.3")
    root = copy_root(loaded_root(tmp_path_factory), tmp_path / "r")  # a loaded root (the CLI's load)
    # forked after the third-party imports; the child imports cognee (which looks for a .env) in work/
    proc = forkserver.run(
        [
            sys.executable,
            str(REPO / "main.py"),
            "--root",
            str(root),
            "revise",
            "--dry-run",
            "--json",
            "The QA report is dated 15 March 2021.",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["threshold"] == 0.3
    assert (root / "cognee_system").is_dir() and not (work / "nonexistent").exists()


@pytest.mark.slow
def test_child_process_inherits_the_offline_embedder(tmp_path, app):
    """A FALSIFY process that starts another (the demo, the benchmark) passes on the
    EMBEDDING_* values it set for cognee; the child must still pick the offline model."""
    import os, sys
    import forkserver
    from conftest import REPO

    assert os.environ["EMBEDDING_PROVIDER"] == "fastembed"  # set by this process's configure()
    # forked after the third-party imports (none reads EMBEDDING_*), with exactly this environment
    proc = forkserver.run(
        [sys.executable, str(REPO / "main.py"), "--root", str(tmp_path / "child"), "load", str(SEED)],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (
        json.loads((tmp_path / "child" / "falsify.json").read_text())["embedder"]["provider"]
        == "fastembed-local"
    )
