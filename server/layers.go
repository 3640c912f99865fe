package server

import (
	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// The configuration types of the layers server/ assembles, under the
// names Config uses: cmd/kgateway maps its properties onto them through
// server/ alone, so that it builds the server only through Open and never
// reaches a layer directly (layering_test.go).
type (
	// StorageOptions is Config.Storage (storage.Options).
	StorageOptions = storage.Options
	// TierOptions is Config.Tier (tier.Options).
	TierOptions = tier.Options
	// ResolverConfig is Config.Resolver (resolver.Config).
	ResolverConfig = resolver.Config
	// CleanerConfig is ResolverConfig.Cleaner (resolver.CleanerConfig).
	CleanerConfig = resolver.CleanerConfig
	// LedgerConfig is ResolverConfig.Ledger (ledger.Config).
	LedgerConfig = ledger.Config
	// OffsetsOptions is Config.Offsets (offsets.Options).
	OffsetsOptions = offsets.Options
)

// DefaultOffsetsRetention is OffsetsOptions.Retention's default, Kafka's
// offsets.retention.minutes (offsets.DefaultRetention).
const DefaultOffsetsRetention = offsets.DefaultRetention

// DefaultTailCacheBytes is StorageOptions.TailCacheBytes's default
// (storage.DefaultTailCacheBytes).
const DefaultTailCacheBytes = storage.DefaultTailCacheBytes
