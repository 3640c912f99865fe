// Package producerid hands out producer ids and bumps their epochs for
// InitProducerID (KIP-360), durably: the resolver's counter of ids and
// the epochs it bumped, kept in the store's metadata keyspace under
//
//	resolver/next-pid                 end of the ids reserved so far (uint64)
//	resolver/producer-epoch/<pid>     bumped epoch of a producer id (int16)
//
// (resolver/meta.go lists the resolver's other keys). Ids are reserved
// durably a block at a time (producer id blocks: Open reserves the first
// block, and the id past a block reserves the next, each by moving the
// counter past the block, synced before an id of it is returned; the
// other ids need no write); an id is reserved before it is returned and
// never reused across restarts, which skip the rest of their block. A
// bumped epoch is durable before it is returned. With a shared allocator (cluster mode, the shared
// producer ids rule in resolver/doc.go) nothing is kept here: every
// InitProducerID answers a fresh id from it, epoch 0.
//
// What it owns and may not touch: its two keys, written through the
// storage.Store it is given, under its own lock (independent of every
// resolver lock). It knows nothing of partitions, of a producer's
// sequence state on a partition or of transactions (txnstate), and never
// imports the resolver, which holds it and reports its storage faults
// as ErrStorage through the wrap function it passes in.
package producerid
