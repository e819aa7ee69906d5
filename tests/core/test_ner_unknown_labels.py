"""Evaluate NER on a file with an entity type the model has no label for (issue 29): the demo
ner_eval.conll has ORG, the fixture head knows LOC/PER. The run is scored, ORG counts as missed
(recall 0) and a note says so; only a model that knows none of the file's types is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.evaluation import evaluate
from bertstudio.core.evaluate.readers import Dataset, Example, read_dataset
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.resources import resource_path
from tests.conftest import run_cli

DEMO = resource_path("datasets") / "ner_eval.conll"
NOTE = "The model does not know ORG: those entities count as missed."


@pytest.fixture(scope="module")
def ner_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT token classifier whose labels are O, B/I-PER, B/I-LOC."""
    from tests.fixtures.checkpoints import build_checkpoint

    return build_checkpoint(tmp_path_factory.mktemp("ner") / "bert-ner", "bert", "TokenClassification")


def test_an_unknown_gold_type_is_scored_as_missed_with_a_note(ner_head: Path) -> None:
    loaded = load_model(LoadRequest(str(ner_head), "ner"))
    result = evaluate(loaded, read_dataset("ner", DEMO))
    assert NOTE in [note.text for note in result.notes]
    org = result.per_label["ORG"]
    assert org.recall == 0.0 and org.support > 0  # every ORG entity is missed, and it is counted
    assert {"LOC", "PER"} <= set(result.per_label)
    assert 0.0 <= result.metrics["recall"] < 1.0


def test_a_model_that_knows_none_of_the_files_types_is_refused(ner_head: Path) -> None:
    loaded = load_model(LoadRequest(str(ner_head), "ner"))
    dataset = Dataset("ner", "orgs.conll", (Example(3, "Acme Corp", ("Acme", "Corp"), ("B-ORG", "I-ORG")),))
    with pytest.raises(InputError, match=r"Line 3 has the tag 'B-ORG': the model knows no entity type 'ORG'"):
        evaluate(loaded, dataset)


def test_cli_scores_the_demo_file_and_says_org_is_missed(capfd: pytest.CaptureFixture[str], ner_head: Path) -> None:
    done = run_cli(capfd, "evaluate", "--model", str(ner_head), "--data", str(DEMO), "--limit", "8", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert any(NOTE in json.dumps(note) for note in data["notes"])
    per_type = next(value for key, value in data.items() if key.startswith("per_"))
    assert per_type["ORG"]["recall"] == 0.0
