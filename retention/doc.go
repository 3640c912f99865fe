// Package retention is what leaves a partition's local log and when: the
// retention pass (retention.go, the retention rules, "Retention" below) turns
// retention.ms and retention.bytes into a trim boundary, and the tier
// pass (tiering.go) uploads sealed ledgers of topics with
// remote.storage.enable=true to the object tier and lets local copies
// go as local.retention.* allows.
//
// It owns: the two background loops, the boundary arithmetic (expired
// entries, sealed ledgers, the size bound) and the order of a pass.
//
// It may not touch: the catalog, configs or producer and transaction
// state, except through the Partition and Host interfaces (host.go) the
// resolver implements; it moves a log start only through
// Partition.TrimTo, which checkpoints first (transaction recovery). DeleteRecords, a Kafka
// API, stays the resolver's. It imports neither resolver nor kafka/.
//
// # Retention
//
// A retention pass over one partition (retention/retention.go):
//
//	**Whole sealed ledgers only.** Only whole sealed ledgers are removed, as Kafka removes whole
//	   segments: the boundary is always the first offset of a ledger that
//	   follows a sealed one (or the current log start).
//	**Time retention.** Time (retention.ms >= 0): a ledger goes when every entry in it and
//	   before it has a max timestamp below now - retention.ms. One SeekTime
//	   through the time index (it holds the running max timestamp) finds
//	   the first entry that is not expired; no payload is read.
//	**Size retention.** Size (retention.bytes >= 0): the oldest sealed ledgers go while the
//	   size left (LedgerInfo.Bytes, file bytes) would still be at least
//	   retention.bytes (Kafka's rule).
//	**Expired open ledger.** An open ledger whose entries are all expired is rolled first and
//	   then removed (Kafka rolls an expired active segment). Data within
//	   retention is never removed: an entry appended during the pass lands
//	   at or past the boundary, which was computed before it.
//	**Ledgers below the log start.** Whole ledgers below the log start (after DeleteRecords) are removed
//	   too.
//	**Log start before the files.** SoftTrim(boundary) first, so the log start moves and reads below it
//	   are OFFSET_OUT_OF_RANGE (the log start check) before any file goes; then HardTrim
//	   removes the ledgers below it (a file a read has pinned goes when the
//	   read releases it, storage I6).
package retention
