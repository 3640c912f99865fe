package tier

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kgateway/kgateway/storage"
)

// ScanFunc scans a metadata prefix: storage's Store.ScanMeta, or
// ReadOnly.ScanMeta for the inspection commands beside a running server.
type ScanFunc func(prefix []byte, fn func(key, value []byte) error) error

// ListObjects returns every object record PebbleMeta keeps, in (log,
// ledger) order, read through scan (no write).
func ListObjects(scan ScanFunc) ([]Object, error) {
	var out []Object
	err := scan(objPrefix, func(_, v []byte) error {
		o, err := DecodeObject(v)
		out = append(out, o)
		return err
	})
	return out, err
}

// ListPins returns every pin PebbleMeta keeps, read through scan.
func ListPins(scan ScanFunc) ([]Pin, error) { return scanPins(scan, pinPrefix) }

func scanPins(scan ScanFunc, prefix []byte) ([]Pin, error) {
	var out []Pin
	err := scan(prefix, func(_, v []byte) error {
		var p Pin
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("%w: pin record: %w", storage.ErrCorrupt, err)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// VerifyObjects reads each published object of objs whole from b and
// checks it against its record (as Tier.Verify), without a store: the
// `kgateway verify` command's check of the object tier. Each call to the
// store is bounded by the default OpTimeout (a hung store fails the
// object's check instead of holding verify).
func VerifyObjects(ctx context.Context, b Bucket, objs []Object) VerifyReport {
	stall := Options{}.withDefaults().OpTimeout
	var rep VerifyReport
	for _, o := range objs {
		if o.State != Published {
			continue
		}
		rep.Objects++
		rep.Bytes += o.Size
		if err := readBack(ctx, b, o, stall); err != nil {
			rep.Problems = append(rep.Problems, Problem{Object: o, Err: err})
		}
	}
	return rep
}
