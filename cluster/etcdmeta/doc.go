// Package etcdmeta keeps the object tier's metadata (tier Meta) in
// etcd, so several nodes share one object index and see each other's
// reader pins. It keeps the contract of tier (rules B1–B8) and
// passes the same conformance suite as PebbleMeta
// (tiertest.MetaConformance).
//
// # Keyspace
//
// Under a prefix chosen by the caller (one per cluster):
//
//	<prefix>o/<log>/<ledger>           an object record: tier.EncodeObject
//	<prefix>p/<object key>\x00<pin id> a reader pin (JSON), under a lease
//
// log and ledger are 16 hexadecimal digits, so key order is (log, ledger)
// order. One key per object (a sealed ledger's copy, or later a merged
// range), never one per batch: etcd's data stays small.
//
// # Versions
//
// An object's Version is its key's mod revision in etcd (0: no record).
// Put is one transaction: if the key's mod revision is o.Version (or, for
// 0, the key does not exist) then put, else nothing; the new Version is
// the transaction's revision. Delete is the same with a delete. So a
// compare-and-swap from any node is decided by etcd alone, two can never
// both win, and a record deleted and created again never matches a
// version handed out before (revisions never repeat).
//
// # Pins
//
// A pin is a key attached to this handle's pin lease: granted on first
// use, kept alive while the process runs, revoked by Close. A pin is
// removed by RemovePin, by Reap once its Expires passes (as with pebble),
// or by etcd when the lease ends: a node that dies or is cut off from etcd
// for the lease's TTL leaves no pin behind, so it blocks no deletion for
// longer than that. A lease that ended is replaced by a fresh one at the
// next AddPin.
//
// Meta's methods take no context: each call is bounded by
// Options.Timeout.
package etcdmeta
