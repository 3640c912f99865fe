package kafka

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The oracles of the request fuzz targets.

// validErrorCode reports whether code is a Kafka error code (0 is none).
func validErrorCode(code int16) bool {
	return code == 0 || code == kerr.UnknownServerError.Code || kerr.ErrorForCode(code) != kerr.UnknownServerError
}

// checkErrorCodes walks a response and returns an error naming every
// ErrorCode field (at any depth) that is not a Kafka error code.
func checkErrorCodes(resp kmsg.Response) error {
	var bad []string
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				if f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
					if c := int16(v.Field(i).Int()); !validErrorCode(c) {
						bad = append(bad, fmt.Sprintf("%s.ErrorCode=%d", path, c))
					}
					continue
				}
				walk(v.Field(i), path+"."+f.Name)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(reflect.ValueOf(resp), reflect.TypeOf(resp).Elem().Name())
	if len(bad) > 0 {
		return fmt.Errorf("invalid Kafka error codes: %s", strings.Join(bad, ", "))
	}
	return nil
}

// topicPartitions lists "topic/partition" for every Topics[].Partitions[]
// of a request or response, the shape those five keys share.
func topicPartitions(msg any) []string {
	var out []string
	topics := reflect.ValueOf(msg).Elem().FieldByName("Topics")
	for i := range topics.Len() {
		t := topics.Index(i)
		parts := t.FieldByName("Partitions")
		for j := range parts.Len() {
			out = append(out, fmt.Sprintf("%s/%d", t.FieldByName("Topic").String(), parts.Index(j).FieldByName("Partition").Int()))
		}
	}
	return out
}

// shapeKeys returns, for the keys whose responses answer item by item, the
// set of items (topic names, topic/partition pairs, groups, resources) the
// request asked about and the response answered; ok is false for keys (or
// request forms, such as "all topics") without such a rule.
func shapeKeys(req kmsg.Request, resp kmsg.Response) (asked, answered []string, ok bool) {
	switch q := req.(type) {
	case *kmsg.ProduceRequest:
		if q.Version >= 13 {
			return nil, nil, false // topics by id
		}
		return topicPartitions(q), topicPartitions(resp), true
	case *kmsg.ListOffsetsRequest, *kmsg.OffsetCommitRequest, *kmsg.OffsetForLeaderEpochRequest, *kmsg.DeleteRecordsRequest:
		return topicPartitions(q), topicPartitions(resp), true
	case *kmsg.OffsetDeleteRequest:
		if resp.(*kmsg.OffsetDeleteResponse).ErrorCode != 0 {
			return nil, nil, false // a group-level error answers no topic
		}
		return topicPartitions(q), topicPartitions(resp), true
	case *kmsg.CreateTopicsRequest:
		r := resp.(*kmsg.CreateTopicsResponse)
		for _, t := range q.Topics {
			asked = append(asked, t.Topic)
		}
		for _, t := range r.Topics {
			answered = append(answered, t.Topic)
		}
	case *kmsg.CreatePartitionsRequest:
		r := resp.(*kmsg.CreatePartitionsResponse)
		for _, t := range q.Topics {
			asked = append(asked, t.Topic)
		}
		for _, t := range r.Topics {
			answered = append(answered, t.Topic)
		}
	case *kmsg.DeleteTopicsRequest:
		r := resp.(*kmsg.DeleteTopicsResponse)
		if q.Version >= 6 {
			return nil, nil, false // topics by name or id
		}
		asked = append(asked, q.TopicNames...)
		for _, t := range r.Topics {
			if t.Topic != nil {
				answered = append(answered, *t.Topic)
			}
		}
	case *kmsg.DescribeGroupsRequest:
		r := resp.(*kmsg.DescribeGroupsResponse)
		asked = append(asked, q.Groups...)
		for _, g := range r.Groups {
			answered = append(answered, g.Group)
		}
	case *kmsg.DeleteGroupsRequest:
		r := resp.(*kmsg.DeleteGroupsResponse)
		asked = append(asked, q.Groups...)
		for _, g := range r.Groups {
			answered = append(answered, g.Group)
		}
	case *kmsg.DescribeConfigsRequest:
		r := resp.(*kmsg.DescribeConfigsResponse)
		for _, c := range q.Resources {
			asked = append(asked, fmt.Sprintf("%d:%s", c.ResourceType, c.ResourceName))
		}
		for _, c := range r.Resources {
			answered = append(answered, fmt.Sprintf("%d:%s", c.ResourceType, c.ResourceName))
		}
	case *kmsg.AlterConfigsRequest:
		r := resp.(*kmsg.AlterConfigsResponse)
		for _, c := range q.Resources {
			asked = append(asked, fmt.Sprintf("%d:%s", c.ResourceType, c.ResourceName))
		}
		for _, c := range r.Resources {
			answered = append(answered, fmt.Sprintf("%d:%s", c.ResourceType, c.ResourceName))
		}
	case *kmsg.IncrementalAlterConfigsRequest:
		r := resp.(*kmsg.IncrementalAlterConfigsResponse)
		for _, c := range q.Resources {
			asked = append(asked, fmt.Sprintf("%d:%s", c.ResourceType, c.ResourceName))
		}
		for _, c := range r.Resources {
			answered = append(answered, fmt.Sprintf("%d:%s", c.ResourceType, c.ResourceName))
		}
	default:
		return nil, nil, false
	}
	return uniqSorted(asked), uniqSorted(answered), true
}

func uniqSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// checkResponse is FuzzRequestHandle's oracle: the response is of the
// request's key and version, every error code is a Kafka code, and a
// response that answers item by item answers exactly the items asked.
func checkResponse(req kmsg.Request, resp kmsg.Response) error {
	if resp.Key() != req.Key() || resp.GetVersion() != req.GetVersion() {
		return fmt.Errorf("response key %d v%d to request key %d v%d", resp.Key(), resp.GetVersion(), req.Key(), req.GetVersion())
	}
	if err := checkErrorCodes(resp); err != nil {
		return err
	}
	asked, answered, ok := shapeKeys(req, resp)
	if ok && !slices.Equal(asked, answered) {
		return fmt.Errorf("asked about %q, answered %q", asked, answered)
	}
	return nil
}

// addRichSeeds adds seeds with content (topics, partitions, groups), so
// the fuzzers start from requests that reach the handlers' item-by-item
// paths, not only from empty ones.
func addRichSeeds(f *testing.F) {
	add := func(req kmsg.Request, version int16) {
		for i, a := range apis {
			if a.key == req.Key() && version >= a.min && version <= a.max {
				req.SetVersion(version)
				f.Add(uint8(i), uint8(version-a.min), req.AppendTo(nil))
				return
			}
		}
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range []string{"a", "b", "t", "a"} {
		tp := kmsg.NewCreateTopicsRequestTopic()
		tp.Topic, tp.NumPartitions, tp.ReplicationFactor = name, 2, 1
		ct.Topics = append(ct.Topics, tp)
	}
	add(ct, 5)
	add(ct, 2)
	cp := kmsg.NewPtrCreatePartitionsRequest()
	for _, name := range []string{"t", "nope"} {
		tp := kmsg.NewCreatePartitionsRequestTopic()
		tp.Topic, tp.Count = name, 3
		cp.Topics = append(cp.Topics, tp)
	}
	add(cp, 2)
	add(cp, 0)
	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	for _, p := range []int32{0, 1, 7} {
		pp := kmsg.NewListOffsetsRequestTopicPartition()
		pp.Partition, pp.Timestamp = p, -1
		lt.Partitions = append(lt.Partitions, pp)
	}
	lo.Topics = append(lo.Topics, lt)
	add(lo, 4)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "g", -1
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = "t"
	for _, p := range []int32{0, 1} {
		pp := kmsg.NewOffsetCommitRequestTopicPartition()
		pp.Partition, pp.Offset = p, 5
		ot.Partitions = append(ot.Partitions, pp)
	}
	oc.Topics = append(oc.Topics, ot)
	add(oc, 2)
	add(oc, 8)
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TopicNames = []string{"a", "zz"}
	add(dt, 4)
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks = -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pt.Partitions = append(pt.Partitions, pp)
	pr.Topics = append(pr.Topics, pt)
	add(pr, 7)
}
