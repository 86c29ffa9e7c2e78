"""The synthetic study the Which-metric benchmarks rank, as source lines for the child
process each benchmark times: S systems × J sources, a human score, and M metrics that
follow the same latent quality with growing noise (every third one rounded, for ties)."""

from __future__ import annotations


def array_lines(systems: int, sources: int, metrics: int) -> str:
    """Lines that leave the arrays: `sys_`, `src` (indices), `human` and the metrics `x`
    (outputs × M), with `S`, `J`, `M`; they need `np` imported."""
    return f"""
rng = np.random.default_rng(0)
S, J, M = {systems}, {sources}, {metrics}
sys_ = np.repeat(np.arange(S), J)
src = np.tile(np.arange(J), S)
quality = rng.normal(size=S)[sys_] * 0.5 + rng.normal(size=S * J)
human = np.round(np.clip(50 + 15 * (quality + rng.normal(0, 0.5, S * J)), 0, 100))
x = np.column_stack([quality + rng.normal(0, s, S * J) for s in np.linspace(0.3, 2.0, M)])
x[:, ::3] = np.round(x[:, ::3], 1)  # some metrics with ties
"""


def data_lines(systems: int, sources: int, metrics: int) -> str:
    """Lines that leave `data` (a MetaEvalData) and `M`; they need `np` imported."""
    return (
        array_lines(systems, sources, metrics)
        + """
from meaningbench.analysis.metaeval import MetaEvalData
data = MetaEvalData(human, x, [f"metric{k}" for k in range(M)],
                    np.array([f"sys{k:02d}" for k in sys_], object),
                    np.array([f"src{k:03d}" for k in src], object))
"""
    )
