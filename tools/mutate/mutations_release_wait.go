package main

// Deliberate breaks of the consumer group heartbeats' wait for releases
// soon to come (kafka/group consumer_await.go), in a file of their own.

func init() { mutations = append(mutations, releaseWaitMutations...) }

var releaseWaitMutations = []mutation{
	{
		Name:  "consumer-release-wait-ignores-owner-ack",
		Rule:  "releases soon to come: a heartbeat also waits while an owner just sent a changed assignment has not acknowledged it, at which it is told to revoke",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\t\tif o.ackDue && since < b.wait.bound {", New: "\t\tif false && o.ackDue && since < b.wait.bound {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatWaitsForOwnersAck"}},
	},
	{
		Name:  "consumer-release-wait-ack-unbounded",
		Rule:  "releases soon to come: an owner's acknowledgment is waited for only within the wait after its answer",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\t\tif o.ackDue && since < b.wait.bound {", New: "\t\tif o.ackDue {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatNoWaitForOverdueAck"}},
	},
	{
		Name:  "consumer-ack-due-on-every-answer",
		Rule:  "releases soon to come: only an answer that changed the member's partitions makes its acknowledgment due",
		Edits: []edit{{File: "kafka/group/consumer_heartbeat.go", Old: "\tm.ackDue = m.assigned.count() > 0 && (!snap.known || !snap.assigned.equal(m.assigned))\n", New: "\tm.ackDue = m.assigned.count() > 0\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatWaitsForDueOwner"}},
	},
	{
		Name: "consumer-no-release-wait",
		Rule: "releases soon to come: a heartbeat lacking partitions its owner was told to revoke waits for the release and gets them in the same answer",
		Edits: []edit{
			{File: "kafka/group/consumer_batch.go", Old: "\t\tif g.releasesDueLocked(b) {\n\t\t\tparked = append(parked, b)", New: "\t\tif false && g.releasesDueLocked(b) {\n\t\t\tparked = append(parked, b)"},
			{File: "kafka/group/consumer_batch.go", Old: "\t\tif b.resp.ErrorCode == errNone && g.releasesDueLocked(b) {", New: "\t\tif false && b.resp.ErrorCode == errNone && g.releasesDueLocked(b) {"},
		},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatWaitsForToldRelease"}},
	},
	{
		Name:  "consumer-release-wait-unbounded",
		Rule:  "releases soon to come, bounded: a heartbeat waits for releases at most the release wait, then is answered",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\tcase <-w.until.C:\n\t\tw.final = true\n", New: "\tcase <-w.until.C:\n\t\tw.until.Reset(w.bound)\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatWaitForReleaseBounded"}},
	},
	{
		Name:  "consumer-release-wait-not-woken",
		Rule:  "releases soon to come: a written batch of heartbeats wakes the heartbeats waiting for its releases",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\tif changed && g.mu.applied != nil {", New: "\tif false && changed && g.mu.applied != nil {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatWaitsForToldRelease"}},
	},
	{
		Name:  "consumer-release-wait-ignores-due-owner",
		Rule:  "releases soon to come: a heartbeat also waits while an owner's heartbeat, at which it is told to revoke, is due within the wait",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\t\tif since >= due && since < late {", New: "\t\tif false && since >= due && since < late {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatWaitsForDueOwner"}},
	},
}

func init() { mutations = append(mutations, releaseHoldMutations...) }

var releaseHoldMutations = []mutation{
	{
		Name:  "consumer-release-answer-not-held",
		Rule:  "releases soon to come: a heartbeat that leaves its member lacking partitions about to be released has its answer held and reconciled again",
		Edits: []edit{{File: "kafka/group/consumer_batch.go", Old: "\t\tif b.resp.ErrorCode == errNone && g.releasesDueLocked(b) {", New: "\t\tif false && b.resp.ErrorCode == errNone && g.releasesDueLocked(b) {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerReleaseAnswerWaitsForOthersRelease"}},
	},
	{
		Name:  "consumer-held-answer-not-reconciled",
		Rule:  "releases soon to come: a held heartbeat's member is reconciled again with what was released meanwhile",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\tchanged := cs.reconcile(m, nil)\n", New: "\tchanged := false\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerReleaseAnswerWaitsForOthersRelease"}},
	},
	{
		Name:  "consumer-held-answer-before-write",
		Rule:  "durable consumer group state: a held heartbeat's second turn is answered only after the write holding it",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\t\tif code := g.persistConsumerLocked(); code != errNone {\n\t\t\tb.resp.ErrorCode = code\n\t\t\treturn\n\t\t}\n", New: "\t\tif code := errNone; code != errNone {\n\t\t\tb.resp.ErrorCode = code\n\t\t\treturn\n\t\t}\n"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerReleaseAnswerWaitsForOthersRelease"}},
	},
	{
		Name:  "consumer-release-wait-for-quiet-owner",
		Rule:  "releases soon to come: a heartbeat does not wait for an owner overdue by more than the wait",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "since >= due && since < late {", New: "since >= due && (since < late || true) {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerBeatNoWaitForQuietOwner"}},
	},
}

func init() { mutations = append(mutations, toldRevocationMutations...) }

var toldRevocationMutations = []mutation{
	{
		Name:  "consumer-held-answer-revokes-untold",
		Rule:  "revocation of told partitions only: partitions a held answer gave a member and the target took back before it was sent are released at once, not left for the member to revoke",
		Edits: []edit{{File: "kafka/group/consumer_await.go", Old: "\tif told := b.wait.told; m.state == memberUnrevoked && !ownsAny(told, m.revoking) {", New: "\tif told := b.wait.told; false && m.state == memberUnrevoked && !ownsAny(told, m.revoking) {"}},
		Tests: []testRun{{Pkg: "./kafka/group/", Run: "TestConsumerHeldAnswerRevokesOnlyToldPartitions"}},
	},
}
