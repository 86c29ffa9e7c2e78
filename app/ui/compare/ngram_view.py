"""Shared n-grams drawn: per order, what the output shares with its references, what only
the output has, and what the references have that the output lacks."""

from __future__ import annotations

import html
from collections.abc import Sequence

from meaningbench.queries.explanations import NgramMatches
from meaningbench.ui.compare.sari_view import (
    SUPPORTED,
    SUPPORTED_DARK,
    UNSUPPORTED,
    UNSUPPORTED_DARK,
)

LIMIT = 40  # n-grams shown per cell; a long text's tail is counted, not listed


def _chips(grams: Sequence[str], style: str) -> str:
    if not grams:
        return '<span style="color:gray">none</span>'
    shown = " ".join(
        f'<span style="{style}">&nbsp;{html.escape(g)}&nbsp;</span>' for g in grams[:LIMIT]
    )
    more = len(grams) - LIMIT
    return shown + (f' <span style="color:gray">… {more} more</span>' if more > 0 else "")


def ngram_html(matches: NgramMatches, *, note: str = "", dark: bool = False) -> str:
    shared = SUPPORTED_DARK if dark else SUPPORTED
    alone = UNSUPPORTED_DARK if dark else UNSUPPORTED
    plain = "background:transparent; color:gray; text-decoration:line-through;"
    head = ""
    if note:
        head += f'<p style="color:gray">{html.escape(note)}</p>'
    head += (
        f"<p>Tokens: {html.escape(matches.tokenization)}. Per order, the output's n-grams "
        f'<span style="{shared}">&nbsp;found in a reference&nbsp;</span>, those '
        f'<span style="{alone}">&nbsp;found in none&nbsp;</span>, and the references\' '
        f"n-grams the output lacks (struck through).</p>"
    )
    cell = 'style="padding:4px 8px; vertical-align:top"'
    rows = []
    for order in matches.orders:
        total = len(order.matched) + len(order.output_only)
        share = f"{len(order.matched)} of {total}" if total else "no n-grams"
        rows.append(
            '<tr><td rowspan="3" style="padding:4px 8px; vertical-align:top; '
            'border-top:1px solid gray">'
            f"<b>{order.n}-grams</b><br/>{share}</td>"
            f"<td {cell}>shared</td><td {cell}>{_chips(order.matched, shared)}</td></tr>"
            f"<tr><td {cell}>output only</td><td {cell}>{_chips(order.output_only, alone)}</td></tr>"
            f"<tr><td {cell}>references only</td>"
            f"<td {cell}>{_chips(order.reference_only, plain)}</td></tr>"
        )
    return head + f'<table cellspacing="0" width="100%">{"".join(rows)}</table>'
