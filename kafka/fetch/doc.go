// Package fetch reads a Fetch request's partitions (key 1): the items a
// fetch reads (from the request or its KIP-227 session), the response's
// byte budget (min(MaxBytes, fetch.max.bytes), a KIP-74 first batch
// whole), the long poll on one resolver Waiter, each partition's read
// through its resolver.Partition handle and the error answers of each
// partition, in Kafka's order of checks. Batches go out as stored, to
// every version (no down-conversion, KIP-896); an isolation level
// neither read_uncommitted nor read_committed fails the whole request
// (Fetcher.failAll), as Kafka's. The version rules are on
// kafka/01_fetch.go, the handler.
//
// What it may not touch: the connection, the authorizer, the cluster or
// the catalog. kafka/ hands it what it needs through Host (resolving a
// partition, topic ids, routing and current-epoch checks, internal
// topics' reads, the Kafka code of an error) and through Call (the
// request's batch holder, its authorization and its wait); it decodes,
// authorizes and encodes.
package fetch
