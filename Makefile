# Bonesmith — set-up and the two commands. Every target creates .venv if missing.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: venv demo test extension bench bench-skeleton clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# The repo root is the `bonesmith` package: expose it to the venv.
	ln -sfn $(CURDIR) "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/bonesmith"
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(PY) -m bonesmith demo --out out

test: venv
	$(PY) -m pytest

extension: venv
	$(PY) scripts/build_extension.py --out dist

$(VENV)/.bench-installed: $(VENV)/.installed requirements-bench.txt
	$(PY) -m pip install --quiet -r requirements-bench.txt
	touch $@

bench-skeleton: $(VENV)/.bench-installed
	$(PY) bench/skeleton.py

bench: bench-skeleton

clean:
	rm -rf $(VENV) out build dist wheels
