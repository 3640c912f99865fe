package offsetstest

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/kgateway/kgateway/offsets"
)

// WithWriteHook returns opts with hook called before every synced write
// of the store is applied (through Options.Mirror): it can hold the
// write, or fail it by returning an error, in which case nothing is
// applied. Tests above offsets/ use it to check that nothing is answered
// before its write returned, without importing pebble.
func WithWriteHook(opts offsets.Options, hook func() error) offsets.Options {
	opts.Mirror = func(*pebble.Batch) error { return hook() }
	return opts
}
