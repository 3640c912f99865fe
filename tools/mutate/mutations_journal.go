package main

// Deliberate breaks of journaled group commits and of the first writes'
// directory sync (storage/journal.go; storage/doc.go "Journaled commits",
// I15, and I1).

func init() { mutations = append(mutations, journalMutations...) }

var journalMutations = []mutation{
	{
		Name:  "journal-commit-nosync",
		Rule:  "storage I15: a journaled group's record is fdatasynced in the journal file before any of its entries is acknowledged",
		Edits: []edit{{File: "storage/journal.go", Old: "\tif err == nil {\n\t\terr = f.Sync()\n\t}\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournaledCommitWrittenBack"}},
	},
	{
		Name:  "journal-not-written-back",
		Rule:  "storage I15: Open writes every journaled frame back into its file before recovery",
		Edits: []edit{{File: "storage/recover.go", Old: "\tif err := s.replayJournal(); err != nil {", New: "\tif err := error(nil); err != nil {"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournaledCommitWrittenBack|TestCrashPointsJournaled"}},
	},
	{
		Name:  "journal-deleted-before-sync",
		Rule:  "storage I15: a checkpoint releases a file's journaled frames only after that file's fdatasync",
		Edits: []edit{{File: "storage/journal.go", Old: "\terr := f.Sync()\n\tif err == nil {", New: "\terr := error(nil)\n\tif err == nil {"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalCheckpoint"}},
	},
	{
		Name:  "journal-pass-overwritten-unsynced",
		Rule:  "storage I15: a journal file is written over only once every file its previous pass journaled frames of was synced in place",
		Edits: []edit{{File: "storage/journal.go", Old: "\tif !passed || checked {\n\t\treturn !passed\n\t}\n", New: "\t_, _ = passed, checked\n\treturn true\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalPassKeptUntilCheckpointed"}},
	},
	{
		Name:  "journal-emptied-after-failed-checkpoint",
		Rule:  "storage I15: after a failed checkpoint sync, Close leaves the journal for Open to write back",
		Edits: []edit{{File: "storage/journal.go", Old: "\tj.mu.kept = true\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalPassKeptUntilCheckpointed"}},
	},
	{
		Name:  "journal-epochs-not-reserved",
		Rule:  "storage I15: a pass's epoch is above every epoch the journal files hold, across restarts",
		Edits: []edit{{File: "storage/journal.go", Old: "\tj.epoch, j.limit = bound+1, bound+journalEpochReserve\n", New: "\tj.epoch, j.limit = 1, journalEpochReserve\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalKeptAcrossRestarts"}},
	},
	{
		Name:  "journal-epoch-bound-unsaved",
		Rule:  "storage I15: each Open raises the journal's epoch bound, synced, before it writes a record",
		Edits: []edit{{File: "storage/journal.go", Old: "j.s.db.Set(keyJournalEpoch, ", New: "j.s.db.Set([]byte(\"unused\"), "}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalKeptAcrossRestarts"}},
	},
	{
		Name:  "journal-not-retired-at-close",
		Rule:  "storage I15: Close retires the journal's checkpointed passes, so that a clean restart writes nothing back",
		Edits: []edit{{File: "storage/journal.go", Old: "\t\terr = retireJournal(j.files[:])\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalKeptAcrossRestarts"}},
	},
	{
		Name:  "journal-not-retired-at-open",
		Rule:  "storage I15: Open retires the passes it wrote back, so that no later Open takes their frames again",
		Edits: []edit{{File: "storage/journal.go", Old: "\t\treturn retireJournal(jfiles)\n", New: "\t\treturn nil\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalKeptAcrossRestarts"}},
	},
	{
		Name:  "journal-written-before-filled",
		Rule:  "storage I15: a pass writes its journal file only where the filler has written and synced it",
		Edits: []edit{{File: "storage/journal.go", Old: "\t\treturn j.awaitFilled(j.cur, j.off+size)\n", New: "\t\treturn true\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalWaitsForFill$"}},
	},
	{
		Name:  "journal-no-wait-for-filler",
		Rule:  "storage journal: a group whose record lies past what the filler has filled waits for the filler and is journaled, not synced file by file",
		Edits: []edit{{File: "storage/journalfill.go", Old: "\tfor j.filled[i].Load() < end {\n\t\tselect {\n", New: "\tfor j.filled[i].Load() < end {\n\t\treturn false\n\t\tselect {\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalWaitsForFiller"}},
	},
	{
		Name:  "journal-switch-no-wait-for-checkpoint",
		Rule:  "storage journal: a pass that ends while the previous pass's checkpoint runs waits for it, and its groups stay journaled",
		Edits: []edit{{File: "storage/journal.go", Old: "\tif !passed || checked {\n\t\treturn !passed\n\t}\n", New: "\tif !passed || checked || true {\n\t\treturn !passed\n\t}\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalSwitchWaitsForCheckpoint"}},
	},
	{
		Name:  "checkpoint-not-paced",
		Rule:  "storage journal: a checkpoint syncs one file at a time while it keeps ahead of the next pass",
		Edits: []edit{{File: "storage/journal.go", Old: "\tif paced {\n\t\tstarted = 1\n\t}\n", New: "\tif paced {\n\t\tstarted = journalSyncers\n\t}\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestCheckpointPaced"}},
	},
	{
		Name:  "journal-fill-unbounded",
		Rule:  "storage journal: the filler fills a journal file only a bounded distance ahead of the journal's next record",
		Edits: []edit{{File: "storage/journalfill.go", Old: "\tend = min((end+journalFillChunk-1)/journalFillChunk*journalFillChunk, journalFileBytes)\n", New: "\tend = journalFileBytes\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalFillsAhead"}},
	},
}

func init() { mutations = append(mutations, dirSyncMutations...) }

var dirSyncMutations = []mutation{
	{
		Name:  "first-write-dir-unsynced",
		Rule:  "storage I1: a new ledger file's directory entry is durable before any entry of it is acknowledged",
		Edits: []edit{{File: "storage/commit.go", Old: "\tc.syncDir(group, failed)\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestFirstWritesDirSynced"}},
	},
	{
		Name:  "lanes-dir-sync-unordered",
		Rule:  "storage I1: a lane that finds the other lane's directory sync in progress waits for it before it acknowledges a new file's entry",
		Edits: []edit{{File: "storage/commit.go", Old: "\tc.dirMu.Lock()\n\tdefer c.dirMu.Unlock()\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestLanesWaitForDirSync"}},
	},
	{
		Name:  "precreate-off",
		Rule:  "storage: CreateLogs creates the new logs' files before it returns, before their first Write",
		Edits: []edit{{File: "storage/store.go", Old: "\ts.precreate(ids)\n", New: ""}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestPrecreatedFiles"}},
	},
	{
		Name:  "journal-record-frame-crc-misjoined",
		Rule:  "storage I15: a journal record's CRC is that of its bytes, a large frame's part joined from the CRC its frame header holds",
		Edits: []edit{{File: "storage/journalrecord.go", Old: "int64(frameHeaderLen-8+len(p.payload))", New: "int64(len(p.payload))"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalRecordOfLargeFrames"}},
	},
	{
		Name:  "journal-record-large-payload-left-out",
		Rule:  "storage I15: a journal record holds every frame of its group whole, a large frame's payload written from the entry",
		Edits: []edit{{File: "storage/journalrecord.go", Old: "bufs = append(bufs, b[from:pc.at], pc.payload)", New: "bufs = append(bufs, b[from:pc.at])"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalRecordOfLargeFrames"}},
	},
	{
		Name:  "journal-record-one-vector-write",
		Rule:  "storage I15: a journal record of more buffers than one pwritev takes (IOV_MAX) is written in several",
		Edits: []edit{{File: "storage/journalrecord.go", Old: "const journalMaxPieces = 512", New: "const journalMaxPieces = 1 << 20"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestWriteRecordManyPieces"}},
	},
	{
		Name:  "journal-wide-groups-bound-narrow",
		Rule:  "storage I15: a group over many files is journaled up to several times JournalBytes a file",
		Edits: []edit{{File: "storage/journal.go", Old: "\tif files >= journalWideFiles {", New: "\tif files < 0 {"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalWideGroups"}},
	},
	{
		Name:  "journal-wide-bound-for-few-files",
		Rule:  "storage I15: a group of few files is journaled only up to JournalBytes a file",
		Edits: []edit{{File: "storage/journal.go", Old: "\tif files >= journalWideFiles {", New: "\tif files >= 2 {"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestJournalWideGroups"}},
	},
}
