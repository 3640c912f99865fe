// Package fetchsession keeps fetch sessions (KIP-227). A consumer
// fetching many partitions sends the whole partition list once (a full
// fetch, epoch 0); the server keeps it in a session and answers with the
// session's id. Later requests (epoch 1, 2, …) are incremental: they name
// only partitions that were added or whose fetch offset or max bytes
// changed, plus the partitions to forget, and the response carries only
// partitions with something new: records, an error, or a changed high
// watermark, last stable offset or log start.
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
//
// # Rules
//
//   - **Session epoch check.** An incremental fetch (epoch > 0) naming
//     an unknown session gets FETCH_SESSION_ID_NOT_FOUND; one whose
//     epoch is not the session's next epoch gets
//     INVALID_FETCH_SESSION_EPOCH, and the session is left as it was.
//     Both are top-level errors with no partitions; the client answers
//     with a full fetch.
//   - **Session open and close by epoch.** Epoch 0 closes the named
//     session (if any) and opens a new one from a full fetch; epoch -1
//     closes the named session and fetches without one (session id 0 in
//     the response).
//   - **One-by-one session epochs.** Epochs advance one by one: a
//     request checks and applies its epoch under the session's lock,
//     and takes it again to make its response. The lock is not held
//     while the request reads or long-polls, so a client cannot park
//     other work on it. A request whose session moved to another epoch
//     meanwhile (a duplicate request) is answered
//     INVALID_FETCH_SESSION_EPOCH, as Kafka does, and changes nothing.
//   - **Fetch session cache bound.** The cache holds at most
//     max.incremental.fetch.session.cache.slots sessions. When full, a
//     new session takes the place of the least recently used one if
//     that was idle for sessionEvictionAge, else of the smallest one if
//     the new one has more partitions; otherwise no session is created
//     and the client fetches sessionless (id 0). With an authorizer a
//     session belongs to the principal that opened it: one principal
//     holds at most
//     max.incremental.fetch.session.cache.slots.per.principal (beyond,
//     its new session takes the place of its own stale or smaller one,
//     or gets none); when the cache is full a principal holding at
//     least two fewer than the principal holding the most takes the
//     place of that one's least recently used session, and the
//     smaller-session rule applies only among the newcomer's own
//     principal's sessions.
//   - **Sessions keyed by ids or names.** A session keyed by topic ids
//     (v13+) is not used by a request keyed by names, nor the other way
//     round: FETCH_SESSION_TOPIC_ID_ERROR.
//   - **Session partition bound.** A session holds at most
//     maxSessionPartitions partitions, and all sessions together at
//     most maxCachedPartitions, so session memory is bounded whatever
//     clients send. A full fetch beyond either bound gets no session
//     (id 0, as when the cache is full); an incremental fetch that
//     grows its session beyond either removes the session and gets
//     FETCH_SESSION_ID_NOT_FOUND, and the client falls back to a full
//     fetch.
//   - **Unchanged partitions.** A partition's Quiet is its last read
//     that found nothing past the client's offset, with no error, and
//     the partition's version before it (kafka/fetch's). While the
//     client asks for the same offset and the version is unchanged, the
//     handler answers it with Quiet's bounds and no read; such an answer
//     equals what the client was told, so the response leaves it out.
//     The request that read writes Quiet in Finish, under the session's
//     lock, like the rest of what the client was told.
//   - **Kept session waiter.** A session may hold a Watch (kafka/fetch's
//     long-poll waiter, kept registered between its requests); the cache
//     closes it once the session is dropped (removed, replaced by epoch,
//     evicted or grown past its bound), or idle for sessionEvictionAge
//     (a later request makes a new one), after releasing its own lock.
package fetchsession
