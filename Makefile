# toolgym: `make demo` and `make test` set everything up on a fresh machine, then run.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.toolgym-installed
# The tests run on every core (pytest-xdist): each is independent (its own temporary folder,
# ports and sandboxes), and CI's two cores halve the wall time. PYTEST_ARGS= runs them in one.
PYTEST_ARGS ?= -n auto --dist worksteal

# System libraries the tools load (soname:Debian package). bpy's Workbench needs EGL and Mesa.
# Chromium (a program, checked apart) opens replay pages in the headless-browser test.
SYSTEM_LIBS := libEGL.so.1:libegl1 libGL.so.1:libgl1 libOpenGL.so.0:libopengl0 \
	libEGL_mesa.so.0:libegl-mesa0 libX11.so.6:libx11-6 libXext.so.6:libxext6 \
	libXfixes.so.3:libxfixes3 libXi.so.6:libxi6 libXrender.so.1:libxrender1 libXt.so.6:libxt6 \
	libSM.so.6:libsm6 libICE.so.6:libice6 libxkbcommon.so.0:libxkbcommon0

.PHONY: setup demo test test-slow lint layout bench bench-learn doctor system-libs clean

setup: system-libs $(STAMP)

demo: setup
	$(VENV)/bin/toolgym doctor
	$(VENV)/bin/toolgym run --agent oracle --suite curated --episodes 4 --out demo-out/oracle
	$(VENV)/bin/toolgym run --agent random --suite primitives --episodes 4 --out demo-out/random
	@echo
	@echo "Look at the renders in demo-out/oracle/ and demo-out/random/: each PNG shows the agent's"
	@echo "part (left) beside the target (right), in four views: iso, front, right, top."
	@echo "Next:"
	@echo "  source .venv/bin/activate                   # puts toolgym on your PATH"
	@echo "  toolgym tasks curated                       # the tasks"
	@echo "  toolgym show curated/plate-four-holes --image target.png --export target.step"
	@echo "  toolgym run --agent random --task curated/plate-four-holes --out renders/"
	@echo "  README.md, section toolgym/CadQuery-v0      # the environment's Python API"
	@echo
	@echo "Last, the bundled PPO trainer learns to pick the right tool for three parts (a minute or"
	@echo "two on two cores); watch the score rise, iteration by iteration:"
	$(VENV)/bin/toolgym train --suite assets/cadquery/demo/first-tools.toml --steps 320 \
		--num-steps 16 --max-steps 1 --learning-rate 0.0005 --update-epochs 4 --no-sampler \
		--out demo-out/train --no-resume
	@echo
	@echo "Its logs: demo-out/train/progress.csv, and TensorBoard: .venv/bin/tensorboard --logdir demo-out/train"
	@echo "  toolgym plot demo-out/train                 # the run's progress as demo-out/train/progress.png"
	@echo "  toolgym eval --checkpoint demo-out/train --split train   # score the trained policy"

# Everything but the tests marked slow (sweeps over every task, training and cluster runs): under
# fifteen minutes on two quiet cores. CI runs both targets.
test: setup
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -m "not slow" $(PYTEST_ARGS)

test-slow: setup
	$(PY) -m pytest -m slow $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The README's drawing of the layers, from the imports (tests/test_layers.py checks it is current).
layout: setup
	$(PY) tests/test_layers.py

bench: setup
	$(PY) bench/sandbox.py
	$(PY) bench/geometry_metrics.py
	$(PY) bench/cadquery_env.py
	$(PY) bench/grammar_ceiling.py

# The trainer's learning benchmark at its full budget: random, PPO, BC + PPO, SB3 and the fixed
# rules on the same inputs side by side, each learned row's margin over the best rule (a learned
# figure counts at +0.2); hours on two idle cores (all-families about 47 minutes, image-holes
# 35); figures into bench/RESULTS.md by hand.
bench-learn: setup
	$(PY) bench/learn_cadquery.py

doctor: setup
	$(VENV)/bin/toolgym doctor

system-libs:
	@missing=""; \
	for entry in $(SYSTEM_LIBS); do \
		ldconfig -p | grep -q "$${entry%%:*}" || missing="$$missing $${entry##*:}"; \
	done; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	dri=""; for f in /usr/lib/*/dri/swrast_dri.so /usr/lib/*/dri/libdril_dri.so /usr/lib64/dri/swrast_dri.so; do \
		[ -e "$$f" ] && dri=1; \
	done; [ -n "$$dri" ] || missing="$$missing libgl1-mesa-dri"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "Installing system libraries:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
		else \
			echo "Missing system libraries. Run:  sudo apt-get install -y$$missing"; exit 1; \
		fi; \
	fi

# Finds Python 3.13 (bpy 5.3 needs exactly 3.13): $PYTHON, python3.13 on PATH, pyenv, or uv.
$(VENV)/bin/python:
	@py="$${PYTHON:-}"; \
	if [ -z "$$py" ]; then \
		for cand in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do \
			if command -v $$cand >/dev/null 2>&1 && $$cand -c 'import sys, venv; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then py=$$cand; break; fi; \
		done; \
	fi; \
	if [ -z "$$py" ] && command -v uv >/dev/null; then py=$$(uv python find 3.13 2>/dev/null); fi; \
	if [ -z "$$py" ]; then \
		echo "Python 3.13 not found. Install it, e.g.:  uv python install 3.13   or   sudo apt-get install python3.13 python3.13-venv"; \
		echo "then rerun, or point to it:  make PYTHON=/path/to/python3.13 $(MAKECMDGOALS)"; exit 1; \
	fi; \
	echo "Creating $(VENV) with $$py"; \
	$$py -m venv $(VENV) && $(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
