// Package resolvertest opens a resolver over real storage in a test's
// temporary directory. It is for the tests of the layers above the
// resolver (kafka/), which never import ledger/ or storage/ themselves.
package resolvertest

import (
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
)

// Open opens a store in a fresh temporary directory of tb and a resolver
// over it with cfg. Both are closed when tb ends.
func Open(tb testing.TB, cfg resolver.Config) *resolver.Resolver {
	tb.Helper()
	return OpenTailCache(tb, cfg, 0)
}

// OpenTailCache is Open over a store whose tail cache holds tailCache
// bytes (0: the default; storage.Options.TailCacheBytes).
func OpenTailCache(tb testing.TB, cfg resolver.Config, tailCache int64) *resolver.Resolver {
	tb.Helper()
	return OpenStore(tb, cfg, Store{TailCacheBytes: tailCache})
}

// Store is what OpenStore sets of the store's options (storage.Options'
// fields of the same names; zero values are storage's defaults).
type Store struct {
	TailCacheBytes int64 // negative: no tail cache
	JournalBytes   int   // positive: a journal (storage "Journaled commits")
	BulkEntryBytes int   // positive: a bulk lane (storage "Bulk lane")
}

// OpenStore is Open over a store with opts.
func OpenStore(tb testing.TB, cfg resolver.Config, opts Store) *resolver.Resolver {
	tb.Helper()
	store, err := storage.Open(filepath.Join(tb.TempDir(), "data"), storage.Options{
		TailCacheBytes: opts.TailCacheBytes, JournalBytes: opts.JournalBytes, BulkEntryBytes: opts.BulkEntryBytes,
	})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := resolver.Open(store, cfg)
	if err != nil {
		store.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		res.Close()
		store.Close()
	})
	return res
}
