// Package produce writes a Produce request's batches (key 0): the
// request-wide refusals (version, a transactional batch without a
// transactional id, acks), each partition's checks in Kafka's order
// (codec, the implicit add to a transaction of v12+, routing), the
// write through the partition's resolver.Partition handle, the wait for
// durability of every write after all are written, and each partition's
// answer (KIP-467 record errors, TRANSACTION_ABORTABLE from v11). The
// version rules are on kafka/00_produce.go, the handler.
//
// What it may not touch: the connection, the authorizer, the cluster,
// the catalog or the transaction coordinator's state. kafka/ hands it
// what it needs through Host (resolving and auto-creating a partition as
// the request's principal, routing, the coordinator's implicit add, a
// cluster's transaction verification, the Kafka code of an error); it
// decodes, authorizes, names moved leaders' endpoints and encodes.
package produce
