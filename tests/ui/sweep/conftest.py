"""The sweep page's tests run a sweep of the tiny encoder."""

from tests.metrics.neural.conftest import minilm_path, tiny_encoder  # noqa: F401 - fixtures
