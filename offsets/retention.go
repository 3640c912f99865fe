package offsets

import "time"

// Retention is offsets.retention.minutes as this store applies it
// (Options.Retention, defaulted).
func (s *Store) Retention() time.Duration { return s.opts.Retention }
