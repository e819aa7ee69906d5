"""The Features tab's Train page: an SAE on one layer over a corpus file (its sizes, the output
folder), or a tuned lens for a masked LM on the same corpus; the work runs in the tab's train
runner with progress and Cancel (core/features/jobs.py)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.features import sae as sae_math
from bertstudio.core.features import tuned_lens
from bertstudio.ui.widgets.flow_layout import FlowLayout, group, wrapping_row
from bertstudio.ui.widgets.run_controls import ProgressLine

DEMOS = (("English sentences (ambiguous words)", "ambiguous_words.txt"), ("SMILES molecules", "molecules_smiles.txt"))


class TrainPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.corpus = QLineEdit()
        self.corpus.setPlaceholderText("A UTF-8 text file, one text per line")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_corpus)
        self.demo = QComboBox()
        self.demo.addItem("Demo corpus…", None)
        for label, name in DEMOS:
            self.demo.addItem(label, name)
        self.demo.activated.connect(self._demo_chosen)
        self.layer = QSpinBox()
        self.layer.setRange(0, 0)
        self.layer.setToolTip("The hidden state: 0 = the embeddings, 1..layers = the encoder layers' outputs")
        self.expansion = QSpinBox()
        self.expansion.setRange(1, sae_math.MAX_EXPANSION)
        self.expansion.setValue(sae_math.DEFAULT_EXPANSION)
        self.expansion.setToolTip("Features = expansion × the layer's width")
        self.k = QSpinBox()
        self.k.setRange(1, 1024)
        self.k.setValue(sae_math.DEFAULT_K)
        self.k.setToolTip("Active features per token (TopK)")
        self.epochs = QSpinBox()
        self.epochs.setRange(1, sae_math.MAX_EPOCHS)
        self.epochs.setValue(sae_math.DEFAULT_EPOCHS)
        self.epochs.setToolTip("Passes over the training tokens (a tuned lens: over the masked positions)")
        self.output = QLineEdit()
        self.output.setPlaceholderText("A new folder for the SAE or the lens")
        out_browse = QPushButton("Browse…")
        out_browse.clicked.connect(self._browse_output)
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

        files = QHBoxLayout()
        for widget in (QLabel("Corpus"), self.corpus, browse, self.demo):
            files.addWidget(widget, 1 if widget is self.corpus else 0)
        sizes = FlowLayout()
        for label, widget in (("Layer", self.layer), ("Expansion", self.expansion), ("k", self.k),
                              ("Epochs", self.epochs)):
            sizes.addWidget(group(QLabel(label), widget))
        output = QHBoxLayout()
        for widget in (QLabel("Output"), self.output, out_browse, self.overwrite):
            output.addWidget(widget, 1 if widget is self.output else 0)
        run = QHBoxLayout()
        for widget in (self.train_button, self.lens_button, self.cancel_button):
            run.addWidget(widget)
        run.addWidget(self.progress, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(files)
        layout.addWidget(wrapping_row(sizes))
        layout.addLayout(output)
        layout.addLayout(run)
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

    def _browse_corpus(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Corpus file", "", "Text files (*.txt);;All files (*)")
        if path:
            self.corpus.setText(path)

    def _browse_output(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Output folder")
        if folder:
            self.output.setText(folder)

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
