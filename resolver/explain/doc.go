// Package explain computes the read plan of one fetch from a read-only
// view of a data directory (`kgateway explain`, server.Explain), without
// a running resolver: the binding (step 1 of the read flow,
// docs/DESIGN.md "Read flow"), the snapshot (step 2), which of the log
// start check, the empty read at the end and the fresh end check applies
// (step 3), the floor lookup and the candidates of its ledger, local or
// an object of the tier (step 4), and the entries a fetch would return
// under its limits, each checked as a read checks it (steps 5 and 6).
//
// The rules are the resolver's, not copies: the stored bindings come
// from resolver.ReadBindings, the entry budget from
// resolver.FetchEntries and the check of a stored entry from
// resolver.ValidateStored, so a plan and a Fetch agree
// (cmd/kgateway TestExplainAgreesWithFetch).
//
// What it owns and may not touch: it only reads, through
// storage.ReadOnly and tier's listings of objects and pins; it writes
// nothing, takes no pin, reads no object and opens no ledger, and it
// knows nothing of the wire, the cluster or the passes (cleaner,
// retention). The resolver never imports it.
package explain
