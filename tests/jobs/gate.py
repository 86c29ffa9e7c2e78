"""The environment variable naming the gate file of `tests.jobs.gated_metric`.

Kept apart from the metric so a test can name the gate without importing the metric, whose
import registers it in the metric registry of the importing process.
"""

GATE_ENV = "MEANINGBENCH_TEST_GATE"
