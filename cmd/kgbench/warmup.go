package main

// warmup.go readies a server's coordinators before a workload's clock
// starts. Apache Kafka creates its internal topics (__consumer_offsets,
// __transaction_state, __share_group_state, 50 partitions each by default)
// on the first FindCoordinator for them and answers
// COORDINATOR_NOT_AVAILABLE until the topic is created and loaded; that
// once-per-cluster cost, seconds on a loaded machine, would otherwise land
// in the first measured group, transaction or share row. Workloads 10 and
// 11 therefore ask for their coordinator until it is there, the same for
// every system (kgateway and kfake answer at once), and workload 8 loads
// its producer id (InitProducerID) before its schedule starts.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// coordinatorWarmTimeout bounds warmCoordinator.
const coordinatorWarmTimeout = time.Minute

// FindCoordinator key types.
const (
	coordinatorGroup int8 = 0
	coordinatorShare int8 = 2 // KIP-932: key "group:topicID:partition"
)

// shareCoordinatorKey is the share-group state key of a partition, with
// the topic ID in Kafka's Uuid form (URL-safe base64, no padding).
func shareCoordinatorKey(group string, topicID [16]byte, partition int32) string {
	return fmt.Sprintf("%s:%s:%d", group, base64.RawURLEncoding.EncodeToString(topicID[:]), partition)
}

// warmCoordinator asks FindCoordinator for key until the server names a
// coordinator. A retriable "not available" or "loading" answer is asked
// again; any other answer ends the warm-up without an error: the
// workload's own requests then meet it and report it.
func (b *bench) warmCoordinator(ctx context.Context, keyType int8, key string) error {
	cl, err := b.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, coordinatorWarmTimeout)
	defer cancel()
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = keyType
		req.CoordinatorKey = key
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = findCoordinatorErr(resp)
		}
		if err == nil || !(errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("coordinator for %q not available after %s: %w", key, coordinatorWarmTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// findCoordinatorErr is the response's error: the first key's (v4+) or
// the top-level one.
func findCoordinatorErr(resp *kmsg.FindCoordinatorResponse) error {
	if len(resp.Coordinators) > 0 {
		return kerr.ErrorForCode(resp.Coordinators[0].ErrorCode)
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}
