"""BLAS is held to one thread inside `single_threaded_blas`, nested or not, and gets its
threads back after; the controller behind it is made once per process."""

from __future__ import annotations

import numpy as np  # loads BLAS
import pytest

from meaningbench.analysis import parallel

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


def test_single_threaded_blas_limits_nests_and_restores() -> None:
    assert np.ones(2) @ np.ones(2) == 2.0
    before = _blas_threads()
    with parallel.single_threaded_blas():
        assert set(_blas_threads()) == {1}
        controller = parallel._controller
        with parallel.single_threaded_blas():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
    with parallel.single_threaded_blas():
        assert parallel._controller is controller  # not scanned for again
