package server

// The read-only operations on a data directory behind cmd/kgateway's
// inspect, explain and verify. They open it read-only
// (storage.OpenReadOnly, offsets.OpenReadOnly): they work on a stopped
// directory and beside a running server, whose view may lag by the index
// commits pebble has not yet written out (storage/inspect.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/resolver/explain"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/objstore"
	"github.com/kgateway/kgateway/tier"
)

// Inspect writes what dataDir holds to w: every topic with its
// partitions' logs and ledgers, then the groups with their members and
// committed offsets, then the transactions with their pending offsets.
func Inspect(dataDir string, w io.Writer) error {
	ro, err := storage.OpenReadOnly(dataDir)
	if err != nil {
		return err
	}
	defer ro.Close()
	bindings, err := resolver.ReadBindings(ro)
	if err != nil {
		return err
	}
	logs, err := ro.Logs()
	if err != nil {
		return err
	}
	byLog := make(map[storage.LogID]storage.LogInfo, len(logs))
	for _, li := range logs {
		byLog[li.ID] = li
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, b := range bindings {
		fmt.Fprintf(tw, "topic %s\tid %v\tpartitions %d\tconfigs %v\n", b.Name, b.ID, b.Partitions, b.Configs)
		for i, id := range b.Logs {
			li := byLog[id]
			fmt.Fprintf(tw, "  partition %d\t%v\tlog-start %d\thigh-watermark %d\tstate %v\n", i, id, li.Start, li.End, logState(li.State))
			for _, led := range li.Ledgers {
				fmt.Fprintf(tw, "    %v\tfirst-offset %d\tentries %d\tbytes %d\tsealed %v\tcreated %s\n",
					led.ID, led.FirstOffset, led.Entries, led.Bytes, led.Sealed, led.Created.UTC().Format("2006-01-02T15:04:05Z"))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return inspectGroups(filepath.Join(dataDir, "offsets"), w)
}

func logState(s storage.LogState) string {
	if s == storage.Fenced {
		return "FENCED"
	}
	return "NORMAL"
}

func inspectGroups(dir string, stdout io.Writer) error {
	offs, err := offsets.OpenReadOnly(dir)
	if err != nil {
		fmt.Fprintf(stdout, "groups: none (%v)\n", err)
		return nil
	}
	defer offs.Close()
	groups, err := offs.Groups()
	if err != nil {
		return err
	}
	withMembers, err := offs.ClassicGroups()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, g := range groups {
		fmt.Fprintf(tw, "group %s\tstate %v\tprotocol %q/%q\tgeneration %d\n", g.ID, g.State, g.ProtocolType, g.Protocol, g.Generation)
		if cg, ok := withMembers[g.ID]; ok {
			printMembers(tw, cg)
		}
		commits, err := offs.GroupOffsets(g.ID)
		if err != nil {
			return err
		}
		for _, c := range commits {
			fmt.Fprintf(tw, "  %s/%d\toffset %d\tleader-epoch %d\tcommitted %s\n", c.Topic, c.Partition, c.Offset, c.LeaderEpoch,
				c.CommitTime.UTC().Format("2006-01-02T15:04:05Z"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return inspectTxns(offs, stdout)
}

// inspectTxns lists the transaction coordinator's state (offsets O4)
// and each transaction's pending offsets (O5).
func inspectTxns(offs *offsets.Store, stdout io.Writer) error {
	txns, err := offs.Txns()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, x := range txns {
		fmt.Fprintf(tw, "transaction %s\tstate %v\tproducer %d epoch %d\ttimeout %v\tupdated %s\n", x.ID, x.State,
			x.ProducerID, x.Epoch, x.Timeout, x.UpdateTime.UTC().Format("2006-01-02T15:04:05Z"))
		for _, tp := range x.Partitions {
			fmt.Fprintf(tw, "  partition %s\n", tp)
		}
		for _, g := range x.Groups {
			pending, err := offs.Pending(x.ID, g)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "  group %s\n", g)
			for _, c := range pending {
				fmt.Fprintf(tw, "    %s/%d\tpending offset %d\n", c.Topic, c.Partition, c.Offset)
			}
		}
	}
	return tw.Flush()
}

// printMembers lists a group's persisted membership: what a restart
// resumes (classic membership restored at restart), which may be a generation behind the group's record
// while a rebalance is in progress.
func printMembers(w io.Writer, cg offsets.ClassicGroup) {
	fmt.Fprintf(w, "  members at generation %d\tleader %s\n", cg.Generation, cg.Leader)
	for _, m := range cg.Members {
		inst := "-"
		if m.InstanceID != nil {
			inst = *m.InstanceID
		}
		fmt.Fprintf(w, "  member %s\tinstance %s\tclient %s %s\tsession %v\tassignment %d bytes\n",
			m.ID, inst, m.ClientID, m.ClientHost, m.SessionTimeout, len(m.Assignment))
	}
}

// Explain writes to w how a fetch of topic's partition at offset would be
// served from dataDir (package explain): the binding, the snapshot, the
// floor entry, the candidates and the batches it would return. It fails
// when the plan found a problem.
func Explain(dataDir, topic string, partition int32, offset int64, w io.Writer) error {
	ro, err := storage.OpenReadOnly(dataDir)
	if err != nil {
		return err
	}
	defer ro.Close()
	p, err := explain.Fetch(ro, topic, partition, storage.Offset(offset), explain.DefaultLimits)
	if err != nil {
		return err
	}
	printPlan(w, p)
	return p.Failed()
}

func printPlan(w io.Writer, p explain.Plan) {
	fmt.Fprintf(w, "binding:  topic %s (id %v) partition %d -> %v\n", p.Topic, p.TopicID, p.Partition, p.Log)
	fmt.Fprintf(w, "snapshot: log-start %d, high-watermark %d, %d ledgers\n", p.LogStart, p.HighWatermark, len(p.Ledgers))
	for _, l := range p.Ledgers {
		fmt.Fprintf(w, "          %v first-offset %d entries %d bytes %d sealed %v\n", l.ID, l.FirstOffset, l.Entries, l.Bytes, l.Sealed)
	}
	fmt.Fprintf(w, "fetch:    offset %d, partition max bytes %d (first batch whole: KIP-74)\n", p.Offset, explain.DefaultLimits.PartitionMaxBytes)
	fmt.Fprintf(w, "outcome:  %s\n", p.Outcome)
	if p.Floor != nil {
		fmt.Fprintf(w, "position: floor(%d) = entry at offset %d -> %v:%v (file pos %d)\n", p.Offset, p.Floor.Offset, p.Floor.Ledger, p.Floor.Entry, p.Floor.Pos)
	}
	printCandidates(w, p.Candidates)
	if len(p.Entries) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "offset\trecords\tsize\tledger:entry\tpos\tcheck")
	for _, e := range p.Entries {
		check := "ok"
		if e.Err != nil {
			check = e.Err.Error()
		}
		if e.Object != "" && e.Err == nil {
			check = "in object (explain reads no object)"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d:%d\t%d\t%s\n", e.Offset, e.Records, e.Size, e.Ledger, e.Entry, e.Pos, check)
	}
	tw.Flush()
	fmt.Fprintf(w, "returns %d batches, %d bytes\n", len(p.Entries), p.Bytes)
}

// printCandidates prints the read's candidates for the floor entry's
// ledger: the chosen target, and for an object its record and pins (a
// fetch pins the chosen object before it reads, tier B5; explain
// itself writes nothing, so it pins nothing).
func printCandidates(w io.Writer, cs []explain.Candidate) {
	for _, c := range cs {
		mark := " "
		if c.Chosen {
			mark = "*"
		}
		if c.Object == nil {
			fmt.Fprintf(w, "target: %s local segment file\n", mark)
			continue
		}
		o := c.Object
		fmt.Fprintf(w, "target: %s object %s state %s publication %s version %d range [%d,%d) sha256 %.12s/%.12s\n",
			mark, o.Key, o.State, o.PubID, o.Version, o.FirstOffset, o.EndOffset, o.FramesSHA, o.IndexSHA)
		if c.Note != "" {
			fmt.Fprintf(w, "          %s\n", c.Note)
		}
		if c.Chosen {
			fmt.Fprintln(w, "          a fetch pins it (a lease record with an expiry), revalidates the record, then reads")
		}
		for _, p := range c.Pins {
			fmt.Fprintf(w, "          pin %s by %s expires %s\n", p.ID, p.Owner, time.Unix(0, p.Expires).UTC().Format(time.RFC3339))
		}
	}
}

// Verify checks every entry of dataDir against its CRC and index and,
// with an object store (objectStoreURL, "" for none), every published
// object against its record; it reports to stdout, progress to stderr,
// and fails when anything is corrupt.
func Verify(dataDir, objectStoreURL string, stdout, stderr io.Writer) error {
	ro, err := storage.OpenReadOnly(dataDir)
	if err != nil {
		return err
	}
	defer ro.Close()
	rep, err := ro.Verify(func(done, total int64) {
		pct := 100.0
		if total > 0 {
			pct = 100 * float64(done) / float64(total)
		}
		fmt.Fprintf(stderr, "verify: %d / %d bytes (%.0f%%)\n", done, total, pct)
	})
	for _, n := range rep.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(stdout, "CORRUPT:", p)
	}
	fmt.Fprintf(stdout, "checked %d logs, %d ledgers, %d entries, %d bytes: %d problems\n",
		rep.Logs, rep.Ledgers, rep.Entries, rep.Bytes, len(rep.Problems))
	return errors.Join(err, verifyObjects(ro, objectStoreURL, stdout))
}

// verifyObjects checks every published object against its record (SHA-256
// of frames and index, footer, index, every frame) when an object store
// is configured.
func verifyObjects(ro *storage.ReadOnly, url string, stdout io.Writer) error {
	if url == "" {
		return nil
	}
	objs, err := tier.ListObjects(ro.ScanMeta)
	if err != nil {
		return err
	}
	ctx := context.Background()
	b, err := objstore.Open(ctx, url)
	if err != nil {
		return fmt.Errorf("open object store: %w", err)
	}
	defer b.Close()
	rep := tier.VerifyObjects(ctx, tier.BlobBucket(b), objs)
	for _, p := range rep.Problems {
		fmt.Fprintln(stdout, "CORRUPT OBJECT:", p)
	}
	fmt.Fprintf(stdout, "checked %d objects, %d bytes: %d problems\n", rep.Objects, rep.Bytes, len(rep.Problems))
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%d corrupt objects", len(rep.Problems))
	}
	return nil
}
