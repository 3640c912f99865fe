package main

// The checked-in list of deliberate breaks. Each one breaks one rule that
// some test claims to check; `make mutate` applies them one at a time to a
// copy of the tree and reports every break no test caught. A new invariant
// adds its entry here: a name, the rule, the exact text to replace (which
// must occur exactly once in its file, so a refactor that moves the code
// shows up as "anchor missing" rather than as a silent pass), and the
// tests that must catch it.

var mutations = []mutation{
	{
		Name:  "no-fdatasync-before-ack",
		Rule:  "storage D1/I2: an acknowledged entry is on disk (fdatasync) before the ack",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tif err := f.Sync(); err != nil {", New: "\t\t_ = f\n\t\tif err := error(nil); err != nil {"}},
		Tests: []testRun{
			{Pkg: "./storage/", Run: "TestCrashPoints"},
			{Pkg: "./resolver/", Run: "TestCrashProducerState"},
		},
	},
	{
		Name: "index-before-fdatasync",
		Rule: "storage I2: the index never names bytes that are not durable (index committed only after the segment fdatasync)",
		Edits: []edit{
			{File: "storage/commit.go", Old: "\t\tstart := time.Now()\n\t\tc.syncFiles(files, failed)\n", New: "\t\tc.index(group, failed)\n\t\tstart := time.Now()\n\t\tc.syncFiles(files, failed)\n"},
			{File: "storage/commit.go", Old: "\tc.index(group, failed)\n\tc.step(fsys.StepIndexed)", New: "\tc.step(fsys.StepIndexed)"},
		},
		Tests: []testRun{
			{Pkg: "./storage/", Run: "TestCrashAtCommitSteps|TestCrashPoints"},
			{Pkg: "./resolver/", Run: "TestCrashProducerState"},
		},
	},
	{
		Name:  "idempotence-window-2",
		Rule:  "resolver D4: retries of each of a producer's last 5 batches (Kafka's window) are recognized",
		Edits: []edit{{File: "resolver/producers.go", Old: "const maxTrackedBatches = 5\n", New: "const maxTrackedBatches = 2\n"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "Idempot"}},
	},
	{
		Name:  "read-does-nosync-set",
		Rule:  "ledger R1: a read writes nothing (here: every read does a NoSync pebble Set)",
		Edits: []edit{{File: "storage/read.go", Old: "\t\tif sn, err = l.snap(); err == nil {\n", New: "\t\tif sn, err = l.snap(); err == nil {\n\t\t\t_ = s.db.Set([]byte(\"zread\"), nil, pebble.NoSync)\n"}},
		Tests: []testRun{
			{Pkg: "./storage/", Run: "TestReadsWriteNothing"},
			{Pkg: "./ledger/", Run: "TestReadWritesNothing"},
		},
	},
	{
		Name:  "batch-crc-unchecked",
		Rule:  "resolver: a produced batch whose CRC32C does not match is refused (CORRUPT_MESSAGE)",
		Edits: []edit{{File: "recordbatch/batch.go", Old: "crc32c.Checksum(b[AttrsOff:]); want != got {", New: "crc32c.Checksum(b[AttrsOff:]); want != got && false {"}},
		Tests: []testRun{
			{Pkg: "./resolver/", Run: "FuzzSplitBatches|TestProduceRejects"},
			{Pkg: "./test/", Run: "TestBadCRCRejected|TestProduceValidatesBatches"},
		},
	},
	{
		Name:  "offset-commit-unsynced",
		Rule:  "offsets O1: an offset commit is acknowledged only once synced",
		Edits: []edit{{File: "offsets/store.go", Old: "\treturn s.apply(b)\n}\n\n// Get returns the committed offset", New: "\treturn b.Commit(pebble.NoSync)\n}\n\n// Get returns the committed offset"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestCommitDurableAcrossCrash"}},
	},
	{
		Name:  "offset-commit-dropped",
		Rule:  "offsets O1: an acknowledged offset commit is stored (here: acknowledged, never applied)",
		Edits: []edit{{File: "offsets/store.go", Old: "\treturn s.apply(b)\n}\n\n// Get returns the committed offset", New: "\treturn nil\n}\n\n// Get returns the committed offset"}},
		Tests: []testRun{
			{Pkg: "./offsets/", Run: "TestCommitRoundTrip|TestCommitDurableAcrossCrash"},
			{Pkg: "./test/", Run: "TestKillDuringProduceAndCommit"},
		},
	},
	{
		Name:  "fetch-past-durable-end",
		Rule:  "storage D5: a read (fetch) never returns entries past the durable end (high watermark)",
		Edits: []edit{{File: "storage/tailcache.go", Old: "\tfor ; i < len(live) && live[i].hdr.Offset < sn.end; i++ {", New: "\tfor ; i < len(live); i++ {"}},
		Tests: []testRun{
			{Pkg: "./storage/", Run: "TestReadsStopAtDurableEnd|Tail"},
			{Pkg: "./ledger/", Run: "TestReadSeesOnlyDurable"},
			{Pkg: "./resolver/", Run: "Fetch"},
		},
	},
	{
		Name:  "ack-after-failed-fsync",
		Rule:  "storage D2: a failed fdatasync fails the write and the log; nothing after it is acknowledged",
		Edits: []edit{{File: "storage/commit.go", Old: "\t\tif err := f.Sync(); err != nil {", New: "\t\tif err := f.Sync(); err != nil && false {"}},
		Tests: []testRun{
			{Pkg: "./storage/", Run: "TestSyncFailureFailsLog"},
			{Pkg: "./test/", Run: "TestFsyncFailureUntilReopen"},
		},
	},
	{
		Name:  "records-unchecked",
		Rule:  "the codec check and the record count check: a produced batch's records are decompressed and checked against its header before anything is appended",
		Edits: []edit{{File: "resolver/produce.go", Old: "\t\tif err := p.checkRecords(b, limit, s.Records.Check(hdrs[i].BaseTimestamp, hdrs[i].MaxTimestamp, now, hdrs[i].Attributes)); err != nil {", New: "\t\tif err := error(nil); err != nil && limit > int64(len(b)) && now > int64(i) {"}},
		Tests: []testRun{
			{Pkg: "./resolver/", Run: "TestProduceCompressedRejects|TestProduceRejects"},
			{Pkg: "./test/", Run: "TestProduceValidatesBatches"},
		},
	},
	{
		Name:  "lso-released-before-marker-durable",
		Rule:  "the LSO: the LSO passes a transaction only once its marker is durable",
		Edits: []edit{{File: "resolver/txn.go", Old: "\tp.app.Unlock()\n\n\tif err := pd.Wait(); err != nil {", New: "\tp.app.Unlock()\n\tp.markerDurable(ended, aborted, now, off)\n\n\tif err := pd.Wait(); err != nil {"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestTxnLSOHeldUntilMarkerDurable"}},
	},
	{
		Name:  "read-committed-past-lso",
		Rule:  "the read_committed bound: read_committed returns no batch at or past the LSO",
		Edits: []edit{{File: "resolver/handle.go", Old: "\t\tentries = belowOffset(entries, res.LastStable) // The read_committed bound\n", New: ""}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestTxnLSOHeldAndReleased|TestTxnConcurrent"}},
	},
	{
		Name:  "aborted-index-not-checkpointed",
		Rule:  "the aborted-transaction index: a checkpoint covering an ABORT marker persists its aborted-index entry",
		Edits: []edit{{File: "resolver/txnstate/checkpoint.go", Old: "\t\t\top = storage.MetaOp{Key: op.Key, Value: be.AppendUint64(be.AppendUint64(nil, uint64(a.PID)), uint64(a.First))}", New: "\t\t\tcontinue"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestTxnStateSurvivesRestart|TestTxnAbortedAcrossRollsAndRetention"}},
	},
	{
		Name:  "replay-skips-markers",
		Rule:  "transaction recovery: replay ends the transactions whose markers follow the checkpoint",
		Edits: []edit{{File: "resolver/partition.go", Old: "\t\t\tcase h.Control():\n", New: "\t\t\tcase h.Control() && false:\n"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestTxnStateSurvivesRestart"}},
	},
	{
		Name:  "no-txn-verification",
		Rule:  "KIP-890 partition verification: a transactional batch needs its producer's registration on the partition (KIP-890 part 1)",
		Edits: []edit{{File: "resolver/produce.go", Old: "\t\tif err := p.app.txn.Verify(h, p.app.prod.epochOf); err != nil { // KIP-890 partition verification, epoch fencing\n", New: "\t\tif err := error(nil); err != nil && h.Records < 0 {\n"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestTxnVerification|TestTxnZombieFenced"}},
	},
	{
		Name:  "endtxn-offsets-batch-per-group",
		Rule:  "offsets O6: a transaction's offsets move with its Complete state in one synced batch",
		Edits: []edit{{File: "offsets/txn.go", Old: "\t\tif err := s.endGroup(b, g, t.ID, commit); err != nil {\n\t\t\treturn err\n\t\t}\n", New: "\t\tif err := s.endGroup(b, g, t.ID, commit); err != nil {\n\t\t\treturn err\n\t\t}\n\t\t_ = s.db.Apply(b, pebble.Sync)\n\t\tb = s.db.NewBatch()\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestEndTxnAtomicAcrossCrash"}},
	},
	{
		Name:  "txn-offsets-committed-at-once",
		Rule:  "pending TxnOffsetCommit offsets, offsets O5: TxnOffsetCommit offsets stay pending until their transaction commits",
		Edits: []edit{{File: "kafka/txn/offsets.go", Old: "if err := c.store.PutPending(req.TransactionalID, req.Group, pending); err != nil {", New: "if err := c.store.Commit(req.Group, pending); err != nil {"}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestTxnOffsetCommitVisibility"},
			{Pkg: "./test/", Run: "TestTxnOffsetCommitVisibility|TestCrashTransactionsEndToEnd"},
		},
	},
	{
		Name:  "no-recovery-of-decided-txns",
		Rule:  "completion at open: transactions found in PrepareCommit or PrepareAbort are completed at open",
		Edits: []edit{{File: "kafka/txn/coordinator.go", Old: "\t\tif err := c.completeLocked(t); err != nil {\n\t\t\tc.log.Warn(\"txn-recovery-incomplete\"", New: "\t\tif err := error(nil); err != nil {\n\t\t\tc.log.Warn(\"txn-recovery-incomplete\""}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestRecoveryCompletesPreparedAndReregisters|TestEndWithOffsetsCompletedAtOpen"},
			{Pkg: "./test/", Run: "TestCrashTransactionsEndToEnd"},
		},
	},
	{
		Name:  "offsets-completed-before-markers",
		Rule:  "durable partition adds: markers are durable on every partition before the offsets and the Complete state",
		Edits: []edit{{File: "kafka/txn/end.go", Old: "\tif pending, err := c.writeMarkers(st, commit); err != nil {", New: "\tdefer c.writeMarkers(st, commit)\n\tif pending, err := []offsets.TopicPartition(nil), error(nil); err != nil {"}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestEndAnsweredDecisionSurvivesRestart"},
			{Pkg: "./test/", Run: "TestCrashTransactionsEndToEnd"},
		},
	},
	{
		Name:  "init-does-not-fence-ongoing",
		Rule:  "the InitProducerId bump: InitProducerId aborts an ongoing transaction with a bumped epoch first",
		Edits: []edit{{File: "kafka/txn/init.go", Old: "\t\treturn selfFence(st, c.fenceTransition(st, now), expect), errNone\n", New: "\t\treturn emptied(st, timeout, now), errNone\n"}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestInitProducerIDAbortsOngoing"},
			{Pkg: "./test/", Run: "TestTxnZombieFenced"},
		},
	},
	{
		Name:  "self-fence-fences-caller",
		Rule:  "the InitProducerId bump: the current producer's KIP-360 re-init of its Ongoing transaction continues at the abort's epoch (the coordinator moved under its request), not PRODUCER_FENCED",
		Edits: []edit{{File: "kafka/txn/init.go", Old: "\t\tnext.LastEpoch = st.Epoch\n\t}\n\treturn next\n", New: "\t}\n\treturn next\n"}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestInitProducerIDSelfFenceRetry"},
			{Pkg: "./server/", Run: "TestClusterTxnCoordinatorMovesMidAdd"},
		},
	},
	{
		Name:  "require-stable-ignored",
		Rule:  "offsets O7: OffsetFetch require_stable answers UNSTABLE_OFFSET_COMMIT for pending offsets",
		Edits: []edit{{File: "kafka/group/commit.go", Old: "\tif !requireStable {\n\t\treturn c.committedOffsets(group, topics)\n", New: "\tif requireStable || !requireStable {\n\t\treturn c.committedOffsets(group, topics)\n"}},
		Tests: []testRun{
			{Pkg: "./kafka/group/", Run: "TestOffsetFetchRequireStable"},
			{Pkg: "./test/", Run: "TestTxnOffsetCommitVisibility"},
		},
	},
	{
		Name:  "rewrite-commit-unsynced",
		Rule:  "compacted generations: a rewrite's new generation is synced before the index commit that swaps it in",
		Edits: []edit{{File: "storage/rewrite.go", Old: "\tif err := w.file.Sync(); err != nil {", New: "\tif err := error(nil); err != nil {"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestRewriteCrashAtomic"}},
	},
	{
		Name: "rewrite-file-known-after-swap",
		Rule: "the generation swap: a read that sees the swapped index can pin the new generation's file",
		Edits: []edit{
			{File: "storage/rewrite.go", Old: "\tl.mu.Lock()\n\tl.mu.files[w.led] = &ledgerFile{name: w.name, file: w.file}\n\tl.mu.Unlock()\n", New: ""},
			{File: "storage/rewrite.go", Old: "\tdoomed := l.markRemovedLocked(ids)\n", New: "\tl.mu.files[w.led] = &ledgerFile{name: w.name, file: w.file}\n\tdoomed := l.markRemovedLocked(ids)\n"},
		},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestCleanerConcurrentFetchesDuringSwaps"}},
	},
	{
		Name:  "cleaner-keeps-superseded",
		Rule:  "the latest-record rewrite: a record whose key maps to a higher offset is removed",
		Edits: []edit{{File: "cleaner/rewrite.go", Old: "ok && r.Off < latest {", New: "ok && r.Off < latest && false {"}},
		Tests: []testRun{{Pkg: "./resolver/", Run: "TestCleanerProperty|TestCleanerKeepsLatestPerKey"}},
	},
	{
		Name:  "placement-not-rendezvous",
		Rule:  "rendezvous placement: placement is rendezvous hashing, so a join or a leave moves only the partitions it must",
		Edits: []edit{{File: "cluster/node/placement.go", Old: "\t\tif s := score(pkey, id); best < 0 || s > bestScore {", New: "\t\tif s := score(pkey, 0) % uint64(len(live)); best < 0 || live[s] == id && bestScore == 0 { // modulo placement"}},
		Tests: []testRun{{Pkg: "./cluster/node/", Run: "TestPlacementSimulation"}},
	},
	{
		Name:  "failed-release-forgotten",
		Rule:  "rendezvous placement: an ownership whose release failed is released again, or no other node can ever take the partition",
		Edits: []edit{{File: "cluster/node/placement.go", Old: "\t\tif _, taken := n.mu.held[h.pkey]; !taken {", New: "\t\tif _, taken := n.mu.held[h.pkey]; !taken && h == nil {"}},
		Tests: []testRun{{Pkg: "./cluster/node/", Run: "TestFailedReleaseIsRetried"}},
	},
}
