package ledger

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for a zero Config (Kafka's segment.bytes and segment.ms).
const (
	DefaultSegmentBytes = int64(1) << 30
	DefaultSegmentAge   = 7 * 24 * time.Hour
)

// Validate reports every problem with c at once, each wrapping ErrInvalid.
func (c Config) Validate() error {
	var errs []error
	if c.SegmentBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: segment bytes %d < 0", ErrInvalid, c.SegmentBytes))
	}
	if c.SegmentAge < 0 {
		errs = append(errs, fmt.Errorf("%w: segment age %v < 0", ErrInvalid, c.SegmentAge))
	}
	return errors.Join(errs...)
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.SegmentAge == 0 {
		c.SegmentAge = DefaultSegmentAge
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
