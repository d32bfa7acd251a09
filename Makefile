# vkcl: OpenCL on Vulkan. `make demo` and `make test` set up everything they need on a
# fresh Debian 12 machine (Debian packages, a virtualenv, the ICD build), idempotently.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEB_PACKAGES := mesa-vulkan-drivers libvulkan1 ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers \
	clinfo gcc spirv-tools clang-15 llvm-spirv-15 llvm-15
LIB := build/libvkcl.so
ICD_SOURCES := icd/build.py $(wildcard icd/*.c icd/*.h) icd/_gen/glue.c icd/_gen/cdef.h
PREFIX ?= /usr/local
export OCL_ICD_VENDORS_BUILD := $(CURDIR)/build/vendors

.PHONY: all deps venv build demo test test-fast generate install uninstall bench clean

all: build

# Debian packages: installed only when one is missing.
deps: build/.deps
build/.deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages: $$missing"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi
	@if ! $(PYTHON) -c 'import venv, ensurepip' 2>/dev/null; then \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q python3-venv python3-dev; fi
	@mkdir -p build && touch $@

venv: $(VENV)/.stamp
$(VENV)/.stamp: pyproject.toml build/.deps
	[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	touch $@

build: $(LIB)
$(LIB): $(VENV)/.stamp $(ICD_SOURCES)
	$(VPY) icd/build.py
	$(VPY) -m compileall -q vkcl >/dev/null

generate: $(VENV)/.stamp
	$(VPY) codegen/gen_icd.py

demo: build
	@echo "== clinfo, through the ICD loader, on vkcl =="
	OCL_ICD_VENDORS=$(OCL_ICD_VENDORS_BUILD) clinfo -l
	@echo "== a C program linked with -lOpenCL =="
	@mkdir -p build/examples
	gcc -O2 -Wall -o build/examples/demo examples/demo.c -lOpenCL -lm
	OCL_ICD_VENDORS=$(OCL_ICD_VENDORS_BUILD) build/examples/demo

test: build
	$(VPY) -m pytest -q --durations=25 tests

# Self-contained: the package, its built-in kernels, its run-time Python packages and a library
# built for them go to $(PREFIX)/lib/vkcl, so the checkout can go. The loader's .icd goes to
# /etc/OpenCL/vendors for the system prefixes, else under the prefix (nothing outside it).
LIBDIR = $(PREFIX)/lib/vkcl
ICD_DIR = $(if $(filter /usr/local /usr,$(PREFIX)),/etc/OpenCL/vendors,$(PREFIX)/etc/OpenCL/vendors)
INSTALL_SUDO = $(if $(filter /usr/local /usr,$(PREFIX)),$(SUDO),)

install: build
	$(INSTALL_SUDO) $(VPY) icd/install.py --libdir $(LIBDIR) --destdir "$(DESTDIR)"
	$(INSTALL_SUDO) mkdir -p $(DESTDIR)$(ICD_DIR)
	echo $(LIBDIR)/libvkcl.so | $(INSTALL_SUDO) tee $(DESTDIR)$(ICD_DIR)/vkcl.icd >/dev/null

uninstall:
	$(INSTALL_SUDO) $(VPY) icd/install.py --libdir $(LIBDIR) --destdir "$(DESTDIR)" --uninstall
	$(INSTALL_SUDO) rm -f $(DESTDIR)$(ICD_DIR)/vkcl.icd

bench: build
	$(VPY) bench/run.py $(BENCH_ARGS)

clean:
	rm -rf build
