package routing

// FindCoordinator's answers that do not depend on who coordinates: the
// same node (or error) for every key, and the answer to share-state keys
// (v6+, KIP-932), which no kgateway node serves.

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Coordinator is the node a FindCoordinator answer names: NodeID and
// Port -1 when there is none.
type Coordinator struct {
	NodeID int32
	Host   string
	Port   int32
}

// FindCoordinator answers every key of r with c, or with code and msg
// (the error, nil message when none): at the top level below v4, per key
// (KIP-699) from v4.
func FindCoordinator(r *kmsg.FindCoordinatorRequest, c Coordinator, code int16, msg *string) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if r.Version < 4 {
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = code, msg, c.NodeID, c.Host, c.Port
		return resp
	}
	for _, key := range r.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.ErrorCode, co.ErrorMessage, co.NodeID, co.Host, co.Port = key, code, msg, c.NodeID, c.Host, c.Port
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return resp
}

// NoCoordinator is the answer of a node without an offset store:
// COORDINATOR_NOT_AVAILABLE (retriable, not a close), top-level and for
// every key.
func NoCoordinator(r *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.ErrorCode, resp.NodeID, resp.Port = kerr.CoordinatorNotAvailable.Code, -1, -1
	for _, key := range r.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.ErrorCode, co.NodeID, co.Port = key, kerr.CoordinatorNotAvailable.Code, -1, -1
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return resp
}

// FindShareCoordinator answers share-state keys (v6+): none is served, so
// a well-formed key is COORDINATOR_NOT_AVAILABLE, as Kafka answers while
// it has no share-state topic, and a malformed one INVALID_REQUEST.
func FindShareCoordinator(r *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	for _, key := range r.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Port = key, -1, -1
		code := kerr.CoordinatorNotAvailable
		err := fmt.Errorf("%w: share-group state is kept inside kgateway's share coordinator; the share-group state RPCs are not served", code)
		if !validShareKey(key) {
			code = kerr.InvalidRequest
			err = fmt.Errorf("%w: share coordinator key %q is not groupId:topicId:partition", code, key)
		}
		co.ErrorCode, co.ErrorMessage = code.Code, kmsg.StringPtr(err.Error())
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return resp
}

// validShareKey reports whether key is "groupId:topicId:partition" with a
// non-empty group, a base64 (URL alphabet, unpadded) 16-byte topic id and
// a partition number, as Kafka's SharePartitionKey parses it.
func validShareKey(key string) bool {
	parts := strings.Split(key, ":")
	if len(parts) != 3 || parts[0] == "" {
		return false
	}
	id, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(id) != 16 {
		return false
	}
	_, err = strconv.ParseInt(parts[2], 10, 32)
	return err == nil
}
