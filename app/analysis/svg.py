"""Small SVG charts written by hand, for the self-contained HTML report (no assets, no JS)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

FONT = "font-family='system-ui, sans-serif' font-size='12'"
BAR = "#4477aa"
NEG = "#cc6677"
GRID = "#dddddd"


def _num(v: float) -> str:
    return f"{v:.1f}"


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    lows: Sequence[float] | None = None,
    highs: Sequence[float] | None = None,
    *,
    title: str = "",
    domain: tuple[float, float] = (-1.0, 1.0),
    width: int = 640,
    bar_height: int = 18,
) -> str:
    """Horizontal bars with optional interval whiskers; NaN bars are left empty."""
    label_w, pad, top = 170, 12, 28 if title else 8
    n = len(labels)
    height = top + n * (bar_height + 6) + 28
    lo_d, hi_d = domain
    plot_w = width - label_w - 2 * pad

    def sx(v: float) -> float:
        return label_w + pad + (min(max(v, lo_d), hi_d) - lo_d) / (hi_d - lo_d) * plot_w

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' {FONT}>"
    ]
    if title:
        parts.append(f"<text x='{pad}' y='18' font-weight='bold'>{escape(title)}</text>")
    for tick in np.linspace(lo_d, hi_d, 5):
        x = sx(float(tick))
        parts.append(
            f"<line x1='{_num(x)}' y1='{top}' x2='{_num(x)}' y2='{height - 22}' stroke='{GRID}'/>"
            f"<text x='{_num(x)}' y='{height - 8}' text-anchor='middle'>{tick:.2g}</text>"
        )
    zero = sx(0.0) if lo_d < 0 < hi_d else sx(lo_d)
    for k, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + k * (bar_height + 6)
        parts.append(
            f"<text x='{label_w}' y='{y + bar_height - 5}' text-anchor='end'>"
            f"{escape(str(label)[:28])}</text>"
        )
        if value is None or not math.isfinite(value):
            continue
        x0, x1 = sorted((zero, sx(value)))
        colour = BAR if value >= 0 else NEG
        parts.append(
            f"<rect x='{_num(x0)}' y='{y}' width='{_num(max(x1 - x0, 1))}' "
            f"height='{bar_height}' fill='{colour}'><title>{escape(str(label))}: "
            f"{value:.3f}</title></rect>"
        )
        if lows is not None and highs is not None:
            lo, hi = lows[k], highs[k]
            if math.isfinite(lo) and math.isfinite(hi):
                ym = y + bar_height / 2
                parts.append(
                    f"<line x1='{_num(sx(lo))}' y1='{_num(ym)}' x2='{_num(sx(hi))}' "
                    f"y2='{_num(ym)}' stroke='black'/>"
                    f"<line x1='{_num(sx(lo))}' y1='{y + 3}' x2='{_num(sx(lo))}' "
                    f"y2='{y + bar_height - 3}' stroke='black'/>"
                    f"<line x1='{_num(sx(hi))}' y1='{y + 3}' x2='{_num(sx(hi))}' "
                    f"y2='{y + bar_height - 3}' stroke='black'/>"
                )
    parts.append("</svg>")
    return "".join(parts)


def scatter(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    title: str = "",
    x_label: str = "",
    y_label: str = "",
    width: int = 420,
    height: int = 320,
    max_points: int = 2000,
    seed: int = 0,
) -> str:
    """Points (a random subset beyond `max_points`) and the least-squares line."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[keep], ya[keep]
    left, right, top, bottom = 64, 12, 28 if title else 10, 44
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' {FONT}>"
    ]
    if title:
        parts.append(f"<text x='{left}' y='18' font-weight='bold'>{escape(title)}</text>")
    if xa.size == 0:
        parts.append("</svg>")
        return "".join(parts)
    x0, x1 = float(xa.min()), float(xa.max())
    y0, y1 = float(ya.min()), float(ya.max())
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    pw, ph = width - left - right, height - top - bottom

    def sx(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return top + ph - (v - y0) / (y1 - y0) * ph

    parts.append(
        f"<rect x='{left}' y='{top}' width='{pw}' height='{ph}' fill='none' stroke='{GRID}'/>"
    )
    for v in np.linspace(x0, x1, 5):
        parts.append(
            f"<text x='{_num(sx(v))}' y='{top + ph + 16}' text-anchor='middle'>{v:.3g}</text>"
        )
    for v in np.linspace(y0, y1, 5):
        parts.append(f"<text x='{left - 6}' y='{_num(sy(v) + 4)}' text-anchor='end'>{v:.3g}</text>")
    parts.append(
        f"<text x='{left + pw / 2}' y='{height - 6}' text-anchor='middle'>{escape(x_label)}</text>"
        f"<text transform='translate(14 {top + ph / 2}) rotate(-90)' text-anchor='middle'>"
        f"{escape(y_label)}</text>"
    )
    idx = np.arange(xa.size)
    if xa.size > max_points:
        idx = np.sort(np.random.default_rng(seed).choice(xa.size, max_points, replace=False))
    for i in idx:
        parts.append(
            f"<circle cx='{_num(sx(xa[i]))}' cy='{_num(sy(ya[i]))}' r='2' fill='{BAR}' "
            "fill-opacity='0.5'/>"
        )
    if xa.size >= 2 and np.ptp(xa) > 0:
        slope, intercept = np.polyfit(xa, ya, 1)
        ya0, ya1 = slope * x0 + intercept, slope * x1 + intercept
        parts.append(
            f"<line x1='{_num(sx(x0))}' y1='{_num(sy(ya0))}' x2='{_num(sx(x1))}' "
            f"y2='{_num(sy(ya1))}' stroke='{NEG}' stroke-width='2'/>"
        )
    parts.append("</svg>")
    return "".join(parts)


# Colour-blind-safe (Paul Tol's bright scheme), one per line of a line chart.
LINE_COLOURS = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")


def line_chart(
    x: Sequence[float],
    series: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[float]]],
    *,
    title: str = "",
    x_label: str = "",
    y_label: str = "",
    y_domain: tuple[float, float] = (-1.0, 1.0),
    guide: float | None = None,
    markers: Sequence[float | None] = (),
    dashed: Sequence[bool] = (),
    width: int = 640,
    height: int = 340,
    colours: Sequence[int] = (),
    dotted: Sequence[bool] = (),
) -> str:
    """Lines (name, mean, low, high) over `x` with shaded low–high bands, an optional
    dashed horizontal `guide`, and per series an optional vertical tick at `markers[i]`.
    `colours[i]`: the series' place in the palette (default i), so that related series
    share a colour; `dotted[i]`: drawn dotted (`dashed` wins)."""
    longest = max((len(name) for name, *_ in series), default=0)
    # The legend's column fits the longest name (about 7 px a character).
    right = max(150, 46 + 7 * longest)
    left, top, bottom = 64, 30 if title else 10, 44
    width += right - 150
    pw, ph = width - left - right, height - top - bottom
    x0, x1 = (float(min(x)), float(max(x))) if len(x) else (0.0, 1.0)
    x0 = min(x0, 0.0)
    x1 = x1 if x1 > x0 else x0 + 1
    y0, y1 = y_domain

    def sx(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return top + ph - (min(max(v, y0), y1) - y0) / (y1 - y0) * ph

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' {FONT}>",
        f"<rect width='{width}' height='{height}' fill='white'/>",
    ]
    if title:
        parts.append(f"<text x='{left}' y='18' font-weight='bold'>{escape(title)}</text>")
    parts.append(
        f"<rect x='{left}' y='{top}' width='{pw}' height='{ph}' fill='none' stroke='{GRID}'/>"
    )
    for v in np.linspace(x0, x1, 6):
        parts.append(
            f"<text x='{_num(sx(v))}' y='{top + ph + 16}' text-anchor='middle'>{v:.3g}</text>"
        )
    y_step = 0.5 if y1 - y0 > 1 else 0.25
    for v in np.arange(np.ceil(y0 / y_step) * y_step, y1 + 1e-9, y_step):
        parts.append(
            f"<line x1='{left}' y1='{_num(sy(v))}' x2='{left + pw}' y2='{_num(sy(v))}' "
            f"stroke='{GRID}'/><text x='{left - 6}' y='{_num(sy(v) + 4)}' "
            f"text-anchor='end'>{v:.3g}</text>"
        )
    if guide is not None:
        parts.append(
            f"<line x1='{left}' y1='{_num(sy(guide))}' x2='{left + pw}' y2='{_num(sy(guide))}' "
            "stroke='#555555' stroke-dasharray='5 4'/>"
        )
    parts.append(
        f"<text x='{left + pw / 2}' y='{height - 6}' text-anchor='middle'>{escape(x_label)}</text>"
        f"<text transform='translate(14 {top + ph / 2}) rotate(-90)' text-anchor='middle'>"
        f"{escape(y_label)}</text>"
    )
    plot = _Plot(sx, sy, left, top, pw, ph)
    for i, (name, mean, low, high) in enumerate(series):
        mark = markers[i] if i < len(markers) else None
        dash = " stroke-dasharray='6 3'" if i < len(dashed) and dashed[i] else ""
        if not dash and i < len(dotted) and dotted[i]:
            dash = " stroke-dasharray='2 3'"
        colour = LINE_COLOURS[(colours[i] if i < len(colours) else i) % len(LINE_COLOURS)]
        parts += _series(plot, i, name, x, (mean, low, high), mark, (colour, dash))
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class _Plot:
    """A line chart's plotting area: data to pixels, and its box."""

    sx: Callable[[float], float]
    sy: Callable[[float], float]
    left: float
    top: float
    width: float
    height: float


def _series(
    plot: _Plot,
    i: int,
    name: str,
    x: Sequence[float],
    lines: tuple[Sequence[float], Sequence[float], Sequence[float]],
    mark: float | None,
    style: tuple[str, str],
) -> list[str]:
    """One series of a line chart: its low–high band, its mean, its tick and legend row,
    in `style` (its colour, and its dash pattern in its line and legend: a baseline from
    elsewhere is dashed)."""
    sx, sy = plot.sx, plot.sy
    mean, low, high = lines
    colour, dash = style
    band = [f"{_num(sx(a))},{_num(sy(b))}" for a, b in zip(x, high, strict=True)]
    band += [f"{_num(sx(a))},{_num(sy(b))}" for a, b in reversed(list(zip(x, low, strict=True)))]
    line = " ".join(f"{_num(sx(a))},{_num(sy(b))}" for a, b in zip(x, mean, strict=True))
    out = [
        f"<polygon points='{' '.join(band)}' fill='{colour}' fill-opacity='0.12'/>",
        f"<polyline points='{line}' fill='none' stroke='{colour}' stroke-width='2'{dash}/>",
    ]
    bottom = plot.top + plot.height
    if mark is not None and math.isfinite(mark):
        out.append(
            f"<line x1='{_num(sx(mark))}' y1='{bottom - 10}' x2='{_num(sx(mark))}' "
            f"y2='{bottom}' stroke='{colour}' stroke-width='3'/>"
        )
    ly, lx = plot.top + 14 + i * 18, plot.left + plot.width
    out.append(
        f"<line x1='{lx + 12}' y1='{ly - 4}' x2='{lx + 30}' y2='{ly - 4}' "
        f"stroke='{colour}' stroke-width='3'{dash}/><text x='{lx + 36}' y='{ly}'>"
        f"{escape(name)}</text>"
    )
    return out
