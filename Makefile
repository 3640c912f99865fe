# kgateway — see README.md.
GO      ?= go
BIN     := bin/kgateway
PKGS    := ./...
# cmd/kgbench is a module of its own (its plotting and kfake dependencies
# stay out of the server's go.mod); its targets run inside it.
BENCH_MOD := cmd/kgbench
# test/librdkafka is a module of its own too: its librdkafka tests need cgo
# (confluent-kafka-go), which the server's module must not depend on.
RDK_MOD := test/librdkafka
# Packages with concurrency of their own run under the race detector.
RACE_PKGS := ./auth/... ./bufpool/... ./cluster/... ./storage/... ./tier/... ./ledger/... ./resolver/... ./cleaner/... ./retention/... ./recordbatch/... ./offsets/... ./kafka/... ./metrics/... ./server/... ./cmd/kgateway/...

.PHONY: build run test test-jvm test-jvm-all test-jvm-slow bench lint deps soak

build:
	$(GO) build -o $(BIN) ./cmd/kgateway

run: build
	./$(BIN) --listen 127.0.0.1:9092 --data-dir ./data

# versitygw is the S3-compatible server the object-store tests start
# (test/s3server, which pins the same version and builds it itself when it
# is missing). It is built from the Go module proxy into the first GOPATH's
# bin/, under a versioned name.
VERSITYGW_VERSION := v1.8.0
VERSITYGW := $(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin/versitygw-$(VERSITYGW_VERSION)
# etcd is the real etcd server the cluster tests run as a three-member
# cluster (test/etcdserver, which pins the same version, the one go.mod
# requires, and builds it itself when it is missing). Its module has
# replace directives, so it is built inside a throwaway module.
ETCD_VERSION := v3.7.3
ETCD := $(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin/etcd-$(ETCD_VERSION)

# deps installs what the tests need on a fresh machine: kcat from Debian,
# versitygw and etcd from source, and Apache Kafka's jars (test/jvm, from Maven
# Central) with the classpath the Go side starts the broker and tools with.
# Installing kcat needs root (the norm on the test machines); it never
# calls sudo: as another user it stops and says what to install.
JVM_MOD := test/jvm
deps: $(VERSITYGW) $(ETCD) $(JVM_MOD)/target/classpath.txt
	@command -v kcat >/dev/null 2>&1 || { \
		if [ "$$(id -u)" != 0 ]; then \
			echo "kcat is missing and installing it needs root: run 'apt-get install kcat' as root, then make test again" >&2; exit 1; \
		fi; \
		echo "installing kcat"; \
		apt-get update -qq && apt-get install -y -qq kcat; }

$(JVM_MOD)/target/classpath.txt: $(JVM_MOD)/pom.xml
	mvn -q -B -f $(JVM_MOD)/pom.xml dependency:go-offline
	@# go-offline leaves out what surefire resolves only when it starts a
	@# test run (its JUnit Platform provider and that provider's launcher,
	@# plexus-utils 1.1). A run whose tag filter selects no test starts one
	@# and runs nothing, so that test-jvm works offline; a run naming no
	@# test class (-Dtest=NoSuchTest) stops before it resolves them.
	mvn -q -B -f $(JVM_MOD)/pom.xml test -Dgroups=resolve-only -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false
	mvn -q -B -f $(JVM_MOD)/pom.xml dependency:build-classpath -Dmdep.outputFile=target/classpath.txt

$(ETCD):
	@echo "building etcd $(ETCD_VERSION) into $@"
	@mkdir -p $(dir $@) && tmp=$$(mktemp -d $(dir $@).etcd-build-XXXXXX) && \
		( cd $$tmp && GOWORK=off $(GO) mod init etcdbuild >/dev/null 2>&1 && \
		{ GOWORK=off GOFLAGS=-mod=mod $(GO) get go.etcd.io/etcd/server/v3@$(ETCD_VERSION) 2>get.log || { cat get.log; exit 1; }; } && \
		GOWORK=off GOFLAGS=-mod=mod $(GO) build -o etcd go.etcd.io/etcd/server/v3 ) && \
		mv $$tmp/etcd $@; rc=$$?; rm -rf $$tmp; exit $$rc

$(VERSITYGW):
	@echo "building versitygw $(VERSITYGW_VERSION) into $@"
	@mkdir -p $(dir $@) && tmp=$$(mktemp -d $(dir $@).versitygw-build-XXXXXX) && \
		GOBIN=$$tmp $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION) && \
		mv $$tmp/versitygw $@; rc=$$?; rm -rf $$tmp; exit $$rc

test: deps lint mutate-check
	$(GO) test -race -count=1 $(RACE_PKGS)
	$(GO) test -count=1 ./test/... ./tools/... .
	$(GO) -C $(BENCH_MOD) test -count=1 ./...
	$(GO) -C $(RDK_MOD) test -count=1 ./...
	$(MAKE) test-jvm

# test-jvm runs the JVM client tests tagged core (test/jvm: Apache Kafka's
# Java producer, consumer, share consumer, Admin, transactions and
# security against a real kgateway); test-jvm-all runs every JVM test.
# Both are offline: `make deps` resolved everything (go-offline).
# Reports: test/jvm/target/surefire-reports; kgateway logs:
# test/jvm/target/kgateway-logs.
MVN_TEST := mvn -o -B -f $(JVM_MOD)/pom.xml -Dsurefire.printSummary=true test
test-jvm: $(JVM_MOD)/target/classpath.txt
	$(MVN_TEST) -Dgroups=core

test-jvm-all: $(JVM_MOD)/target/classpath.txt
	$(MVN_TEST)

# test-kafka-tools runs Apache Kafka's command-line tools (kafka-topics,
# kafka-configs, kafka-consumer-groups, kafka-acls, kafka-transactions,
# kafka-share-groups, kafka-log-dirs, kafka-features,
# kafka-leader-election, kafka-reassign-partitions, the perf tests) against kgateway and a real Kafka
# broker and compares what they print (test/kafkatools). Minutes, so not
# part of `make test`; .ci/run calls it.
.PHONY: test-kafka-tools
test-kafka-tools: deps
	KGW_KAFKA_TOOLS=1 $(GO) test -count=1 -timeout 20m -run 'TestTools|TestNormalise|TestTriage' ./test/kafkatools/

# test-jvm-slow runs only the JVM tests tagged slow: Kafka Streams at
# exactly-once (classic and streams rebalance protocols) and Kafka Connect
# (test/jvm/.../streams, .../connect), each through kill -9 of its
# processes and of kgateway; about 4.5 minutes.
test-jvm-slow: $(JVM_MOD)/target/classpath.txt
	$(MVN_TEST) -Dgroups=slow

# bench runs the end-to-end benchmark (cmd/kgbench, BENCHMARKS.md) against
# kgateway, kfake and durable kfake; pass flags with BENCH_FLAGS, e.g.
#   make bench BENCH_FLAGS='--records 20000 --duration 3s --big-bytes 50MB --rounds 3'
# kgbench is built from its own module and run from here, so relative paths
# in BENCH_FLAGS and the kgateway build it does mean what they always did.
bench:
	$(GO) -C $(BENCH_MOD) build -o $(CURDIR)/bin/kgbench .
	./bin/kgbench $(BENCH_FLAGS)

# bench-e2e is the old name of bench, kept for scripts and notes that use it.
.PHONY: bench-e2e bench-micro
bench-e2e: bench

# bench-micro runs the go test micro-benchmarks of storage/ and ledger/.
bench-micro:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./storage/... ./ledger/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) -C $(BENCH_MOD) vet ./...
	$(GO) -C $(RDK_MOD) vet ./...

# conformance runs franz-go's pkg/kgo integration tests, at the franz-go
# version in go.mod, against a kgateway it builds and starts itself (an
# ephemeral port, a temporary data dir), and compares every test's outcome
# with test/conformance/expected.txt; pass flags with CONFORMANCE_FLAGS,
# e.g. '-records 50000 -v' or '-run TestGroupETL -keep'. Then
# conformance-kafka-go.
.PHONY: conformance conformance-kafka-go
conformance:
	GO=$(GO) $(GO) run ./test/conformance $(CONFORMANCE_FLAGS)
	$(MAKE) conformance-kafka-go

# conformance-kafka-go runs segmentio/kafka-go's own tests (every package
# of its module, from the Go module proxy) against a kgateway set up as
# kafka-go's CI sets up Kafka (localhost:9092 and a SASL listener on 9093,
# in a network namespace of its own), compared with
# test/conformance/expected-kafka-go.txt; flags in KAFKA_GO_FLAGS.
conformance-kafka-go:
	GO=$(GO) $(GO) run ./test/conformance -suite kafka-go -timeout 10m $(KAFKA_GO_FLAGS)

# conformance-kafka runs test/kafkadiff: a corpus of raw Kafka requests
# sent to a kgateway and to a real Apache Kafka 4.4.0 broker (test/jvm's
# jars, so it needs deps), answers diffed field by field; a difference not
# in test/kafkadiff/accepted.txt fails it, and so does an entry nothing
# matches. KGW_KAFKADIFF=1 turns the run on (without it `go test` runs only
# the differ's unit tests); pass KAFKADIFF_RUN=name to run matching cases.
# The authz-* cases start a second pair, each with an ACL authorizer and
# SASL PLAIN users, when the first of them runs (KAFKADIFF_RUN=authz).
.PHONY: conformance-kafka
conformance-kafka: $(JVM_MOD)/target/classpath.txt
	KGW_KAFKADIFF=1 KGW_KAFKADIFF_RUN=$(KAFKADIFF_RUN) $(GO) test -count=1 -timeout 10m -run TestKafkaDiff ./test/kafkadiff/

# fuzz runs every fuzz target for FUZZTIME each (seed corpora in each
# package's testdata/fuzz; `make test` already runs the seeds as tests).
FUZZTIME ?= 15s
FUZZ_TARGETS := kafka:FuzzFrames kafka:FuzzRequestDecode kafka:FuzzRequestHandle resolver:FuzzSplitBatches resolver:FuzzCompressedRecords storage:FuzzCorruptSegmentReopen auth:FuzzSASLExchange crc32c:FuzzUpdateAgrees
.PHONY: fuzz
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
		bash tools/fuzz.sh $(GO) $$pkg $$name $(FUZZTIME) || exit 1; \
	done

# mutate checks the tests: in a temporary copy of the tree it applies each
# deliberate break of tools/mutate/mutations.go (one per core invariant),
# runs the tests named for it, and fails if any break goes uncaught. Not
# part of `make test`; run it before closing work on storage, produce or
# fetch. MUTATE_FLAGS, e.g. -only 'crc|fsync' -count 3.
.PHONY: mutate mutate-check
mutate:
	$(GO) run ./tools/mutate $(MUTATE_FLAGS)

# mutate-check runs no test: every mutation's anchor occurs exactly once,
# the mutated package compiles and vets (a go build overlay, no copy), and
# every test it names exists. Part of `make test`, so that a refactor that
# moves the code a mutation breaks fails CI instead of leaving the break
# unexercised. Under a minute on a loaded 2-core machine.
mutate-check:
	$(GO) run ./tools/mutate -check

# soak scales the crash tests up: thousands of injected-fault crashes and
# 50 SIGKILL rounds of the real binary, then ten minutes of the cluster
# nemesis (kill -9, pause past the session, etcd restarts) (KGW_SOAK=1).
soak:
	KGW_SOAK=1 $(GO) test -count=1 -timeout 60m -run 'Crash|Kill' ./test/... ./resolver/...
	KGW_SOAK=1 $(GO) test -count=1 -run Cluster -timeout 60m ./test/cluster/
