package objstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"

	"gocloud.dev/blob"
)

// ProbePrefix is the key prefix of Check's probe objects. Each probe has a
// random name, so nodes sharing a bucket may check it at once.
const ProbePrefix = "kgateway-probe/"

// Check writes a probe object to b, reads it back and deletes it: the
// bucket exists, and the credentials may write, read and delete in it. It
// does not list, so a bucket policy without ListBucket passes.
func Check(ctx context.Context, b *blob.Bucket) error {
	key := ProbePrefix + rand.Text()
	want := []byte("kgateway object store probe " + key)
	if err := b.WriteAll(ctx, key, want, nil); err != nil {
		return fmt.Errorf("object store check: write %s: %w", key, err)
	}
	got, readErr := b.ReadAll(ctx, key)
	// Delete even after a failed read: a probe is never left behind when
	// the store lets us remove it.
	delErr := b.Delete(ctx, key)
	switch {
	case readErr != nil:
		return fmt.Errorf("object store check: read back %s: %w", key, readErr)
	case !bytes.Equal(got, want):
		return fmt.Errorf("object store check: %s read back %d bytes that differ from the %d written", key, len(got), len(want))
	case delErr != nil:
		return fmt.Errorf("object store check: delete %s: %w", key, delErr)
	}
	return nil
}
