"""The dark theme reaches every plot and every coloured text (issue 8): no white plot on a dark
window, no white text on a yellow highlight, no grey note on a dark background."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QColor, QGuiApplication, QPalette

from bertstudio.core.notes import Note
from bertstudio.ui import plot_style, theme

MIN_CONTRAST = 4.5  # WCAG AA for normal text


def contrast(a: str | QColor, b: str | QColor) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    def luminance(colour: QColor) -> float:
        def channel(c: float) -> float:
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())

    high, low = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture(autouse=True)
def _light_again(qapp):  # noqa: ANN001, ANN202
    yield
    theme.manager().set_mode("light", remember=False)


def _views(window):  # noqa: ANN001, ANN202
    import pyqtgraph as pg

    return [view for view in window.findChildren(pg.GraphicsView)]


def _describe(view) -> str:  # noqa: ANN001
    owner = view.parent()
    while owner is not None and owner.parent() is not None and not hasattr(owner, "TASK"):
        owner = owner.parent()
    return f"{type(view).__name__} in {getattr(owner, 'TITLE', type(owner).__name__)}"


def test_every_plot_in_the_window_follows_the_dark_theme(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.tabs.count() == len(window.task_tabs) and window.tabs.count() > 5)
    theme.manager().set_mode("dark", remember=False)
    views = _views(window)
    assert len(views) >= 8  # bars, QA scores, attention, projector, head importance, training...
    wrong = [f"{_describe(v)}: {plot_style.background_of(v)}" for v in views
             if plot_style.background_of(v) != theme.DARK.background]
    assert not wrong, "plots left in another background than the dark theme's:\n" + "\n".join(wrong)
    unreadable = []
    import pyqtgraph as pg

    for view in views:
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem) and item.isVisible():
                colour = item.textPen().color()
                if contrast(colour, theme.DARK.background) < 3.0:
                    unreadable.append(f"{_describe(view)}: axis {item.orientation} text {colour.name()}")
    assert not unreadable, "\n".join(unreadable)
    theme.manager().set_mode("light", remember=False)  # and back: each one restyled again
    wrong = [_describe(v) for v in views if plot_style.background_of(v) != theme.LIGHT.background]
    assert not wrong, wrong


def test_style_view_styles_a_graphics_layout_and_its_colour_bar(qtbot) -> None:
    import numpy as np
    import pyqtgraph as pg

    layout = pg.GraphicsLayoutWidget()
    qtbot.addWidget(layout)
    plot = layout.addPlot()
    image = pg.ImageItem(np.zeros((3, 3)))
    plot.addItem(image)
    bar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get("viridis"), label="share")
    bar.setImageItem(image, insert_in=plot)
    plot_style.style_view(layout)
    theme.manager().set_mode("dark", remember=False)
    assert plot_style.background_of(layout) == theme.DARK.background
    assert bar.axis.textPen().color().name() == theme.DARK.foreground
    assert plot.getAxis("left").textPen().color().name() == theme.DARK.foreground
    assert not plot.getAxis("left").autoSIPrefix


def test_projector_confusion_matrix_and_head_importance_are_dark(qtbot) -> None:
    import numpy as np

    from bertstudio.ui.widgets.confusion_matrix import ConfusionMatrixView
    from bertstudio.ui.widgets.head_importance_view import HeadImportanceView
    from bertstudio.ui.widgets.projector_plot import ProjectorPlot

    projector, matrix, heads = ProjectorPlot(), ConfusionMatrixView(), HeadImportanceView()
    for widget in (projector, matrix, heads):
        qtbot.addWidget(widget)
    projector.set_points(np.array([[0.0, 0.0], [1.0, 1.0]]), ["a", "b"], ["x", "y"])
    projector.select([1])
    theme.manager().set_mode("dark", remember=False)
    for view in (projector.plot, matrix.plot, heads.plot_widget):
        assert plot_style.background_of(view) == theme.DARK.background, type(view.parent()).__name__
    pens = projector.scatter.data["pen"]
    assert pens[1].color().name() == theme.DARK.foreground  # the selected point stands out on dark
    assert pens[0].color().name() == theme.DARK.background


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_qa_answer_highlight_has_readable_text(qtbot, mode: str) -> None:
    from bertstudio.ui.widgets.qa_context import QAContextEdit

    theme.manager().set_mode(mode, remember=False)
    context = QAContextEdit()
    qtbot.addWidget(context)
    context.setPlainText("The Eiffel Tower is in Paris, the capital of France.")
    context.show_span(23, 28, window=(0, 50))
    for selection in context.extraSelections():
        fmt = selection.format
        text = fmt.foreground().color() if fmt.hasProperty(fmt.Property.ForegroundBrush) \
            else context.palette().color(QPalette.ColorRole.Text)
        assert contrast(text, fmt.background().color()) >= MIN_CONTRAST, (mode, text.name(),
                                                                           fmt.background().color().name())


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_notes_are_readable_on_the_window_background(qtbot, mode: str) -> None:
    from bertstudio.ui.widgets.notes_area import NotesArea, colours

    notes = NotesArea()
    qtbot.addWidget(notes)
    theme.manager().set_mode(mode, remember=False)
    window_colour = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    for level in ("info", "warning", "error"):
        text, background = colours(level)
        behind = window_colour if background == "transparent" else QColor(background)
        assert contrast(text, behind) >= MIN_CONTRAST, (mode, level, text, behind.name())
    notes.set_notes([Note("info", "Cancelled.")])
    assert colours("info")[0] in notes.label.text()
    theme.manager().set_mode("light" if mode == "dark" else "dark", remember=False)  # switched afterwards
    assert colours("info")[0] in notes.label.text()  # the note already shown follows


def test_ink_on_picks_the_readable_text_colour() -> None:
    for background in ("#ffd54f", "#fbd9c4", "#9fd8ff", "#1f2227", "#3f6fc4", "#2c3a4f"):
        assert contrast(theme.ink_on(background), background) >= MIN_CONTRAST, background


def test_entity_text_follows_a_theme_switch_and_stays_readable(qtbot) -> None:
    from PySide6.QtGui import QImage

    from bertstudio.ui.widgets.span_text import Span, SpanText

    theme.manager().set_mode("light", remember=False)
    spans = SpanText()
    qtbot.addWidget(spans)
    spans.resize(400, 120)
    spans.show()
    spans.set_spans("Angela Merkel met Macron in Paris.", [Span(0, 13, "PER"), Span(28, 33, "LOC")])
    theme.manager().set_mode("dark", remember=False)  # switched while shown, as View → Theme does
    qtbot.wait(1)
    image: QImage = spans.view.viewport().grab().toImage()
    corner = image.pixelColor(image.width() - 5, image.height() - 5)  # empty editor space, bottom right
    assert corner.lightness() < 128, corner.name()  # not a white box in the dark window
    cursor_format = spans.view.document().firstBlock().begin().fragment().charFormat()
    assert contrast(cursor_format.foreground().color(), cursor_format.background().color()) >= MIN_CONTRAST


_STYLE = re.compile(r"style\s*=\s*(['\"])(.*?)\1", re.S)


def _declared(style: str, name: str) -> str | None:
    found = re.search(rf"(?<![-\w]){name}\s*:\s*([^;}}]+)", style)
    return found.group(1).strip() if found else None


def _fixed_colours(label) -> list[tuple[str, str | None]]:  # noqa: ANN001
    """(text colour, the background declared with it or None) of a label's style sheet and of
    the styled spans in its rich text."""
    styles = [label.styleSheet()] + [m.group(2) for m in _STYLE.finditer(label.text())]
    pairs = []
    for style in styles:
        colour = _declared(style, "color")
        if colour:
            pairs.append((colour, _declared(style, "background-color") or _declared(style, "background")))
    return pairs


def test_no_label_has_a_fixed_colour_unreadable_on_dark(qtbot, window) -> None:
    """The attention tab's note and line count were `#555` on the dark window (1.8:1); every label's
    own colour now comes from the theme, and follows a switch made after the labels were built."""
    from PySide6.QtWidgets import QLabel

    assert theme.manager().scheme() == "light"  # built light, then switched
    theme.manager().set_mode("dark", remember=False)
    window_colour = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    checked, unreadable = [], []
    for label in window.findChildren(QLabel):
        for text, background in _fixed_colours(label):
            behind = window_colour if background in (None, "transparent") else QColor(background)
            if not QColor(text).isValid() or not behind.isValid():  # a gradient or rgba(): not a fixed colour
                continue
            checked.append(label)
            if contrast(text, behind) < MIN_CONTRAST:
                unreadable.append((type(label.window()).__name__, label.objectName(), label.text()[:40], text,
                                   behind.name()))
    attention = window.task_tabs["attention"]
    assert attention.note in checked and attention.head_page.lines_label in checked
    assert not unreadable, unreadable


def test_a_disabled_field_looks_disabled_in_the_dark_theme(qtbot) -> None:  # noqa: ANN001
    """Issue 29 #17: the read-only Train form during a run looked editable (grey text alone)."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QLineEdit

    theme.manager().set_mode("dark", remember=False)
    field = QLineEdit("0.10")
    qtbot.addWidget(field)
    field.setEnabled(False)
    palette = field.palette()
    group = QPalette.ColorGroup
    for role in (QPalette.ColorRole.Base, QPalette.ColorRole.Text):
        assert palette.color(group.Disabled, role) != palette.color(group.Active, role), role
    assert contrast(palette.color(group.Active, QPalette.ColorRole.Text),
                    palette.color(group.Disabled, QPalette.ColorRole.Text)) > 2.5
