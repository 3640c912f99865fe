// Package identity is a data directory's cluster identity, made once at
// its first Open and kept in the store's metadata keyspace (the durable
// cluster id and reserved internal topic names rules, resolver/doc.go):
//
//	resolver/cluster-id                cluster id, Kafka's form (below)
//	resolver/internal-topic/<name>     topic id of an internal topic
//
// Clients compare the cluster id across connections to notice that they
// reach a different cluster, so it must differ between data directories
// and survive restarts: Load makes and stores whatever is missing in one
// synced write before it returns, and every later Load reads the same.
//
// What it owns and may not touch: those keys only, read and written
// through the storage.Store it is given, once, at Open. Which names are
// internal, what a topic id is and how one is made are the resolver's
// (it passes them in); the catalog, partitions and logs are not this
// package's, and it never imports the resolver.
package identity
