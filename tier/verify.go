package tier

import (
	"context"
	"fmt"
)

// Problem is one published object that fails verification.
type Problem struct {
	Object Object
	Err    error
}

func (p Problem) String() string {
	return fmt.Sprintf("%v %v %s: %v", p.Object.Log, p.Object.Ledger, p.Object.Key, p.Err)
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Objects, Bytes int64
	Problems       []Problem
}

// Verify reads every published object whole and checks it against its
// record: stored size, SHA-256 of frames and of the index, the footer,
// the index's shape and range, and every frame's CRC against the index.
func (t *Tier) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	objs, err := t.meta.List()
	if err != nil {
		return rep, err
	}
	for _, o := range objs {
		if o.State != Published {
			continue
		}
		rep.Objects++
		rep.Bytes += o.Size
		if err := t.retryStream(ctx, func(ctx context.Context) error { return t.readBack(ctx, o) }); err != nil {
			rep.Problems = append(rep.Problems, Problem{Object: o, Err: err})
		}
	}
	return rep, nil
}
