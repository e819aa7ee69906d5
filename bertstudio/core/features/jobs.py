"""The Features tab's worker jobs: module-level functions a TaskRunner runs (issue 18: no job in
ui/tabs). Each reads its files and loads its model in the worker (the model cache makes a loaded
one free), so the window never waits on a disk or a forward pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core.features.sae_folder import SaeFolder
from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl


def open_sae_job(path: str, control: TaskControl) -> SaeFolder:
    from bertstudio.core.features.sae_folder import load

    control.report(f"Reading the SAE in {path}…", None)
    return load(path)


@dataclass(frozen=True)
class Encoded:
    """A text's features (card.Encoding) and what it was computed from."""

    request: LoadRequest
    text: str
    encoding: Any


def encode_job(request: LoadRequest, found: SaeFolder, text: str, control: TaskControl) -> Encoded:
    from bertstudio.core.features.card import encode_text
    from bertstudio.core.models import load_model

    loaded = load_model(request, control)
    control.check()
    return Encoded(request, text, encode_text(loaded, found, text, control))


def card_job(found: SaeFolder, feature: int, device: str, control: TaskControl) -> Any:
    """A feature's card; promoted tokens where the SAE's model is a masked LM with its trained head."""
    from bertstudio.core.features.card import check_feature, feature_card, mlm_for

    number = check_feature(found, feature)
    return feature_card(found, number, mlm_for(found, device, control))


def intervene_job(request: LoadRequest, found: SaeFolder, feature: int, scale: float, texts: tuple[str, ...],
                  control: TaskControl) -> Any:
    """The task's answer on `texts` (one part per line, as Explain reads them) intact and with the feature
    scaled (0: ablated): an Outcome, A intact and B edited."""
    from bertstudio.core.explain.inputs import task_inputs
    from bertstudio.core.features.card import intervene

    return intervene(request, found, feature, scale, task_inputs(request.task, texts), control)


def train_sae_job(request: LoadRequest, corpus: str, layer: int, output: str, expansion: int, k: int, epochs: int,
                  overwrite: bool, control: TaskControl) -> SaeFolder:
    from bertstudio.core.features.sae import TrainOptions
    from bertstudio.core.features.sae_train import train_features
    from bertstudio.core.files import regular_file
    from bertstudio.core.models import load_model

    regular_file(corpus, "corpus file")
    loaded = load_model(request, control)
    control.check()
    return train_features(loaded, corpus, layer, output, TrainOptions(expansion=expansion, k=k, epochs=epochs),
                          control, overwrite)


def train_lens_job(request: LoadRequest, corpus: str, output: str, epochs: int, overwrite: bool,
                   control: TaskControl) -> Any:
    from bertstudio.core.features.tuned_lens import train_lens
    from bertstudio.core.files import regular_file
    from bertstudio.core.models import load_model

    regular_file(corpus, "corpus file")
    loaded = load_model(request, control)
    control.check()
    return train_lens(loaded, corpus, output, control, epochs, 0, overwrite)
