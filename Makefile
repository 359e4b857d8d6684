# MockChat: `make run` starts the server, `make test` runs every test.
SWIFT ?= swift
MOCKCHAT = .build/debug/mockchat

.PHONY: bootstrap build run test unit-tests scenarios fixtures

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

## The scenario catalogue against fresh in-process servers.
scenarios: build
	$(MOCKCHAT) test Fixtures/scenarios --junit .build/conformance-junit.xml

## Everything; the last line is the catalogue's summary.
test: unit-tests scenarios

## Regenerate the fixtures compiled into the server after editing Fixtures/*.json.
fixtures:
	scripts/embed-fixtures
