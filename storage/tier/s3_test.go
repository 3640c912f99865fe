package tier_test

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage/tier"
	"github.com/kgateway/kgateway/test/s3server"
)

// TestUploadToHungS3Fails: an upload to a real S3 server that accepts
// connections but answers nothing (paused) fails by OpTimeout, retried,
// instead of waiting for it forever (and with it every later upload and
// deletion of the tier pass); once the server answers again the upload
// succeeds and its object reads back.
func TestUploadToHungS3Fails(t *testing.T) {
	srv := s3server.Start(t)
	e := newEnvOn(t, tier.Options{OpTimeout: 300 * time.Millisecond, Retries: 1}, openBucket(t, srv))
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	srv.Pause()
	done := make(chan error, 1)
	go func() {
		_, err := e.tier.Upload(context.Background(), testLog, led)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("upload to a hung server succeeded")
		}
	case <-time.After(30 * time.Second): // a failure bound, not a wait
		srv.Resume()
		t.Fatal("upload to a hung server still waiting after 30s")
	}
	if s := e.tier.Stats(); s.Retries < 1 || s.UploadFailures != 1 {
		t.Fatalf("stats %+v", s)
	}
	srv.Resume()
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
	es, err := e.readObject(led)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 0)
}
