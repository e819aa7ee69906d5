"""The Features tab's Train page: an SAE on one layer over a corpus file (its sizes, the output
folder), or a tuned lens for a masked LM on the same corpus; the work runs in the tab's train
runner with progress and Cancel (core/features/jobs.py)."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from bertstudio.core.features import sae as sae_math
from bertstudio.core.features import tuned_lens
from bertstudio.ui.widgets.flow_layout import FlowLayout, group, wrapping_row
from bertstudio.ui.widgets.forms import browse_button, spin_box
from bertstudio.ui.widgets.layouts import row
from bertstudio.ui.widgets.run_controls import ProgressLine

DEMOS = (("English sentences (ambiguous words)", "ambiguous_words.txt"), ("SMILES molecules", "molecules_smiles.txt"))


class TrainPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.corpus = QLineEdit()
        self.corpus.setPlaceholderText("A UTF-8 text file, one text per line")
        self.demo = QComboBox()
        self.demo.addItem("Demo corpus…", None)
        for label, name in DEMOS:
            self.demo.addItem(label, name)
        self.demo.activated.connect(self._demo_chosen)
        self.layer = spin_box(0, 0, tip="The hidden state: 0 = the embeddings, 1..layers = the encoder layers' outputs")
        self.expansion = spin_box(1, sae_math.MAX_EXPANSION, sae_math.DEFAULT_EXPANSION,
                                  tip="Features = expansion × the layer's width")
        self.k = spin_box(1, 1024, sae_math.DEFAULT_K, tip="Active features per token (TopK)")
        self.epochs = spin_box(1, sae_math.MAX_EPOCHS, sae_math.DEFAULT_EPOCHS,
                               tip="Passes over the training tokens (a tuned lens: over the masked positions)")
        self.output = QLineEdit()
        self.output.setPlaceholderText("A new folder for the SAE or the lens")
        self.overwrite = QCheckBox("Replace an earlier one there")
        self.overwrite.setToolTip("Only a folder BERT Studio wrote is ever replaced")
        self.train_button = QPushButton("Train SAE")
        self.lens_button = QPushButton("Train tuned lens")
        self.lens_button.setToolTip("Per-layer translators for the MLM head (masked LMs); read them in Explain's "
                                    "Per-layer predictions")
        self.cancel_button = QPushButton("Cancel")
        self.progress = ProgressLine()
        self.result = QLabel("")
        self.result.setWordWrap(True)
        self._lay_out()

    def _lay_out(self) -> None:
        sizes = FlowLayout()
        for label, widget in (("Layer", self.layer), ("Expansion", self.expansion), ("k", self.k),
                              ("Epochs", self.epochs)):
            sizes.addWidget(group(QLabel(label), widget))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        browse = browse_button(self.corpus, "Corpus file", "Text files (*.txt);;All files (*)")
        layout.addLayout(row("Corpus", self.corpus, browse, self.demo, stretch=self.corpus))
        layout.addWidget(wrapping_row(sizes))
        layout.addLayout(row("Output", self.output, browse_button(self.output, "Output folder", folder=True),
                              self.overwrite, stretch=self.output))
        layout.addLayout(row(self.train_button, self.lens_button, self.cancel_button, self.progress,
                              stretch=self.progress))
        layout.addWidget(self.result)
        layout.addStretch(1)

    def set_layers(self, levels: int) -> None:
        self.layer.setRange(0, max(0, levels))
        if self.layer.value() == 0 and levels:
            self.layer.setValue(max(1, levels // 2))

    def use_demo(self, name: str) -> None:
        from bertstudio.resources import resource_path

        self.corpus.setText(str(resource_path("corpus", name)))

    def _demo_chosen(self, index: int) -> None:
        name = self.demo.itemData(index)
        if name:
            self.use_demo(str(name))
        self.demo.setCurrentIndex(0)

    def show_sae(self, found: object) -> None:
        info = getattr(found, "info", None)
        if info is None:
            return
        record = info.record
        self.result.setText(f"Saved in {getattr(found, 'path', '')}: {info.m:,} features on layer {info.layer}, "
                            f"held-out FVE {info.fraction_of_variance_explained:.3f}, L0 {info.l0:.1f}, "
                            f"{info.dead_features:,} dead ({info.dead_share:.1%}); {record.get('steps', 0):,} steps "
                            f"at {record.get('tokens_per_second', 0):,.0f} tokens/s. Opened above.")

    def show_lens(self, lens: tuned_lens.TunedLens) -> None:
        logit, tuned = lens.info.get("kl_logit_lens", []), lens.info.get("kl_tuned_lens", [])
        mean = (sum(logit[:-1]) / max(1, len(logit) - 1), sum(tuned[:-1]) / max(1, len(tuned) - 1))
        self.result.setText(f"Tuned lens saved in {lens.path}: mean KL to the last layer on held-out masks "
                            f"{mean[0]:.3f} (logit lens) -> {mean[1]:.3f} (tuned lens). Choose it in Explain's "
                            "Per-layer predictions.")
