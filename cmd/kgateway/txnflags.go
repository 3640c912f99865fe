package main

import (
	"math"
	"time"

	"github.com/kgateway/kgateway/kafka/txn"
)

// validateTxn checks the transaction coordinator's settings.
func (c Config) validateTxn(bad func(prop, format string, args ...any)) []error {
	if c.TransactionMaxTimeoutMs < 1 || c.TransactionMaxTimeoutMs > math.MaxInt32 {
		bad("transaction.max.timeout.ms", "%d out of range [1, %d]", c.TransactionMaxTimeoutMs, math.MaxInt32)
	}
	for prop, v := range map[string]int64{
		"transactional.id.expiration.ms":                              c.TransactionalIDExpirationMs,
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": c.TransactionAbortTimedOutMs,
		"transaction.remove.expired.transaction.cleanup.interval.ms":  c.TransactionRemoveExpiredIDMs,
	} {
		if v < 1 {
			bad(prop, "%d must be at least 1", v)
		}
	}
	for prop, v := range map[string]int{
		"transactional.ids.max": c.TransactionalIDsMax, "transactional.ids.max.per.principal": c.TransactionalIDsMaxPerPrinc,
		"transaction.max.partitions": c.TransactionMaxPartitions, "transaction.max.groups": c.TransactionMaxGroups,
		"transaction.entries.max": c.TransactionEntriesMax, "transaction.entries.max.per.principal": c.TransactionEntriesMaxPerPrinc,
	} {
		if v < 1 {
			bad(prop, "%d must be at least 1", v)
		}
	}
	return nil
}

// txnConfig maps the settings onto the coordinator's.
func (c Config) txnConfig() txn.Config {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	return txn.Config{
		MaxTimeout:            ms(c.TransactionMaxTimeoutMs),
		IDExpiration:          ms(c.TransactionalIDExpirationMs),
		AbortTimedOutInterval: ms(c.TransactionAbortTimedOutMs),
		RemoveExpiredInterval: ms(c.TransactionRemoveExpiredIDMs),

		MaxTransactionalIDs:             c.TransactionalIDsMax,
		MaxTransactionalIDsPerPrincipal: c.TransactionalIDsMaxPerPrinc,
		MaxPartitionsPerTxn:             c.TransactionMaxPartitions,
		MaxGroupsPerTxn:                 c.TransactionMaxGroups,
		MaxHeldEntries:                  c.TransactionEntriesMax,
		MaxHeldEntriesPerPrincipal:      c.TransactionEntriesMaxPerPrinc,
	}
}
