package tier_test

import (
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"github.com/kgateway/kgateway/tier/tiertest"
)

// TestPebbleMetaConformance runs Meta's contract against PebbleMeta. One
// process owns a pebble, so both "nodes" share one handle.
func TestPebbleMetaConformance(t *testing.T) {
	tiertest.MetaConformance(t, func(t *testing.T) (tier.Meta, tier.Meta) {
		s, err := storage.Open(filepath.Join(t.TempDir(), "data"), storage.Options{TailCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		m := tier.NewPebbleMeta(s)
		return m, m
	})
}
