"""How the tabs reach each other, in one place: no tab imports another tab.

- a task tab's "Explain…" opens the Explain tab on that result: its own input object and answer
  run there as handed over (never re-read from the Explain tab's text box);
- heads selected in the attention grid become every task tab's "heads off" (intact vs ablated),
  only when the person presses the attention tab's "Switch these heads off in the task tabs";
  each field then says where its heads came from and has its own Clear;
- a row double-clicked in the Evaluate tab opens in its task's tab, with the evaluated model,
  and runs there once that model is ready (never the previous text's result under the new text);
- the Train tab's "Open in …" loads the trained model in that task's tab and shows it;
- the Train tab's "Evaluate" (through `MainWindow.open_evaluation`) runs the trained model on its
  validation file in the Evaluate tab;
- the Tests tab's "Fine-tune on failures" opens the Train tab with the data it wrote; its `{mask}`
  words come from the Fill-mask tab's loaded model unless another masked LM is named;
- a training run that ends (saved, stopped or failed) refreshes the Runs page, which holds its record.
- ... and, when it is the fix the Tests tab asked for, the suite and the held-out file re-run there on the
  model before and after.

Tabs are found by the signals and methods they offer (duck typing), so a tab that is not
there (a build without it) simply takes no part.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTabWidget


def _tab_with(tabs: QTabWidget, name: str) -> Any:
    """The first tab that has `name` (a method or a part), else None."""
    for index in range(tabs.count()):
        widget = tabs.widget(index)
        if getattr(widget, name, None) is not None:
            return widget
    return None


def explain(tabs: QTabWidget, request: Any) -> None:
    """A task tab's ExplainRequest (spec key, LoadRequest, inputs, result) -> the Explain tab, which
    explains the result's answer on those inputs (`ExplainTab.explain`)."""
    target = _tab_with(tabs, "explain")
    if target is not None:
        tabs.setCurrentWidget(target)
        target.explain(request.spec_key, request.request, request.inputs, request.result)


def heads_origin(heads: Any, where: str = "Attention") -> str:
    count = len(heads)
    return f"from {where}, {count} head{'s' if count != 1 else ''}"


def switch_heads_off(task_tabs: dict[str, Any], heads: Any, sender: Any = None) -> None:
    """The attention tab's explicit "switch these heads off in the task tabs": every other task tab
    runs intact vs these heads off, and its field says where they came from. The tab that sent them
    keeps its own heads on (it is told apart by identity, not by its task key)."""
    heads = tuple(heads)
    where = getattr(sender, "TITLE", "") or "Attention"
    for tab in task_tabs.values():
        if tab is not sender and callable(getattr(tab, "set_ablated_heads", None)):
            tab.set_ablated_heads(heads, heads_origin(heads, where))


def open_row(tabs: QTabWidget, task_tabs: dict[str, Any], spec_key: str, source: str, inputs: Any) -> None:
    """An evaluated row in its task tab, with the evaluated model loaded there."""
    tab = task_tabs.get(spec_key)
    if tab is None:
        return
    tabs.setCurrentWidget(tab)
    tab.set_inputs(inputs)
    loaded = tab.model_request()
    if loaded is None or loaded.source != source or getattr(tab.model_bar, "busy", False):
        tab.open_model(source)  # (another model on its way would otherwise run the row)
    if callable(getattr(tab, "run_when_ready", None)):
        tab.run_when_ready()


def open_evaluation(tabs: QTabWidget, model_source: str, data_file: str, task_key: str) -> bool:
    target = _tab_with(tabs, "open_evaluation")
    if target is None:
        return False
    tabs.setCurrentWidget(target)
    target.reset_for_handoff(model_source)  # the handed-over model alone, not compared with an earlier one
    target.open_evaluation(model_source, data_file, task_key)
    return True


def open_model_in(tabs: QTabWidget, task_tabs: dict[str, Any], task: str, folder: str) -> None:
    """The Train tab's "Open in …": the trained model in that task's tab, which is then shown."""
    tab = task_tabs.get(task)
    if tab is None:
        return
    tab.open_model(folder)
    tabs.setCurrentWidget(tab)


def fine_tune(tabs: QTabWidget, task: str, model: str, train_file: str, output_dir: str) -> None:
    """The Tests tab's "Fine-tune on failures": Train shown with its data, base model and output set."""
    target = _tab_with(tabs, "set_training_data")
    if target is not None:
        tabs.setCurrentWidget(target)
        target.set_training_data(task, model, train_file, output_dir)


def label_rows(tabs: QTabWidget, rows: list[tuple[str, str, str]]) -> None:
    """The Tests tab's failures in Train's labelling table, each proposed with its expected label."""
    from bertstudio.ui.train.label_panel import ToLabel

    target = _tab_with(tabs, "label_panel")
    if target is not None:
        tabs.setCurrentWidget(target)
        target.label_panel.add_rows([ToLabel(text, label, f"test: {test}") for text, label, test in rows])


def refresh_runs(tabs: QTabWidget) -> None:
    """A training run ended: the Runs page reads the runs index again (now with that run)."""
    target = _tab_with(tabs, "refresh_runs")
    if target is not None:
        target.refresh_runs()


def training_ended(tabs: QTabWidget, train_tab: Any) -> None:
    """A training run ended: the Tests tab re-runs a fix it asked for on that model (`training_finished`),
    and is shown."""
    result = getattr(train_tab, "result", None)
    target = _tab_with(tabs, "training_finished")
    if result is not None and target is not None and target.training_finished(result.output_dir):
        tabs.setCurrentWidget(target)


def masked_lm_source(task_tabs: dict[str, Any]) -> str:
    """The model loaded in the masked-LM task's tab (Fill-mask), "" if none: the Tests tab's `{mask}` default."""
    from bertstudio.core.tasks.spec import all_specs

    for spec in all_specs().values():
        tab = task_tabs.get(spec.key)
        if spec.counterfactual is not None and spec.counterfactual.masked_lm and tab is not None:
            bar = getattr(tab, "model_bar", None)
            return bar.info.request.source if bar is not None and bar.info is not None else ""
    return ""


def connect_tab(tabs: QTabWidget, task_tabs: dict[str, Any], tab: Any) -> None:
    """Wire one newly added tab to the others (tabs arrive in two batches at start-up), by what it offers."""
    if hasattr(tab, "explain_requested"):
        tab.explain_requested.connect(lambda request: explain(tabs, request))
    if hasattr(tab, "heads_off_requested"):
        tab.heads_off_requested.connect(lambda heads: switch_heads_off(task_tabs, heads, tab))
    if hasattr(tab, "open_row"):
        tab.open_row.connect(lambda key, source, inputs: open_row(tabs, task_tabs, key, source, inputs))
    if hasattr(tab, "fine_tune_requested"):
        tab.fine_tune_requested.connect(lambda *args: fine_tune(tabs, *args))
    if hasattr(tab, "label_requested"):
        tab.label_requested.connect(lambda rows: label_rows(tabs, rows))
    if hasattr(tab, "open_model_requested"):
        tab.open_model_requested.connect(lambda task, folder: open_model_in(tabs, task_tabs, task, folder))
        tab.can_open = task_tabs.__contains__  # "Open in …" only for tabs this build has
    if hasattr(tab, "run_ended"):
        tab.run_ended.connect(lambda: refresh_runs(tabs))
        tab.run_ended.connect(lambda: training_ended(tabs, tab))
    if hasattr(tab, "masked_lm_source"):
        tab.masked_lm_source = lambda: masked_lm_source(task_tabs)
