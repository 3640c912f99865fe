package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareGroupsAgainstKfake runs workload 11 at toy sizes against an
// in-process kfake: every row accepted every record of its topic, through
// ShareAcknowledge commits whose latency it reports.
func TestShareGroupsAgainstKfake(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--share-records", "300", "--share-members", "1,3", "--share-partitions", "3"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadShare)
	if got := workloadRowNames(rows); !slices.Equal(got, []string{"11 share 1p×1", "11 share 1p×3", "11 share 3p×3"}) {
		t.Fatalf("rows %q", got)
	}
	for _, r := range rows {
		if r.Error != "" || r.Unsupported != "" || r.Records != 300 || r.MBps <= 0 || r.RecordsPerSec <= 0 {
			t.Errorf("%+v", r)
		}
		short := strings.TrimPrefix(r.Workload, "11 ")
		if got, want := figureNames(r), []string{short + " ack p50", short + " ack p99"}; !slices.Equal(got, want) {
			t.Errorf("%s: figures %q, want %q", r.Workload, got, want)
		}
		if !strings.Contains(r.Notes, "300 records") || strings.Contains(r.Notes, " 0 ShareAcknowledge") ||
			!strings.Contains(r.Notes, "ShareAcknowledge write to answer p50 ") {
			t.Errorf("%s: notes %q", r.Workload, r.Notes)
		}
	}
	if b.failed {
		t.Error("a healthy run marked the server failed")
	}
}

func workloadRowNames(rows []Result) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Workload)
	}
	return out
}

// TestShareGroupsUnsupported: a server without share groups (kgateway
// before KIP-932) gets "unsupported" rows at once: no error, no health
// check, no share consumer waiting for records that never come.
func TestShareGroupsUnsupported(t *testing.T) {
	b, _ := inProcessKfake(t, []string{"--share-records", "10"},
		withoutKeys(kmsg.ShareGroupHeartbeat, kmsg.ShareGroupDescribe, kmsg.ShareFetch, kmsg.ShareAcknowledge))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows := b.runWorkload(ctx, workloadShare)
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.Error != "" || !strings.Contains(r.Unsupported, "ShareGroupHeartbeat (ApiVersions key 76)") || r.Records != 0 {
			t.Errorf("%+v", r)
		}
	}
	if b.failed || ctx.Err() != nil {
		t.Errorf("failed %v, context %v", b.failed, ctx.Err())
	}
}

// TestShareAckFailureFailsTheRow: a ShareAcknowledge the broker answers
// with an error (injected once into an in-process kfake) fails the row
// rather than giving a throughput that hides it.
func TestShareAckFailureFailsTheRow(t *testing.T) {
	b, c := inProcessKfake(t, []string{"--share-records", "50", "--share-members", "1", "--share-partitions", "2"})
	c.ControlKey(int16(kmsg.ShareAcknowledge), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.ShareAcknowledgeRequest)
		resp := r.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
		for _, rt := range r.Topics {
			st := kmsg.ShareAcknowledgeResponseTopic{TopicID: rt.TopicID}
			for _, rp := range rt.Partitions {
				st.Partitions = append(st.Partitions, kmsg.ShareAcknowledgeResponseTopicPartition{
					Partition: rp.Partition, ErrorCode: kerr.InvalidRecordState.Code,
				})
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows := b.runWorkload(ctx, workloadShare)
	if !strings.Contains(rows[0].Error, errShareAck.Error()) || !strings.Contains(rows[0].Error, "INVALID_RECORD_STATE") {
		t.Errorf("row with a failed acknowledgement: %+v", rows[0])
	}
	if rows[1].Error != "" || rows[1].Records != 50 {
		t.Errorf("the next row: %+v", rows[1])
	}
}

// fillShareRow fails a row that not every record reached, with the
// members' fetch errors, and one with a failed acknowledgement.
func TestFillShareRow(t *testing.T) {
	b := newBench(&config{RecordSize: 100}, nil)
	sc := shareCase{topicW11One, 1, 2}
	recs := []*kgo.Record{{Partition: 0, Offset: 0}, {Partition: 0, Offset: 1}}
	start := time.Now()

	rec := newShareRecorder(3)
	rec.committed(recs, time.Millisecond)
	rec.committed(recs[:1], time.Millisecond) // a redelivery counts once
	fetchErr := errors.New("share fetch: broken")
	var res Result
	if err := b.fillShareRow(&res, sc, rec, start, fetchErr); !errors.Is(err, errShareIncomplete) || !errors.Is(err, fetchErr) ||
		!strings.Contains(err.Error(), "2 of 3 records") {
		t.Errorf("incomplete: %v", err)
	}
	rec.committed([]*kgo.Record{{Partition: 0, Offset: 2}}, 3*time.Millisecond)
	select {
	case <-rec.done:
	default:
		t.Fatal("every record accepted, not done")
	}
	if err := b.fillShareRow(&res, sc, rec, start, nil); err != nil || res.Records != 3 || res.MBps <= 0 ||
		!strings.Contains(res.Notes, "3 commits, 4 deliveries") || res.Latency[1].Ms != 3 {
		t.Errorf("complete: %v %+v", err, res)
	}
	rec.onAck(nil, kgo.ShareAckResults{{Topic: topicW11One, Err: kerr.InvalidRecordState}})
	if err := b.fillShareRow(&res, sc, rec, start, nil); !errors.Is(err, errShareAck) {
		t.Errorf("a failed acknowledgement: %v", err)
	}
}

// An unsupported row says so in the table, and rounds of it fold into one
// unsupported row, neither an error nor a row of zeros.
func TestUnsupportedRowInReport(t *testing.T) {
	why := "unsupported: the server does not advertise ShareFetch (ApiVersions key 78)"
	rounds := []Result{
		{System: "kgateway", Workload: "11 share 1p×1", Unsupported: why},
		{System: "kgateway", Workload: "11 share 1p×1", Round: 1, Unsupported: why},
	}
	sum := summarize([]string{"kgateway"}, rounds)
	if len(sum) != 1 || sum[0].Unsupported != why || sum[0].Error != "" || strings.Contains(sum[0].Notes, "rounds") {
		t.Fatalf("summary %+v", sum)
	}
	var sb strings.Builder
	writeTable(&sb, sum)
	if !strings.Contains(sb.String(), "| kgateway | 11 share 1p×1 | unsupported | unsupported | – | – | – | "+why+" |") {
		t.Errorf("table:\n%s", sb.String())
	}
}

// TestShareRowTimeoutLeavesTheNextRows: a row whose records never come
// (an in-process kfake answers its group's share fetches with nothing)
// fails after its share of --workload-timeout, with how far it got, and
// the next row is still measured.
func TestShareRowTimeoutLeavesTheNextRows(t *testing.T) {
	b, c := inProcessKfake(t, []string{"--share-records", "20", "--share-members", "1", "--share-partitions", "2",
		"--workload-timeout", "6s"})
	c.ControlKey(int16(kmsg.ShareFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.ShareFetchRequest)
		if r.GroupID == nil || !strings.HasPrefix(*r.GroupID, "kgbench-w11-0-") {
			return nil, nil, false
		}
		return r.ResponseKind(), nil, true // nothing, ever
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	rows := b.runWorkload(ctx, workloadShare)
	if !strings.Contains(rows[0].Error, "0 of 20 records accepted") || !strings.Contains(rows[0].Error, "deadline exceeded") {
		t.Errorf("starved row: %+v", rows[0])
	}
	if rows[1].Error != "" || rows[1].Records != 20 {
		t.Errorf("the next row: %+v", rows[1])
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %s", took)
	}
}

// Only Apache Kafka has a share-state coordinator to warm: kgateway
// answers a share key COORDINATOR_NOT_AVAILABLE for good, so warming it
// there failed every row of workload 11 after the warm-up bound.
func TestShareStateCoordinatorWarmedOnKafkaOnly(t *testing.T) {
	for sys, want := range map[string]bool{"kafka": true, "kafka-fsync": true, "kgateway": false, "kfake": false, "kfake-durable": false} {
		if got := hasShareStateTopic(sys); got != want {
			t.Errorf("hasShareStateTopic(%q) = %v, want %v", sys, got, want)
		}
	}
}
