package resolver

import (
	"context"
	"time"

	"github.com/kgateway/kgateway/cleaner"
	"github.com/kgateway/kgateway/retention"
)

// Passes are the resolver's background passes over its partitions:
// retention and the object tier's pass (package retention), and the log
// cleaner of compacted topics and views (package cleaner). Open builds
// and starts them over the catalog as they see it (retentionHost in
// trim.go, cleanerHost in cleaner_host.go); Close stops them before it
// closes the partitions. Each Run method is one pass on demand (tests,
// tools); the background loops run the same.
//
// Passes owns only the three passes and their schedules: what a pass
// may do to a partition is what its Host and Partition interfaces
// allow, never the catalog's changes or a produce.
type Passes struct {
	retention *retention.Retention
	tiering   *retention.Tiering
	cleaner   *cleaner.Cleaner
}

// CleanerStats is what the cleaner has done since Open (metrics).
type CleanerStats = cleaner.Stats

// Passes are r's background passes.
func (r *Resolver) Passes() *Passes { return r.passes }

// newPasses are r's passes, configured by the broker's retention, tier
// and log.cleaner.* configs; Open starts them.
func newPasses(r *Resolver) *Passes {
	opts := retention.Options{
		CheckInterval: r.cfg.RetentionCheckInterval,
		TierInterval:  r.cfg.TierInterval,
		UnknownTopic:  ErrUnknownTopic,
		Now:           func() time.Time { return r.now() },
		Log:           r.log,
	}
	h := retentionHost{r}
	return &Passes{
		retention: retention.NewRetention(r.store, h, opts),
		tiering:   retention.NewTiering(r.cfg.Tier, h, opts),
		cleaner: cleaner.New(r.store, cleanerHost{r}, cleaner.Options{
			Threads:             r.cfg.Cleaner.Threads,
			BufferPerThread:     r.cfg.Cleaner.perThreadBuffer(),
			IOMaxBytesPerSecond: r.cfg.Cleaner.IOMaxBytesPerSecond,
			Backoff:             r.cfg.Cleaner.Backoff,
			UnknownTopic:        ErrUnknownTopic,
			Now:                 func() time.Time { return r.now() }, // read at each use, as the loop did
			Log:                 r.log,
		}),
	}
}

func (ps *Passes) start() {
	ps.retention.Start()
	ps.cleaner.Start()
	ps.tiering.Start()
}

func (ps *Passes) stop() {
	ps.retention.Stop()
	ps.tiering.Stop()
	ps.cleaner.Stop()
}

// RunRetention runs one retention pass over every partition as of now
// (the retention rules). The background loop calls it with the
// resolver's clock; tests call it directly with their own.
func (ps *Passes) RunRetention(now time.Time) error { return ps.retention.Run(now) }

// RunTiering runs one pass of the object tier over every partition. The
// background loop calls it; tests call it directly.
func (ps *Passes) RunTiering(ctx context.Context) error { return ps.tiering.Run(ctx) }

// RunCleaner cleans, as of now, every compacted partition that is due
// (the cleanable range), pass after pass, until none is: the background
// threads' work, on demand (tests, tools). A partition whose pass fails
// is not taken again by this call.
func (ps *Passes) RunCleaner(now time.Time) error { return ps.cleaner.Run(now) }

// CleanerStats returns the cleaner's counters.
func (ps *Passes) CleanerStats() CleanerStats { return ps.cleaner.Stats() }
