// Package storage is kgateway's durable byte layer (docs/DESIGN.md
// "Storage"): offset-addressed logs, one per topic-partition, each a list
// of ledgers (segment files) of self-describing entries, with everything
// small and indexed in one pebble instance.
//
// # File format
//
// A store directory holds segments/ (one file per ledger, named
// SegmentFileName(log, ledger)) and index/ (pebble). A ledger file is a
// sequence of frames, appended and never rewritten while its ledger lives
// (a new ledger may be written over a trimmed one's file of the same log,
// I8, so bytes past a ledger's last frame may be an older ledger's):
//
//	[0:4)   length of the rest of the frame, uint32 big-endian
//	[4:8)   CRC32C (Castagnoli) of bytes [8:end)
//	[8:16)  offset of the entry's first record
//	[16:20) records in the entry
//	[20:28) max timestamp (ms)
//	[28:)   payload (the Kafka record batch, as stamped by the caller)
//
// A frame carries its own offset, so the file alone says which entries it
// holds; recovery checks each frame's CRC and that its offset continues the
// sequence.
//
// The open ledger's file may hold disk blocks past its size, allocated
// ahead of its writes (prealloc.go, fallocate with FALLOC_FL_KEEP_SIZE):
// the size, which recovery reads up to, is its frames' bytes, and Roll
// and Close free those blocks.
//
// # Keyspace
//
// All integers big-endian, so byte order is numeric order:
//
//	l|log                 log record: state (NORMAL/FENCED), soft-trim start
//	g|log|ledger          ledger record: first offset, Cum before it, created,
//	                      sealed, and once sealed its final entries and bytes;
//	                      a rewrite's ledger also its generation ("Generations");
//	                      an offloaded one a flags byte ("Offloaded ledgers")
//	i|log|offset          entry index: records, max time, size, Cum, ledger,
//	                      entry, file position (Floor = SeekLT, O(log n))
//	p|log|ledger|entry    legacy: the offset of the entry at a position.
//	                      Earlier versions wrote one per entry; none is
//	                      written or read now (EntryAt binary-searches the
//	                      entry index), and HardTrim and DeleteLog remove
//	                      those of a store written before
//	t|log|runmax|offset   time index, sparse as Kafka's: written when an entry
//	                      raises the log's running max timestamp and is the
//	                      first to since Open or lies at least timeKeyEvery
//	                      (64) offsets past the log's newest keyed entry;
//	                      SeekTime = SeekGE, then a scan of at most 64
//	                      offsets of the entry index past the key below it
//	                      (timeindex.go). Open recovers the running max from
//	                      the newest key and the same scan past it; HardTrim
//	                      keeps the last key below the trim point, moved to
//	                      the highest raise it removes
//	m|key                 the upper layers' metadata (ApplyMeta/GetMeta/ScanMeta),
//	                      among them the object tier's records and pins
//	                      (m|tier/..., tier PebbleMeta)
//	s|next-ledger         the next ledger ID (store-wide; IDs are never reused)
//	s|journal-epoch       a bound above every epoch the journal files were
//	                      ever written with ("Journaled commits")
//	j|log|ledger|pos      legacy: an earlier version's journal (a copy of
//	                      a frame of a journaled group commit). None is
//	                      written now (the journal has files of its own,
//	                      "Journaled commits"); Open writes back and
//	                      deletes any a store written before holds
//
// # Group commit
//
// (Where this sits in a produce: docs/DESIGN.md "Write flow", step 4.)
// Write, under the log's append lock, assigns the next dense offset (D3),
// calls Stamp, writes the frame to the open ledger file (page cache only)
// and queues a Pending. One committer goroutine takes everything queued (up
// to MaxGroupBytes), and then, in this order:
//
//  1. fdatasyncs each touched file once (concurrently across files);
//  2. commits one pebble batch (i and t keys) with NoSync;
//  3. advances each log's durable End (D5) and its open ledger's counts;
//  4. wakes the waiters. Append = Write + Wait, so an append is answered
//     only after its bytes are synced (D1).
//
// If a write or a sync fails, the log is failed: this and every later
// pending of it fails with ErrFailed, and so does every append until the
// store is reopened. An fsync is never retried, and no entry after a failed
// one is ever acknowledged. The one exception is a write refused because
// the disk is full (I7): that entry fails with ErrNoSpace and the log stays
// writable.
//
// # Bulk lane
//
// With Options.BulkEntryBytes (and no Replicator) a second committer, the
// bulk lane, runs the same steps beside the main one. An entry goes to
// the bulk lane when its log's running average entry size (the newest
// entry weighing a quarter) reaches BulkEntryBytes, to the main lane
// otherwise. So the bursts of large batches of a bulk producer (a quota'd
// tenant's, let through each time its throttle ends) are synced by the
// bulk lane while other logs' small writes keep being committed by the
// main lane: they neither share a burst's fdatasync nor queue behind it.
// (On ext4 a small write's fdatasync still waits for part of a
// concurrent burst's data, through the journal commit both need, but no
// longer for all of it.) Each log's entries are still published in
// offset order: an entry queued while its log's newest unanswered entry
// is in the other lane is taken only once that one is answered, and a
// lane takes none of a log's entries behind one it holds back; the lane
// that answers a group wakes the other. Nothing else changes: every
// entry is acknowledged after its own fdatasync (D1), and a failure
// fails the log as above. Close drains both lanes. OnCommit is called
// from both.
//
// # Burst steps
//
// The lanes keep a small write out of a burst's group commit, but not out
// of the disk's: on ext4 (and on a virtual disk whose flush is the host's
// fsync) a small write's fdatasync waits for whatever of a concurrent
// burst is being written back, up to a whole multi-megabyte fdatasync of
// it. With Options.BulkStepBytes and the bulk lane, Write therefore
// writes an entry larger than a step one step at a time, syncing the file
// after each step but the last before it writes the next, while other
// logs write in the main lane: when another log has queued an entry in
// the main lane since this log's latest entry was queued. A small
// write's fdatasync then waits for one step of the burst, not all of it.
// A log written alone writes in one go. The steps are only early syncs
// of bytes past the log's durable end: the entry is acknowledged after
// the group commit's fdatasync as any other (D1), a crash between steps
// leaves a torn tail that recovery truncates (I4), and a failed step
// sync fails the log, as a failed fdatasync of a group commit does.
//
// # Journaled commits
//
// With Options.JournalBytes (and no Replicator) a main lane's group
// commit that touches at least two files, with at most JournalBytes
// bytes of frames per file on average (four times that over 16 files or
// more: journal.go journalBound), is journaled (a bulk lane's
// never: its entries' payloads are not kept past Write, "Pooled
// frames"): step 1 is replaced by one record,
// holding a copy of every frame of the group (its log, ledger and
// position, and the frame as written to its file), appended to the
// store's journal file and fdatasynced (a frame over 8 KiB is written
// from the entry, and its part of the record's CRC joined from its frame
// header's: journalrecord.go; no pass over it besides the write). One
// fdatasync then makes the
// whole group durable, where its files would each have needed their own
// (a thousand partitions with a record or two each cost a thousand
// fdatasyncs, and on ext4 as many journal commits). Steps 2 to 4 are as
// before (the index batch stays NoSync: I3, I4). The journal is two
// files in segments/ (journal-0.jnl, journal-1.jnl; journal.go), written
// in turns: a pass appends records to one file from its start until the
// next would pass 32 MiB, then the next pass writes the other file from
// its start, over its blocks of two passes before. The files keep their
// size: a new one is filled with zeros (written and synced, in the
// background, a bounded distance ahead of where the journal writes;
// journalfill.go) before a pass writes there, and neither Close nor Open
// shortens them. So a journal fdatasync overwrites blocks
// the file has and changes no size: on ext4 it needs no file-system
// journal commit (which every sync of a growing file, pebble's WAL among
// them, does), from a store's first pass on and after every restart.
// A group whose record lies past what is filled waits for the filler
// (one chunk's fdatasync, not one per file of the group); only if the
// filler failed is it committed as without a journal. When a pass
// ends, a checkpoint (in the background, one file at a time, four
// once it falls behind the next pass) fdatasyncs every file the pass
// journaled frames of; the other journal
// file is written over only once its previous pass's checkpoint has
// finished: a pass that ends before then waits for it and hurries it
// (more files at a time), and only after a failed checkpoint is a group
// committed as without a journal. Close checkpoints everything and retires the
// journal's passes (zeroes each file's first record header, synced).
// Open, before it recovers any log (I4), writes every frame of the
// journal back at its place in its file (both files' passes, the older
// first; a record counts while it is whole, by its length and CRC32C,
// and of its pass: an older pass's records past the newer ones end the
// pass), syncs those files and only then retires the passes. A pass's
// epoch is above every epoch the files hold, across restarts: each Open
// raises the bound s|journal-epoch (synced) past the epochs it may use
// before it writes any record, and starts above the old bound. See I15.
// (Verify and the offline inspection read the files as they are: after
// a crash and before an Open, an acknowledged entry of a journaled group
// may be in the journal only.)
//
// With Options.Replicator (cluster mode) step 1 is replaced: the group's
// entries are handed to Replicate, and the segment files are not
// fdatasynced at all — the local copy is a cache of the replicated one
// (I10-I13 below). With Options.CommitInterval the committer also waits,
// on a timer, between the starts of two group commits, so that the
// replicated copy gets fewer, larger commits (I13).
//
// # Invariants
//
//	I1 A ledger file exists before any entry is written to it, and its
//	   directory entry is durable before any entry of it is indexed or
//	   acknowledged (Roll creates or reuses (I8) the file and SyncDirs
//	   before its synced pebble batch; a new log's first ledger, recorded
//	   by CreateLog(s) without a file, gets its file, without a
//	   Replicator, from CreateLogs once that is committed (precreate.go),
//	   else (or if that creation failed) on the log's first Write, and,
//	   without a Replicator, the group commit that takes the
//	   first Write to it syncs segments/ before it syncs, journals or indexes
//	   anything: one SyncDir for every file created since the last, so
//	   the first writes to a thousand new logs cost one, not a thousand;
//	   with a Replicator the Write syncs it). So only a ledger with no
//	   entry indexed can lack its file, and Open treats a missing newest
//	   file with nothing indexed as that empty ledger. Files no record
//	   names are orphans and are removed at Open.
//	I2 The entry index never names bytes that are not durable: the index
//	   batch is committed only after the fdatasync of the bytes it names.
//	   Reads see only indexed entries below End, so a written but unsynced
//	   entry is invisible to every read (D5).
//	I3 Only the newest ledger of a log can have an unindexed tail. Index
//	   commits are NoSync, so a crash may lose the newest index entries, but
//	   Roll first drains the log's pending writes and then records the
//	   sealed ledger's final entry count and size in a synced batch (which,
//	   pebble's WAL being sequential, also makes every earlier NoSync index
//	   commit durable) before the new ledger can take an entry. Hence the
//	   segment file is the source of truth and a NoSync index is enough.
//	I4 Recovery (Open) reads, per log, the last index entry of the newest
//	   ledger (one seek), scans the file from just after it, re-indexes
//	   every whole frame that continues the offset sequence, truncates the
//	   first torn or bad frame and everything after it, fdatasyncs the file
//	   and then commits the re-indexed entries with Sync. Its cost is the
//	   unsynced tail (about one group), not the data size.
//	I5 D2 follows: an acknowledged entry was fdatasync'd (I2), so after a
//	   crash it is in its file; if its index entry was lost it lies in the
//	   newest ledger's tail (I3) and is re-indexed at its offset (I4, the
//	   frame holds the offset). A partial entry fails its length or CRC
//	   check and is truncated, so it is never visible.
//	I6 Trims, fencing, deletion and ApplyMeta are synced pebble writes.
//	   HardTrim and DeleteLog drop records first and files second; a file
//	   pinned by a read in progress is removed when the last pin is released
//	   (or, after a crash, as an orphan at the next Open). While pinned, a
//	   removed ledger stays readable through ReadIndexed (the read was in
//	   progress).
//	I7 A write that fails with ENOSPC or EDQUOT does not fail the log: it
//	   precedes every sync of its bytes, so nothing durable is in doubt.
//	   The open ledger is truncated back to its last whole frame (or, if
//	   even that fails, before the next write), the entry's offset is not
//	   consumed (D3 stays dense), and the append fails with ErrNoSpace.
//	   Appends work again once space is freed, without a reopen. A failed
//	   sync (including ENOSPC from fsync) still fails the log.
//	I8 HardTrim keeps the file of the largest ledger it trims (unpinned,
//	   non-empty) as its log's spare (spare.go, `<log>.spare`), and the
//	   log's next Roll renames it to the new ledger's name and writes over
//	   it: an fdatasync after overwriting blocks needs no journal commit
//	   (BENCHMARKS.md "Reusing trimmed segment files"). Only the same log reuses a file, because I4 is what keeps
//	   the old frames out: every offset in a trimmed ledger is below the
//	   first offset of every later ledger of its log, so no old frame can
//	   continue the new ledger's offset sequence, and recovery stops at the
//	   first one as at a torn frame. DeleteLog removes the spare durably
//	   before the log's records (a new log of the same ID starts at offset
//	   0 again); Open adopts a live log's spare and removes any other.
//	   Roll cuts a reused ledger's file to its last entry and syncs the cut
//	   before the record that seals it, and Close cuts the open one, so no
//	   sealed ledger has bytes past its end and a clean restart has no
//	   tail to truncate. The cost is disk: a log may hold one trimmed
//	   file between a trim and its next Roll (Options.NoReuse turns
//	   reuse off and removes spares at Open). A write refused for lack of
//	   space (I7) makes the store remove every spare, in the background,
//	   and keep none until it is reopened.
//	I9 Directories are durable too: a new directory entry is durable only
//	   once its parent directory is synced. Open creates the data
//	   directory and segments/ with fsys.MkdirAllSync, which syncs the
//	   parent of every directory it created, up to and including the
//	   first ancestor that already existed, before Open returns (so before
//	   any acknowledgement); pebble does the same for index/ and for the
//	   offsets store's directory. Open also syncs the data directory and
//	   its parent every time, whoever created them (an installer, an
//	   operator, a start cut short: their entries may never have been
//	   synced), and so a cluster node's cache directory, which is the
//	   data directory.
//
// With a Replicator (Options.Replicator, cluster mode) the replicated copy,
// not the local files, is what D1, D2 and D5 are about:
//
//	I10 The committer's order per group is: bytes written locally, then
//	   one Replicate call with the group's entries (those of logs not
//	   failed, not written with NoReplicate, in per-log offset order, each
//	   with its header and its payload as stamped), then the index commit,
//	   then the durable ends (D5), then the waiters (D1). So no entry is
//	   indexed, visible or acknowledged before Replicate returned without
//	   an error for its log. The segment files are not fdatasynced: the
//	   local copy is a cache, and after a crash its index may name bytes
//	   its files lost (I2 and I5 hold for the replicated copy only), so a
//	   store run with a Replicator is rebuilt from the replicated copy,
//	   never reopened after a crash as the truth (cluster mode wipes its
//	   data directory at start). The directory and ledger records keep
//	   their syncs (I1, I3, I6); they are cheap and rare.
//	I11 A log for which Replicate returns an error is failed at once, as
//	   after a failed fdatasync: none of its entries of that group, nor of
//	   any later one, is indexed, published or acknowledged; each waiter's
//	   error, and every later append's, matches errors.Is for both
//	   ErrFailed and the Replicator's error (ErrNotLeader when the node
//	   no longer owns the log), until the log is deleted (or the store
//	   reopened). Its written frames stay in its file past the index; the
//	   log is to be replaced, not appended to. The other logs of the group
//	   are acknowledged normally. A log failed before is never replicated
//	   (D2, D3: nothing after a failed entry is acknowledged).
//	I12 An entry written with AppendOptions.NoReplicate never reaches
//	   Replicate; it is acknowledged after the group's index commit (a
//	   new owner copying entries in from the replicated copy).
//	I13 With a CommitInterval, two group commits start at least that far
//	   apart: the committer waits on a timer (nothing polls) and entries
//	   queued meanwhile share the next group commit, up to MaxGroupBytes
//	   (further groups follow at the same pace). With a Pipeliner and a
//	   ReplicateDepth above 1, a group that would start with none in
//	   flight waits only twice the latest finished group's time (start to
//	   outcome) after the last start when that is shorter: where commits
//	   take half the interval or more every start is paced as above, and
//	   where they take far less, an idle store does not make every
//	   acknowledgement wait out the interval. A group finishing ends the
//	   wait early when the rule now allows. Close ends the wait at
//	   once and drains the queue without waiting. Without a Replicator
//	   CommitInterval is ignored: a local fdatasync gains nothing by
//	   waiting.
//	I14 With a Pipeliner and a ReplicateDepth d > 1, up to d groups are
//	   in flight: the committer hands a group to BeginReplicate and takes the next
//	   one (after the interval, I13) while the earlier ones replicate. A
//	   finisher completes the groups strictly in the order they were
//	   started: it waits for a group's outcome, then applies I11 to it
//	   and re-checks every log of the group for a failure an earlier
//	   group left (an entry taken while the failing group was in flight):
//	   such a log's entries are neither indexed, published nor
//	   acknowledged, even if replicated. Then the index, the durable
//	   ends and the waiters, as in I10. So an entry is acknowledged only
//	   after its own group's outcome and those of every earlier group;
//	   the durable ends only grow; no entry after a failed one is
//	   acknowledged (D2, D3). The Pipeliner publishes in call order.
//	I15 With a journal (Options.JournalBytes), a journaled group's
//	   record is written to the journal file after its frames were
//	   written to their files, and fdatasynced before the group is
//	   indexed and before its durable ends and waiters (I2 holds with
//	   "durable" meaning in the file or in the journal: the index never
//	   names a byte that is in neither); a failed journal write or sync
//	   fails the group's logs, as a failed fdatasync of their files
//	   would, and ends journaling until the store is reopened. A journal
//	   file is written over only after every file its previous pass
//	   journaled frames of was fdatasynced by a checkpoint that began
//	   after that pass ended, or once that file's ledger record is
//	   durably gone (trimmed, deleted, offloaded); a failed checkpoint
//	   sync fails the log and keeps the pass, so the file is not written
//	   over again. A pass's epoch is above every epoch either file holds
//	   (the synced bound s|journal-epoch, raised by each Open before it
//	   writes), so no record of an earlier pass or an earlier run of the
//	   store continues a later pass. Open writes every frame of the
//	   journal whose ledger record is there (and not offloaded) back at
//	   its position, syncs those files and only then retires the passes
//	   (each file's first record header zeroed and synced; files an
//	   earlier version wrote, without the bound, are truncated), before I4
//	   runs; a frame whose ledger is gone is dropped. A pass is written
//	   only over a part of its file that the filler has written and
//	   synced (zeros), never where the filler still writes; the filler
//	   writes only past what it has filled, never over a record.
//	   A position of a ledger is written once while the ledger lives (a
//	   write refused for lack of space, I7, was never journaled), so
//	   writing back a frame its file already holds changes nothing, and
//	   replaying a pass already checkpointed costs only that. So I5
//	   holds: an acknowledged entry is in its file after Open, from its
//	   own fdatasync or from the journal. The group's files are not
//	   synced by the group, so I3's "the segment file is the source of
//	   truth" holds after Open's write-back.
//
// # Reads
//
// Reads snapshot (Start, End) under the log's lock and then use pebble
// iterators and pread on the files outside it. An entry is visible when it
// is durable (Offset < End) and ends above Start (an entry straddling Start
// is visible). Every frame's CRC32C is checked on read (ErrCorrupt). Reads
// never write: no pebble write, no file write (ledger files are opened
// read-only for them), no metadata update — R1 in ledger/ relies on it.
// Returned payloads are read-only (C4).
//
// The tail cache (below, tailcache.go) keeps each log's most recently
// written entries in memory, byte-bounded over all logs
// (Options.TailCacheBytes): a read that starts in it is answered from
// memory (no index seek, no pread), bounded by the same snapshot. Entries
// that are slices of one shared buffer (AppendOptions.Backing) charge the
// buffer once, at its whole size (C5). Runs of back-to-back entries read
// from a file take one pread.
//
// # Leased reads
//
// ReadIndexedLeased (lease.go) is ReadIndexed for a caller that sends the
// payloads after the call returns (a Kafka Fetch): the same pread and the
// same CRC32C check of every frame, into pooled buffers that a Lease holds
// until the caller releases it, once the bytes are written. A lease made
// with pins also keeps the pin of every ledger read (so I6 and I8 hold
// until then: the file is neither removed nor reused) and each entry says
// where its payload lies in the file (Entry.Src), so that the caller may
// sendfile that range instead of writing the buffer: the range holds the
// bytes whose CRC the read just checked. A lease dropped without Release
// releases when it is garbage collected. (A byte that changes on the disk
// between the check and the sendfile, without the file being written, is
// outside what any read can promise: the check covers what the read saw.)
//
// # Pooled frames
//
// A writer may retain payloads that are slices of a pooled buffer
// (NewPooledBacking over a bufpool.Shared: a Kafka Produce's request
// frame, read into a buffer that is reused once nothing reads it). The
// rule is bufpool's, the last holder returns it, and in the store the
// holders are: the writer, until every Write of its slices is answered
// (then the store keeps nothing of it but what the cache keeps), or,
// when no Write's Pending.HoldsPayload (no Replicator, and each entry in
// the bulk lane, whose groups are never journaled), as soon as its
// Writes returned, before their fdatasync; each
// cached entry, from before it is visible in the cache until after it
// has left it (evicted, or dropped and then reached in the eviction
// order); and each read served from the cache: a leased read holds the
// frame until its lease is released, since the caller writes the payload
// to a socket after the read returns, and a read without a lease keeps
// the frame from the pool for good (bufpool Keep), since nobody can say
// when its caller stops reading. So a frame is reused only once no cached
// entry, no unreleased lease and no unanswered write can reach it: a
// fetch response still being written never sends another request's
// bytes.
//
// A writer that has already verified the CRC32C of a suffix of its
// payload (a Kafka batch's own CRC) passes it (AppendOptions.SuffixCRC);
// the frame CRC is then derived by CRC concatenation (crc.go) instead of a
// second pass. It still covers every byte, and every read checks it.
//
// # Generations
//
// A log cleaner replaces a range of sealed ledgers with one new ledger
// holding a subset of their entries at their own offsets (BeginRewrite,
// Rewrite.Append, Rewrite.Commit; rewrite.go). The new ledger's
// generation (LedgerInfo.Gen, kept in its record) is one above the
// highest it replaces; appended ledgers are generation 0. An entry's
// Records is then the offsets it spans, and offsets between entries may
// be unused (gaps). The rules are the resolver's compacted generations, the generation swap and reads across gaps: the file is
// synced and its directory entry durable before one synced pebble batch
// swaps the ledger records and the range's entry index, so a crash
// leaves one generation whole; old files go with their last pin; reads
// by offset move from a gap to the next entry (R3) and find nothing when
// none follows. The ledger list is kept in offset order, which a rewrite
// (a newer id in an older place) makes differ from id order; reads name
// offsets, never ledger ids.
//
// # Offloaded ledgers
//
// A sealed ledger whose entries an object store holds (tier) may
// be offloaded (Offload): its record is marked, in a synced write, and
// then its file is removed like a trimmed one's (after the last pin, I6;
// kept as the log's spare when I8 allows). Its record, entry index and
// time index stay, so offsets, retention (the retention rules), ListOffsets and the
// ledger's sizes see the whole log; only its payloads are elsewhere.
// ReadIndexed of its entries fails with ErrOffloaded, which sends the
// ledger's read to the object target. Open does not expect its file (one
// left by a crash between the record and the removal is an orphan), and
// the open ledger is never offloaded, so recovery (I4) never needs one.
// Offload is the caller's promise that the object is published and
// verified (tier B4).
//
// # Tail cache
//
// Invariants of the tail cache (tailcache.go):
//
//	C1 A cached entry is served only when the read's snapshot makes it
//	   readable: below the durable end (D5) and above the log start. A
//	   written but unsynced entry is cached at once and served only after
//	   its group commit has published it.
//	C2 A log's cache has no gaps, so when it holds the entry containing a
//	   read's start it holds every later entry up to the snapshot's end:
//	   a read that starts in the cache is answered by it alone (no index
//	   seek, no pread), with exactly what the index would have returned.
//	C3 Anything the cache cannot answer (a start before its first entry,
//	   a trimmed start) goes to the index and the files as before, which
//	   keep every error case.
//	C4 Served payloads are the cache's own slices: read-only for everyone.
//	C5 The budget counts the memory the cache keeps alive: a payload that
//	   is a slice of a shared buffer (AppendOptions.Backing) keeps all of
//	   it, so the buffer is charged at its full size while any of its
//	   slices is cached, and once however many are.
//
// # Crash tests
//
// The segment files go through an FS (package fsys). Crash tests run the
// store on storage/vfstest: a MemFS that knows what is durable (file
// contents at their last Sync, directory entries at their parent's last
// SyncDir) and pebble's crashable vfs, taken together as a Machine. An FS
// that implements fsys.Stepper is told each step of every group commit
// (written, synced, indexed, published) and stops the committer until it
// returns; MemFS also stops at every held Sync. A test arms a crash point
// there and takes its crash image in either clone order, or at any other
// instant with pebble cloned first (vfstest's crash.go says why).
//
// # Benchmarks
//
// The storage benchmarks (append, reused files, reads, Open) and how to
// run them: BENCHMARKS.md "Storage and object tier micro-benchmarks".
//
// # Locks
//
// Store.closeMu (read, for every public operation) -> logState.appendMu
// (everything that changes one log) -> Store.ledgerMu (ledger ID allocation
// and creation) -> Store.mu (the log map) -> logState.mu (the durable view:
// state, Start, End, ledgers, files and pins) -> logTail.mu (one log's
// cached entries) -> tailCache.mu (the budget). The committer takes only
// logState.mu (the bulk lane's counts of a log are under the committer's
// own mutex, never nested with another). tailCache.add takes logTail.mu and tailCache.mu one after
// the other, never nested, and evicts after releasing both.
package storage
