package server

import (
	"context"
	"fmt"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/objstore"
	"github.com/kgateway/kgateway/tier"
	"gocloud.dev/blob"
)

// checkNoObjects refuses to open a data directory whose ledgers live
// partly in an object store without one: their entries could not be read.
func checkNoObjects(store *storage.Store) error {
	objs, err := tier.ListObjects(store.ScanMeta)
	if err != nil {
		return err
	}
	if len(objs) > 0 {
		return fmt.Errorf("%d objects of the object tier are recorded (ledgers kept in an object store): object.store.url is required", len(objs))
	}
	return nil
}

// openTier opens the object store at url and the object tier over store,
// its metadata kept in store's pebble (tier.PebbleMeta).
func openTier(store *storage.Store, url string, opts tier.Options) (*tier.Tier, *blob.Bucket, error) {
	if opts.Node == "" {
		node, err := tier.NodeID(store)
		if err != nil {
			return nil, nil, fmt.Errorf("object tier node id: %w", err)
		}
		opts.Node = node
	}
	b, err := objstore.Open(context.Background(), url)
	if err != nil {
		return nil, nil, fmt.Errorf("open object store: %w", err)
	}
	return tier.New(store, tier.BlobBucket(b), tier.NewPebbleMeta(store), opts), b, nil
}
