"""The Attention tab's Corpus page: Index runs in a worker (progress, Cancel), the table shows exactly
what the core query returns, a token clicked in the head view becomes the query."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bertstudio.core.corpus.query import (
    excerpt,
    index_corpus,
    sentence_neighbours,
    text_query,
    token_neighbours,
)
from bertstudio.core.models import load_model
from bertstudio.core.progress import TaskControl
from bertstudio.ui.tabs.attention_tab import AttentionTab
from bertstudio.ui.widgets.attention_corpus import CorpusPage, context_html
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("attention_tab")  # these tests drive the attention tab only

SHOTS = os.environ.get("BERTSTUDIO_SHOTS")
LINES = ["the river bank was muddy", "she went to the bank for money", "play the piano", "a light bag",
         "turn on the light please now", "we play chess", "the bank raised its rates"]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def _page(tab: AttentionTab) -> CorpusPage:
    pages = [tab.views.widget(i) for i in range(tab.views.count())]
    found = [p for p in pages if isinstance(p, CorpusPage)]
    assert len(found) == 1 and tab.views.tabText(pages.index(found[0])) == "Corpus"
    return found[0]


def _corpus(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_corpus_page_table_equals_the_core_query(qtbot, window, checkpoint_factory, tmp_path) -> None:
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    page = _page(tab)
    tab.views.setCurrentWidget(page)
    page.index_button.click()  # no model yet: said so, nothing runs
    assert "Load a model" in page.status.text() and not page.index_runner.busy
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    page.refresh()
    assert page.layer.maximum() == tab.model_info.layers
    page.index_button.click()
    assert "corpus file" in page.status.text() and not page.index_runner.busy
    page.path.setText(str(tmp_path))  # a folder is refused by the core's reader
    with qtbot.waitSignal(page.index_runner.error, timeout=30_000):
        page.index_button.click()
    qtbot.waitUntil(lambda: not page.index_runner.busy, timeout=10_000)
    assert "folder" in page.status.text()

    tab.text.setPlainText("the bank")
    run_tab(qtbot, tab, idle=True)
    page.refresh()
    assert [t for _, t in page.query_tokens] == list(tab.result.tokens[1:-1])
    page.path.setText(str(_corpus(tmp_path, LINES)))
    page.layer.setValue(1)
    page.k.setValue(5)
    page.token.setCurrentIndex(1)  # token 2 (the tiny tokenizer's first piece of "bank")
    tokens = tab.result.tokens
    with qtbot.waitSignal(page.query_runner.result, timeout=60_000):  # Index, then the search it starts
        page.index_button.click()
    assert "Indexed corpus.txt" in page.status.text() and page.index.layer == 1

    loaded = load_model(tab.model_request())
    index, _ = index_corpus(loaded, _corpus(tmp_path, LINES), 1, TaskControl())
    query, _ = text_query(loaded, "the bank", 1, 2)
    expected = token_neighbours(index, query, 5)
    assert page.table_rows() == [(round(n.score, 4), n.token, n.line, context_html(n)) for n in expected]
    assert page.table.rowCount() == 5 and "<b>" in page.table_rows()[0][3]
    first = expected[0]
    assert excerpt(first)[1] == first.context[first.span[0]:first.span[1]]
    assert page.summary.text().startswith(f"tokens like {tokens[2]!r} (token 2): 5 tokens: {expected[0].token}")

    # a token clicked in the head view (the view state's focus) becomes the query
    with qtbot.waitSignal(page.query_runner.result, timeout=30_000):
        tab.view_state.update(focus=(0, 1))
    assert page.token.currentText() == f"1: {tokens[1]}" and page.answer.query.endswith("(token 1)")

    # sentences like this one: the mean-pooled search
    with qtbot.waitSignal(page.query_runner.result, timeout=30_000):
        page.sentences.setChecked(True)
    whole, _ = text_query(loaded, "the bank", 1, None)
    assert [(r[0], r[2]) for r in page.table_rows()] == [(round(n.score, 4), n.line)
                                                          for n in sentence_neighbours(index, whole, 5)]
    assert page.table.isColumnHidden(1) and "sentences" in page.summary.text()
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "corpus.png"))


def test_cancel_stops_indexing(qtbot, window, checkpoint_factory, tmp_path) -> None:
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    page = _page(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    many = [f"{LINES[i % len(LINES)]} number {i}" for i in range(20_000)]
    page.path.setText(str(_corpus(tmp_path, many)))
    with qtbot.waitSignal(page.index_runner.progress, timeout=30_000,
                          check_params_cb=lambda e: "Indexed" in getattr(e, "message", "")):
        page.index_button.click()
    assert page.cancel_button.isEnabled() and not page.index_button.isEnabled()
    with qtbot.waitSignal(page.index_runner.cancelled, timeout=30_000):
        page.cancel_button.click()
    qtbot.waitUntil(lambda: not page.index_runner.busy, timeout=10_000)
    assert page.index is None and page.status.text() == "Indexing cancelled."
    assert page.index_button.isEnabled() and not page.cancel_button.isEnabled()
    assert not list((tmp_path / "xdg").rglob("*.npz"))  # nothing half-written is cached
