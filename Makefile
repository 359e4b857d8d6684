# MockChat: `make run` starts the server, `make test` runs every test.
# The targets run the tools in scripts/; scripts/probes/ holds one-off measurements and
# comparisons that no target of `make test` runs (README.md, "Layout"); `make robustness-probe` runs one.
SWIFT ?= swift
MOCKCHAT = .build/debug/mockchat
# The commit `mockchat --version` and the reports name (Package.swift reads it); empty
# outside a git checkout, which builds as "unknown".
export MOCKCHAT_COMMIT ?= $(shell scripts/build-commit)

.PHONY: bootstrap build run test unit-tests protocol-smoke scenarios driver-scenarios python-sdk-tests python-package-tests python-sdk-scenarios \
	python-sdk-mutations python-sdk-mutation-smoke js-sdk-tests js-sdk-scenarios js-sdk-browser js-sdk-mutations matrix matrix-browser fuzz-targets fuzz-run fuzz-smoke sdk-fuzz-smoke test-asan test-tsan bench-smoke \
	bench-compare bench-cluster cli-smoke html-report-check cluster-test cluster-outage-30 replay-smoke
.PHONY: dist deb dist-check container-check action-check

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

## Start the server on 127.0.0.1:8080 with the built-in fixture users.
run: build
	$(MOCKCHAT) serve

## Unit and loopback tests.
unit-tests: build
	$(SWIFT) test

## A client written from docs/PROTOCOL.md alone (Python websockets) against `mockchat serve`.
protocol-smoke: build
	scripts/protocol-smoke

## Three `serve --cluster` nodes over a real redis-server: presence, kicks, mobile races, reset, two mobiles
## allowed over three nodes, churn,
## kill -9, a stalled node, Redis restart.
cluster-test: build
	MOCKCHAT=$(MOCKCHAT) scripts/cluster-test

## The cluster test with one Redis outage of 30 s under churn instead of the short ones
## (not in `make test`: it takes 30 s more). Its figure is in docs/CLUSTER.md.
cluster-outage-30: build
	MOCKCHAT=$(MOCKCHAT) scripts/cluster-test --outages 30

## The scenario catalogue against fresh in-process servers.
scenarios: build
	$(MOCKCHAT) test Fixtures/scenarios --junit .build/conformance-junit.xml

## Recordings become scenarios: the protocol smoke session replayed (and failing on a changed
## app setting), a 200-action seeded session replayed and shrunk, bad files refused.
replay-smoke: build
	scripts/python-sdk-env
	MOCKCHAT=$(MOCKCHAT) scripts/replay-smoke

## `mockchat test` as a user meets it: broken files, typos, filters, --json -, --check, export.
cli-smoke: build
	MOCKCHAT=$(MOCKCHAT) scripts/cli-smoke

## Render an HTML report in headless Chromium and check the screenshot (not in `make test`:
## installs Debian's chromium when missing). Writes .build/html-report/report.png.
html-report-check: build
	MOCKCHAT=$(MOCKCHAT) scripts/html-report-check

## The web console in headless Chromium (Debian's package, installed when missing): a
## session driven from the page, "save as scenario" replayed, the screenshot checked, and
## another origin and a foreign Host refused (docs/CONSOLE.md). About 20 seconds on a quiet machine.
.PHONY: console-browser-test
console-browser-test: build
	MOCKCHAT=$(MOCKCHAT) scripts/console-browser-test

## Unit tests of the Python SDK's logic (Drivers/python; installs websockets/pytest if missing).
python-sdk-tests:
	scripts/python-sdk-env
	python3 -m pytest -q Drivers/python/tests

## The `mockchat` Python package (python/): installed into a virtual environment, its tests and
## the app-level example through its pytest plugin against the debug build.
python-package-tests: build
	MOCKCHAT=$(MOCKCHAT) scripts/python-package-tests

## The catalogue through the Python SDK's driver, in virtual time (docs/TESTING-YOUR-SDK.md).
python-sdk-scenarios: build
	MOCKCHAT=$(MOCKCHAT) scripts/python-sdk-catalogue --json .build/python-sdk-catalogue.json

## Each seeded bug of the Python SDK against the catalogue: the table of docs/DRIVER.md.
python-sdk-mutations: build
	MOCKCHAT=$(MOCKCHAT) scripts/python-sdk-mutations

## Unit tests of the JavaScript SDK (Drivers/js, node --test; installs Debian's nodejs and node-ws if missing).
js-sdk-tests:
	scripts/js-sdk-env
	node --test Drivers/js/test/

## The catalogue through the JavaScript SDK's Node driver, in virtual time (Drivers/js/README.md).
js-sdk-scenarios: build
	MOCKCHAT=$(MOCKCHAT) scripts/js-sdk-catalogue --json .build/js-sdk-catalogue.json

## The catalogue through the JavaScript SDK in headless Chromium (installs Debian's chromium if
## missing). Not in `make test` (minutes); `matrix-browser` runs it as a fourth column, in CI.
js-sdk-browser: build
	MOCKCHAT=$(MOCKCHAT) scripts/js-sdk-browser --json .build/js-sdk-browser.json

## Each seeded bug of the JavaScript SDK against the catalogue: the table of docs/DRIVER.md.
js-sdk-mutations: build
	MOCKCHAT=$(MOCKCHAT) scripts/js-sdk-mutations

## `mockchat matrix` over the reference model, the Python SDK and the JavaScript SDK in Node, and its
## HTML checked in headless Chromium (installs Debian's chromium if missing). Writes .build/matrix/.
matrix: build
	MOCKCHAT=$(MOCKCHAT) scripts/matrix-check

## The same with the JavaScript SDK in headless Chromium as a fourth column (`make test` runs this
## one; the page's column takes about as long as the Node one).
matrix-browser: build
	MOCKCHAT=$(MOCKCHAT) scripts/matrix-check --browser

## The catalogue through the reference model served over driver protocol v1 (docs/DRIVER.md).
driver-scenarios: build
	$(MOCKCHAT) test Fixtures/scenarios --sdk '$(MOCKCHAT) driver' --json .build/driver-catalogue.json

## Everything; the last line is the catalogue's summary. MATRIX=matrix leaves out the Chromium column.
MATRIX ?= matrix-browser
test: unit-tests protocol-smoke replay-smoke cluster-test fuzz-smoke sdk-fuzz-smoke bench-smoke cli-smoke console-browser-test python-sdk-tests python-sdk-mutation-smoke python-package-tests js-sdk-tests $(MATRIX) scenarios

## Release artifacts (docs/RELEASING.md; not in `make test`: a release build takes many minutes).
## dist/mockchat-VERSION-linux-ARCH.tar.gz: a release binary with the static Swift stdlib and
## Foundation, the man page, shell completions, the Python package, README, LICENSE, CHANGELOG.
dist:
	scripts/dist

## dist/deb/mockchat_VERSION_ARCH.deb from the dist tree (Depends from dpkg-shlibdeps).
deb: dist
	scripts/deb

## The tarball and the .deb in a clean Debian 12 root (debootstrap, chroot): serve, login, catalogue,
## and for the .deb install and remove. Needs root.
dist-check:
	scripts/dist-check all

## The container image (packaging/Containerfile, podman) built from the tarball, and checked.
container-check:
	scripts/container-check

## action.yml's shell steps run here against the tarball: serve, test, test --sdk.
action-check:
	python3 scripts/action-check.py $$(ls dist/mockchat-*-linux-$$(uname -m).tar.gz | sort -V | tail -1)

## libFuzzer targets (HTTP upgrade parser, message decoder) built with AddressSanitizer.
fuzz-targets: bootstrap
	scripts/fuzz-targets

## Build the libFuzzer targets and run each for FUZZ_RUNS executions (default 200000).
fuzz-run: bootstrap
	scripts/fuzz-targets run

## The unit and loopback tests under AddressSanitizer / ThreadSanitizer.
test-asan: bootstrap
	$(SWIFT) test --sanitize=address --scratch-path .build-asan

test-tsan: bootstrap
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

## Presence across three `serve --cluster` nodes vs one node, and 3 x 19,000 connections on three nodes
## (docs/BENCHMARKS.md, "Cluster"). BENCH_ARGS passes options, e.g. BENCH_ARGS="--quick --repeats 1".
bench-cluster: bootstrap
	scripts/bench-cluster $(BENCH_ARGS)

## A few seconds of every `mockchat bench` mode against a fresh server (works or not; no timing bound).
bench-smoke: build
	MOCKCHAT=$(MOCKCHAT) scripts/bench-smoke

## mockchat vs the C ceiling vs the Python mock, pinned and interleaved (docs/BENCHMARKS.md).
## BENCH_ARGS passes options, e.g. BENCH_ARGS="--quick --repeats 1".
bench-compare: bootstrap
	scripts/bench-compare $(BENCH_ARGS)

## Three seeded bugs of the Python SDK (a listener called twice after a reconnection, the
## backoff not reset after a success, blocked users' presence hidden) against the
## scenarios that check them: each must fail at least one (seconds; the whole campaign is
## `make python-sdk-mutations`).
python-sdk-mutation-smoke: build
	MOCKCHAT=$(MOCKCHAT) scripts/python-sdk-mutations --jobs 3 \
		--bugs "listener-twice-after-reconnect no-backoff-reset-on-success hide-blocked-presence" \
		--scenarios "Fixtures/scenarios/connection/listeners-each-called-once.yaml Fixtures/scenarios/reconnection/cometchat-backoff-resets-after-success.yaml Fixtures/scenarios/reconnection/nexconn-backoff-resets-after-success.yaml Fixtures/scenarios/presence/blocked-presence-delivered.yaml"

## Issue 26's eight reproductions and its smaller items against real `mockchat serve` and
## `mockchat test` processes (Redis outages of 0.3, 1, 5 and 30 s with a real redis-server):
## a pass/fail table with a figure each. Not in `make test`: it takes minutes.
.PHONY: robustness-probe
robustness-probe: build
	scripts/python-sdk-env
	python3 scripts/probes/reproductions.py $(MOCKCHAT)

## Every fault of `POST /control/faults` measured over real sockets against a real `mockchat serve
## --clock virtual` (docs/ROBUSTNESS.md, "The fault table"): a Markdown table of what the client
## observed next to what docs/PROTOCOL.md says, exit 1 on a row that differs. Not in `make test`:
## it takes a minute or more (each row its own server, and each absence a short real wait).
.PHONY: fault-table
fault-table: build
	scripts/python-sdk-env
	python3 scripts/probes/fault-table.py $(MOCKCHAT)

## A bounded run of `mockchat fuzz` with a fixed seed: model histories and wire inputs, then
## the other ways in (control API, recordings, scenario files, driver lines, flags, manifests),
## and the input regressions replayed, sized for a debug build (seconds). The only clean
## campaigns `make test` runs.
fuzz-smoke: build
	$(MOCKCHAT) fuzz --seed 20261122 --steps 6000 --inputs 30000 --out .build/fuzz-out
	$(MOCKCHAT) fuzz --mode inputs --seed 20261126 --inputs 600 --jobs 2 --out .build/fuzz-out
	$(MOCKCHAT) fuzz --mode inputs --replay Fixtures/input-regressions

## A bounded run of `mockchat fuzz --sdk` (docs/FUZZING.md): the reference model through
## `mockchat driver` and the Python SDK with no bug find no difference; the Python SDK
## with one seeded bug has the bug found, shrunk, and replayed with and without it.
SDK_DRIVER ?= $(MOCKCHAT) driver
SDK_BUGGY_DRIVER ?= MOCKCHAT_SDK_BUG=ping-in-auto python3 Drivers/python/driver/mockchat_driver.py
SDK_CLEAN_DRIVER ?= python3 Drivers/python/driver/mockchat_driver.py
sdk-fuzz-smoke: build
	MOCKCHAT=$(MOCKCHAT) SDK_DRIVER="$(SDK_DRIVER)" SDK_BUGGY_DRIVER="$(SDK_BUGGY_DRIVER)" \
		SDK_CLEAN_DRIVER="$(SDK_CLEAN_DRIVER)" scripts/sdk-fuzz-smoke
