"""The attention tab's view state, apart from the views (glue's `viewers/common/state.py`).

One observable object holds what the person chose (layer, head, what to show, quadrant,
colours, hidden specials, the focused token, the heads shown in the head view and the heads
selected to switch off). Controls write to it; the grid, detail, head view, statistics and
compare views subscribe and redraw only for the fields they use. No `_updating` flags: a
change is applied once, then every subscriber hears which fields changed, once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.attention.view import QUADRANTS, ViewOptions

SOURCES = ("head", "layer mean", "rollout")
# what the grid, detail, head view, compare and exports show: the weights alpha, or the value-weighted
# norms ||alpha f(x)|| (Kobayashi et al. 2020; per head, and summed over heads where the weights average)
WEIGHTINGS = ("weights", "value-weighted norms")
# change which tokens are shown, or which values: every view redraws
VIEW_FIELDS = frozenset({"quadrant", "hide_special", "renormalise", "weighting"})

Listener = Callable[[frozenset[str]], None]


@dataclass(frozen=True)
class ViewSettings:
    layer: int = 0
    head: int = 0
    source: str = "head"  # one of SOURCES: the detail view's matrix
    quadrant: str = "all"  # one of QUADRANTS (pairs only)
    hide_special: bool = False
    renormalise: bool = True
    colours: str = "viridis"
    weighting: str = "weights"  # one of WEIGHTINGS
    focus: tuple[int, int] | None = None  # (0 query / 1 key, position in the full input): lines kept shown
    heads_shown: tuple[int, ...] = (0,)  # the head view's heads; `head` is always among them when any
    selected: tuple[tuple[int, int], ...] = ()  # (layer, head) chosen in the grid to switch off

    @property
    def norms(self) -> bool:
        """The views show value-weighted norms instead of the weights."""
        return self.weighting == WEIGHTINGS[1]

    def options(self, pair: bool = True) -> ViewOptions:
        """The view options for the result at hand (quadrants need a pair)."""
        return ViewOptions(self.hide_special, self.renormalise, self.quadrant if pair else "all")


class AttentionViewState:
    """Observable ViewSettings: `update(**changes)` validates, stores and tells the listeners."""

    def __init__(self, settings: ViewSettings | None = None) -> None:
        self._settings = settings or ViewSettings()
        self._shape = (0, 0)  # (layers, heads) of the result shown; 0: not known yet
        self._listeners: list[tuple[Listener, frozenset[str] | None]] = []
        self._depth = 0
        self._pending: set[str] = set()

    @property
    def settings(self) -> ViewSettings:
        return self._settings

    def __getattr__(self, name: str) -> Any:  # state.layer, state.quadrant... read the settings
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._settings, name)

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    def subscribe(self, listener: Listener, only: Iterable[str] | None = None) -> Callable[[], None]:
        """Call `listener(changed)` after changes that touch `only` (every change when None)."""
        entry = (listener, frozenset(only) if only is not None else None)
        self._listeners.append(entry)
        return lambda: self._listeners.remove(entry)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Several updates, one notification (e.g. layer and head from one click)."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self._pending:
                changed, self._pending = frozenset(self._pending), set()
                self._notify(changed)

    def update(self, **changes: Any) -> frozenset[str]:
        """Set fields; returns (and announces) the names whose value really changed."""
        known = {f.name for f in fields(ViewSettings)}
        unknown = set(changes) - known
        if unknown:
            raise AttributeError(f"no view setting {', '.join(sorted(unknown))}")
        new = self._follow(self._valid(replace(self._settings, **changes)), changes)
        changed = frozenset(k for k in known if getattr(new, k) != getattr(self._settings, k))
        self._settings = new
        if changed:
            self._pending |= changed
            if self._depth == 0:
                pending, self._pending = frozenset(self._pending), set()
                self._notify(pending)
        return changed

    def set_shape(self, layers: int, heads: int) -> None:
        """A new result: keep the choices that still exist, clamp the rest."""
        self._shape = (layers, heads)
        self.update()

    def move(self, layers: int, heads: int) -> None:
        """Next/previous head, wrapping into the next/previous layer (and round the model)."""
        count, depth = self._shape[1], self._shape[0]
        if not count or not depth:
            return
        index = (self.layer * count + self.head + heads + layers * count) % (depth * count)
        self.update(layer=index // count, head=index % count)

    def toggle_selected(self, layer: int, head: int, add: bool) -> None:
        """A click selects one head; Ctrl+click adds it to (or removes it from) the selection."""
        chosen = (layer, head)
        if not add:
            self.update(selected=(chosen,))
        elif chosen in self.selected:
            self.update(selected=tuple(h for h in self.selected if h != chosen))
        else:
            self.update(selected=tuple(sorted((*self.selected, chosen))))

    def to_json(self) -> dict[str, Any]:
        """What a workspace saves."""
        data = asdict(self._settings)
        data["heads_shown"] = list(self._settings.heads_shown)
        data["selected"] = [list(h) for h in self._settings.selected]
        data["focus"] = list(self._settings.focus) if self._settings.focus is not None else None
        return data

    def restore(self, data: dict[str, Any]) -> None:
        """Back from `to_json`; unknown keys and impossible values are dropped, not raised."""
        known = {f.name for f in fields(ViewSettings)}
        clean = {k: v for k, v in data.items() if k in known}
        if "heads_shown" in clean:
            clean["heads_shown"] = tuple(int(h) for h in clean["heads_shown"])
        if clean.get("focus") is not None:
            clean["focus"] = (int(clean["focus"][0]), int(clean["focus"][1]))
        if "selected" in clean:
            clean["selected"] = tuple((int(a), int(b)) for a, b in clean["selected"])
        with self.batch():
            for key, value in clean.items():
                try:
                    self.update(**{key: value})
                except (InputError, TypeError, ValueError):
                    continue

    # -- internals ---------------------------------------------------------------------------
    def _valid(self, s: ViewSettings) -> ViewSettings:
        if s.source not in SOURCES:
            raise InputError(f"Unknown view {s.source!r}; choose one of {', '.join(SOURCES)}.")
        if s.weighting not in WEIGHTINGS:
            raise InputError(f"Unknown weighting {s.weighting!r}; choose one of {', '.join(WEIGHTINGS)}.")
        if s.quadrant not in QUADRANTS:
            raise InputError(f"Unknown quadrant {s.quadrant!r}; choose one of {', '.join(QUADRANTS)}.")
        layers, heads = self._shape
        if not layers or not heads:
            return s
        return replace(
            s,
            layer=min(max(s.layer, 0), layers - 1),
            head=min(max(s.head, 0), heads - 1),
            heads_shown=tuple(h for h in s.heads_shown if 0 <= h < heads),
            selected=tuple(h for h in s.selected if 0 <= h[0] < layers and 0 <= h[1] < heads),
        )

    def _follow(self, new: ViewSettings, changes: dict[str, Any]) -> ViewSettings:
        """One head in view: the head view always draws the detail view's head. A new head replaces
        the old one among the heads shown; unticking the detail head there moves the detail view."""
        old = self._settings
        if "head" in changes and "heads_shown" not in changes and new.head != old.head:
            others = {h for h in new.heads_shown if h != old.head} if len(new.heads_shown) > 1 else set()
            return replace(new, heads_shown=tuple(sorted(others | {new.head})))
        if "heads_shown" in changes and "head" not in changes and new.heads_shown \
                and new.head not in new.heads_shown:
            return replace(new, head=new.heads_shown[0])
        return new

    def _notify(self, changed: frozenset[str]) -> None:
        for listener, only in list(self._listeners):
            if only is None or only & changed:
                listener(changed)
