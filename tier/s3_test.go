package tier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/s3server"
	"github.com/kgateway/kgateway/tier"
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

// TestReadFromStoppedS3FailsInTime: a read of an object while the S3
// server is down fails within ReadTimeout, retries and the SDK's own
// retries included (unbounded, they took about 20 s, longer than a
// franz-go fetch waits for its answer); restarted, the read succeeds.
func TestReadFromStoppedS3FailsInTime(t *testing.T) {
	srv := s3server.Start(t)
	e := newEnvOn(t, tier.Options{ReadTimeout: time.Second, Backoff: 100 * time.Millisecond}, openBucket(t, srv))
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	es, err := e.readObject(led)
	if took := time.Since(start); err == nil || len(es) != 0 || took > 8*time.Second {
		t.Fatalf("read with the server down: %d entries, %v, after %v (ReadTimeout 1s)", len(es), err, took)
	}
	srv.Restart()
	es, err = e.readObject(led)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 0)
}

// TestCancelledUploadToHungS3Returns: an upload cancelled (a shutdown)
// while the S3 server hangs returns at once, without trying to delete its
// attempt against the hung server (that took OpTimeout per try, a minute
// here, holding the shutdown); the attempt is left to Reap, which removes
// it once the server answers, and the ledger then uploads.
func TestCancelledUploadToHungS3Returns(t *testing.T) {
	srv := s3server.Start(t)
	e := newEnvOn(t, tier.Options{OpTimeout: time.Minute, OrphanGrace: time.Nanosecond}, openBucket(t, srv))
	e.fill(1, 10)
	led := e.info().Ledgers[0].ID
	srv.Pause()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.tier.Upload(ctx, testLog, led)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if o, err := e.tier.Meta().Get(testLog, led); err == nil && o.State == tier.Uploading {
			break // the attempt is recorded: the upload is under way
		}
		if time.Now().After(deadline) {
			t.Fatal("no upload attempt recorded")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, bounded by the deadline
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled upload succeeded")
		}
	case <-time.After(20 * time.Second): // a failure bound, not a wait
		srv.Resume()
		t.Fatal("cancelled upload still running after 20s")
	}
	srv.Resume()
	if err := e.tier.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if o, err := e.tier.Meta().Get(testLog, led); !errors.Is(err, tier.ErrNoObject) {
		t.Fatalf("after Reap: record %+v, %v", o, err)
	}
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		t.Fatal(err)
	}
	// The cancelled PUT may still land once the server resumes: an object
	// no record names, which the orphan scan deletes (OrphanGrace is 1ns
	// here), leaving the published one.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := e.tier.Reap(context.Background()); err != nil {
			t.Fatal(err)
		}
		if e.objectCount() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d objects after Reap", e.objectCount())
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, bounded by the deadline
	}
	es, err := e.readObject(led)
	if err != nil {
		t.Fatal(err)
	}
	checkEntries(t, es, 0)
}
