"""The environment variables of the test metrics `tests.jobs.gated_metric` and
`tests.jobs.phase_metric`: the gate file, the phase to wait in, and whether to ignore Ctrl+C.

Kept apart from the metrics so a test can name them without importing a metric, whose
import registers it in the metric registry of the importing process.
"""

GATE_ENV = "MEANINGBENCH_TEST_GATE"
PHASE_ENV = "MEANINGBENCH_TEST_PHASE"
DEAF_ENV = "MEANINGBENCH_TEST_DEAF"
