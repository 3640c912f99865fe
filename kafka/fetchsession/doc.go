// Package fetchsession keeps fetch sessions (KIP-227). A consumer
// fetching many partitions sends the whole partition list once (a full
// fetch, epoch 0); the server keeps it in a session and answers with the
// session's id. Later requests (epoch 1, 2, …) are incremental: they name
// only partitions that were added or whose fetch offset or max bytes
// changed, plus the partitions to forget, and the response carries only
// partitions with something new: records, an error, or a changed high
// watermark, last stable offset or log start.
//
// The fetch session rules: kafka/doc.go "Fetch sessions".
//
// Reads stay cursorless (R1): a session remembers what the client asked
// for and what it was last told, never a read position of the log.
//
// What it owns: the session cache (Cache: ids, epochs, the bounds on
// sessions and partitions, eviction, per-principal shares), each
// session's partitions and their response order, and the session-level
// answers (Error). What it may not touch: the log, the resolver, the
// connection or the authorizer. kafka/'s Fetch handler resolves the
// session's partitions to topics, authorizes and reads them, and hands
// the answers back through Part.Changed and Part.Remember; a session
// lock is held only inside Begin and Finish, never across a read (one-by-one session epochs).
package fetchsession
