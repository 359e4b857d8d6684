# MockChat: `make run` starts the server, `make test` runs every test.
SWIFT ?= swift
MOCKCHAT = .build/debug/mockchat

.PHONY: bootstrap build run test unit-tests protocol-smoke scenarios driver-scenarios fixtures \
	fuzz-targets fuzz-run fuzz-smoke test-asan test-tsan bench-smoke bench-compare

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

## The scenario catalogue against fresh in-process servers.
scenarios: build
	$(MOCKCHAT) test Fixtures/scenarios --junit .build/conformance-junit.xml

## The catalogue through the reference model served over driver protocol v1 (docs/DRIVER.md).
driver-scenarios: build
	$(MOCKCHAT) test Fixtures/scenarios --sdk '$(MOCKCHAT) driver' --json .build/driver-catalogue.json

## Everything; the last line is the catalogue's summary.
test: unit-tests protocol-smoke fuzz-smoke bench-smoke driver-scenarios scenarios

## Regenerate the fixtures compiled into the server after editing Fixtures/*.json.
fixtures:
	scripts/embed-fixtures

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

## A few seconds of every `mockchat bench` mode against a fresh server (works or not; no timing bound).
bench-smoke: build
	MOCKCHAT=$(MOCKCHAT) scripts/bench-smoke

## mockchat vs the C ceiling vs the Python mock, pinned and interleaved (docs/BENCHMARKS.md).
## BENCH_ARGS passes options, e.g. BENCH_ARGS="--quick --repeats 1".
bench-compare: bootstrap
	scripts/bench-compare $(BENCH_ARGS)

## A bounded run of `mockchat fuzz` with a fixed seed: model histories and wire inputs.
fuzz-smoke: build
	$(MOCKCHAT) fuzz --seed 20261122 --steps 20000 --inputs 100000 --out .build/fuzz-out
