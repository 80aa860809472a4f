# Bonesmith — set-up and the two commands. Every target creates the venvs it needs.
# .venv: Python 3.11 + bpy 5.0.1 (Blender 4.2-5.0); .venv-py313: Python 3.13 + bpy 5.2.3
# (Blender 5.1-5.2 LTS). scripts/find_python.sh finds the interpreters (PYTHON311=...,
# PYTHON313=... override it).
VENV    := .venv
VENV313 := .venv-py313
PY      := $(VENV)/bin/python
PY313   := $(VENV313)/bin/python

.PHONY: venv venv313 demo test test-py311 test-py313 test-gui extension bench bench-skeleton clean

$(VENV)/.installed: requirements.txt scripts/make_venv.sh
	scripts/make_venv.sh 3.11 $(VENV)

$(VENV313)/.installed: requirements.txt scripts/make_venv.sh
	scripts/make_venv.sh 3.13 $(VENV313)

venv: $(VENV)/.installed
venv313: $(VENV313)/.installed

demo: venv
	$(PY) -m bonesmith demo --out out

# The whole suite on both stacks (both run even if the first fails). Each run also checks
# that the other stack computes the same rig for the sample (tests/test_cross_stack.py).
test: venv venv313
	@status=0; \
	for py in $(PY) $(PY313); do \
		echo "=== pytest on $$($$py -c 'import sys, bpy; print("Python", sys.version.split()[0], "bpy", bpy.app.version_string)') ==="; \
		other=$$(test $$py = $(PY) && echo $(PY313) || echo $(PY)); \
		BONESMITH_CROSS_PYTHON=$$other $$py -m pytest $(PYTEST_ARGS) || status=1; \
	done; \
	exit $$status

test-py311: venv
	$(PY) -m pytest $(PYTEST_ARGS)

test-py313: venv313
	$(PY313) -m pytest $(PYTEST_ARGS)

# The GUI scenarios in a real Blender 4.3 with a window (Debian 13 chroot, Xvfb; root and a
# Debian package registry needed): docs/gui_tests.md. GUI_ARGS="--only NAME,..." picks some.
test-gui: venv
	scripts/test_gui.sh $(GUI_ARGS)

extension: venv
	$(PY) scripts/build_extension.py --out dist

$(VENV)/.bench-installed: $(VENV)/.installed requirements-bench.txt
	$(PY) -m pip install --quiet -r requirements-bench.txt
	touch $@

bench-skeleton: $(VENV)/.bench-installed
	$(PY) bench/skeleton.py

bench: bench-skeleton

clean:
	rm -rf $(VENV) $(VENV313) out build dist wheels
