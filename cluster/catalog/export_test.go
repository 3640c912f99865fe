package catalog

import "context"

// StartAt follows the catalog from revision rev without loading first:
// as a watch that fell behind to rev (a test of the catalog watch's reload).
func (c *Catalog) StartAt(rev int64) {
	c.mu.Lock()
	c.mu.started = true
	c.mu.Unlock()
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go c.run(ctx, rev)
}
