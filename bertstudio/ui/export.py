"""File → Export result…: the current tab's result view as PNG or SVG, the result as JSON.

A view that is one plot goes through pyqtgraph's own exporters (ImageExporter, SVGExporter);
a composite view (bars beside text, tables) is grabbed (PNG) or painted into an SVG
generator (vector text and shapes). JSON is the Outcome through `core.jobs.outcome_json`, the
very form the CLI's --json prints for the same result, under "result", beside the task, model,
inputs and settings it was computed from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QSplitter, QWidget

from bertstudio.core.errors import InputError
from bertstudio.core.jobs import outcome_json
from bertstudio.core.outputs import atomic_path
from bertstudio.core.tasks.spec import jsonable

FORMATS = {".png": "PNG image", ".svg": "SVG drawing", ".json": "JSON result"}
FILTER = ";;".join(f"{name} (*{suffix})" for suffix, name in FORMATS.items())


def result_view(tab: QWidget) -> QWidget:
    """The part of a tab that shows its result (the splitter's lower half on template tabs)."""
    view, splitter, shown = getattr(tab, "result_view", None), getattr(tab, "splitter", None), None
    if callable(view):
        shown = view()
    elif isinstance(splitter, QSplitter) and splitter.count() > 1:
        shown = splitter.widget(splitter.count() - 1)
    return shown if isinstance(shown, QWidget) else tab


def result_json(tab: Any) -> dict[str, Any]:
    """The tab's last result with what it came from; InputError when nothing has been run.

    `{"task", "model", "inputs", "settings", "result"}`: `result` is exactly what the CLI's --json
    prints for the same result (`core.jobs.outcome_json`: the result's own form, or with a compared
    model `{"model", "result", "compare", "notes"}`); `inputs` are the ones the result was computed
    from (not the text boxes as they are now), `settings` the heads off and compared model. The
    Evaluate tab keeps its evaluation (or comparison), the Train tab its run's result; their inputs
    are the tab's settings (file, columns, rows).
    """
    outcome = getattr(tab, "outcome", None)
    info = getattr(tab, "model_info", None)
    source = info.request.source if info else ""
    if outcome is not None and getattr(outcome, "result", None) is not None:
        frame = tab.read_state().result_json()  # the inputs the result came from, not the boxes now
        return {**frame, "result": outcome_json(frame["model"] or source, outcome)}
    for name in ("comparison", "evaluation", "result"):
        value = getattr(tab, name, None)
        if value is not None:
            state = tab.read_state().view if hasattr(tab, "read_state") else {}
            return {"task": getattr(tab, "TASK", ""), "model": getattr(value, "model", source) or source,
                    "inputs": state, "settings": {}, "result": jsonable(value)}
    raise InputError("There is no result to export yet.", hint="Run the task first.")


def _single_plot(view: QWidget) -> Any:
    """The pyqtgraph PlotWidget when the view is (only) one plot, else None."""
    import pyqtgraph as pg

    return view if isinstance(view, pg.PlotWidget) else None


def export_png(view: QWidget, path: str | Path) -> None:
    plot = _single_plot(view)
    if plot is not None:
        from pyqtgraph.exporters import ImageExporter

        exporter = ImageExporter(plot.getPlotItem())
        exporter.parameters()["width"] = max(plot.width() * 2, 800)  # print resolution
        with atomic_path(path) as partial:
            exporter.export(str(partial))
        return
    save_image(grab(view), path)


def grab(view: QWidget) -> QImage:
    """The view as an image (fast, GUI thread); `save_image` encodes it (slow: a worker)."""
    return view.grab().toImage()


def save_image(image: QImage, path: str | Path, control: Any = None) -> Path:
    """PNG encoding takes ~80 ms for a full view: it runs in a worker (QImage is safe off the GUI thread)."""
    with atomic_path(path) as partial:
        if not image.save(str(partial), "PNG"):  # type: ignore[call-overload]  # the stubs say bytes; only str works
            raise InputError(f"Could not write {path}.")
    return Path(path)


def export_svg(view: QWidget, path: str | Path) -> None:
    plot = _single_plot(view)
    if plot is not None:
        from pyqtgraph.exporters import SVGExporter

        with atomic_path(path) as partial:
            SVGExporter(plot.getPlotItem()).export(str(partial))
        return
    with atomic_path(path) as partial:
        _paint_svg(view, partial)


def _paint_svg(view: QWidget, path: Path) -> None:
    from PySide6.QtSvg import QSvgGenerator

    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(view.width(), view.height()))
    generator.setViewBox(QRect(0, 0, view.width(), view.height()))
    generator.setTitle(view.window().windowTitle())
    painter = QPainter(generator)
    try:
        view.render(painter, QPoint(0, 0))
    finally:
        painter.end()


def export_json(data: Any, path: str | Path) -> None:
    """Atomic, like the workspace; paths and other plain values as strings (a list for some tasks)."""
    from bertstudio.ui.workspace import write

    write(path, data, default=str)


def target(path: str | Path) -> Path:
    """The path with a known suffix (.png, .svg, .json); none known: .png added, and then an existing
    file of that name is refused (the save dialog asked about the name given, not this one). Never a
    path in BERT Studio's own folder (core/outputs.py)."""
    from bertstudio.core.outputs import output_file, refuse_inside_package

    path = Path(path)
    refuse_inside_package(path, "export")
    if path.suffix.lower() in FORMATS:
        return path
    return output_file(path.with_name(path.name + ".png"), "export")


def export_tab(tab: Any, path: str | Path) -> Path:
    """Export by suffix, all on the calling thread (the menu hands PNG encoding to a worker)."""
    path = target(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        export_json(result_json(tab), path)
        return path
    require_result(tab)
    if suffix == ".svg":
        export_svg(result_view(tab), path)
    else:
        export_png(result_view(tab), path)
    return path


def require_result(tab: Any) -> None:
    """A task tab that has not run has nothing to export (tabs without an Outcome export their view)."""
    if getattr(tab, "outcome", "no such view") is None:
        raise InputError("There is no result to export yet.", hint="Run the task first.")
