package explain

import (
	"errors"
	"fmt"
	"sort"

	"github.com/kgateway/kgateway/resolver"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// Offset is an offset in a partition.
type Offset = resolver.Offset

// Limits are the limits a plan is computed under.
type Limits struct {
	// PartitionMaxBytes is the partition's byte budget.
	PartitionMaxBytes int
	// MinOne returns the first batch whole even past the budget (KIP-74;
	// true for the first partition of a fetch).
	MinOne bool
}

// DefaultLimits are the Java client's and librdkafka's defaults
// (max.partition.fetch.bytes 1 MiB) for a single-partition fetch.
var DefaultLimits = Limits{PartitionMaxBytes: 1 << 20, MinOne: true}

// Entry is one entry of a read plan; Err is set when step 5 would fail
// it closed (the fetch then returns KAFKA_STORAGE_ERROR).
type Entry struct {
	storage.EntryHeader
	Err error
	// Object is the object an offloaded ledger's entry is read from (""
	// for a local one). Explain writes nothing, so it takes no pin and
	// reads no object: such an entry is planned, not checked.
	Object string
}

// Candidate is one candidate target of the ledger holding the fetch
// offset (ledger "targetOf"): its local segment file, or an object of
// the object tier with the pins recorded on it.
type Candidate struct {
	Kind   string // "local" or "object"
	Object *tier.Object
	Pins   []tier.Pin
	Chosen bool   // the target a fetch reads (local first, then a published object)
	Note   string // why a candidate is not usable
}

// Plan is the read plan of one fetch (steps 1–6).
type Plan struct {
	// Step 1: the binding.
	Topic     string
	TopicID   resolver.TopicID
	Partition int32
	Log       storage.LogID
	// Step 2: the snapshot.
	LogStart, HighWatermark Offset
	Ledgers                 []storage.LedgerInfo
	// Offset is the fetch offset; Outcome says which rule applies (the log start check,
	// the empty read at the end, the fresh end check or a read).
	Offset  Offset
	Outcome string
	Err     error // resolver.ErrOffsetOutOfRange for the log start check and the fresh end check
	// Step 4: the floor lookup (nil unless a read happens), and the
	// candidates of its ledger with the chosen target.
	Floor      *storage.EntryHeader
	Candidates []Candidate
	// Steps 5–6: what the fetch returns, and its bytes.
	Entries []Entry
	Bytes   int
}

// Fetch computes the plan of a fetch at (topic, partition, offset) from
// the view. Against a running server the view may lag the index by a few
// unflushed commits (storage/inspect.go); the plan is then the plan of
// that (slightly older) snapshot.
func Fetch(ro *storage.ReadOnly, topic string, partition int32, offset Offset, lim Limits) (Plan, error) {
	p := Plan{Topic: topic, Partition: partition, Offset: offset}
	bs, err := resolver.ReadBindings(ro)
	if err != nil {
		return p, err
	}
	i := sort.Search(len(bs), func(i int) bool { return bs[i].Name >= topic })
	if i == len(bs) || bs[i].Name != topic || partition < 0 || partition >= bs[i].Partitions {
		return p, fmt.Errorf("%w: %s/%d", resolver.ErrUnknownTopic, topic, partition)
	}
	p.TopicID, p.Log = bs[i].ID, bs[i].Logs[partition]
	info, err := ro.Info(p.Log)
	if err != nil {
		return p, fmt.Errorf("%w: log info: %w", resolver.ErrStorage, err)
	}
	p.LogStart, p.HighWatermark, p.Ledgers = info.Start, info.End, info.Ledgers
	switch {
	case offset < info.Start:
		p.Outcome = "the log start check: below the log start (trimmed): OFFSET_OUT_OF_RANGE"
		p.Err = resolver.ErrOffsetOutOfRange
		return p, nil
	case offset == info.End:
		p.Outcome = "the empty read at the end: at the high watermark: empty result (a long poll waits)"
		return p, nil
	case offset > info.End:
		p.Outcome = "the fresh end check: beyond the high watermark: OFFSET_OUT_OF_RANGE"
		p.Err = resolver.ErrOffsetOutOfRange
		return p, nil
	}
	p.Outcome = "read"
	objs, err := tier.ListObjects(ro.ScanMeta)
	if err != nil {
		return p, fmt.Errorf("%w: object metadata: %w", resolver.ErrStorage, err)
	}
	if err := planEntries(ro, &p, info.End, lim, objs); err != nil {
		return p, err
	}
	if p.Floor != nil {
		pins, err := tier.ListPins(ro.ScanMeta)
		if err != nil {
			return p, fmt.Errorf("%w: object pins: %w", resolver.ErrStorage, err)
		}
		p.Candidates = candidatesOf(p, objs, pins)
	}
	return p, nil
}

// candidatesOf lists the candidates of the ledger holding the floor
// entry, as the ledger's read would, and marks the chosen one.
func candidatesOf(p Plan, objs []tier.Object, pins []tier.Pin) []Candidate {
	var out []Candidate
	led := p.Floor.Ledger
	chosen := false
	for _, li := range p.Ledgers {
		if li.ID == led && !li.Offloaded {
			out = append(out, Candidate{Kind: "local", Chosen: true})
			chosen = true
		}
	}
	for i := range objs {
		o := &objs[i]
		if o.Log != p.Log || o.Ledger != led {
			continue
		}
		c := Candidate{Kind: "object", Object: o}
		for _, pin := range pins {
			if pin.Key == o.Key {
				c.Pins = append(c.Pins, pin)
			}
		}
		if o.State != tier.Published {
			c.Note = "not published: never read"
		} else if !chosen {
			c.Chosen, chosen = true, true
		}
		out = append(out, c)
	}
	return out
}

// objectOf is the object an entry of an offloaded ledger is read from.
func objectOf(objs []tier.Object, log storage.LogID, led storage.LedgerID) string {
	for _, o := range objs {
		if o.Log == log && o.Ledger == led && o.State == tier.Published {
			return o.Key
		}
	}
	return ""
}

// planEntries is the resolver's read (FetchEntries, ValidateStored) and its
// limits (the byte budget, KIP-74's first batch whole) over the view.
func planEntries(ro *storage.ReadOnly, p *Plan, end Offset, lim Limits, objs []tier.Object) error {
	offloaded := map[storage.LedgerID]bool{}
	for _, li := range p.Ledgers {
		offloaded[li.ID] = li.Offloaded
	}
	maxEntries := resolver.FetchEntries(lim.PartitionMaxBytes)
	return ro.ScanEntries(p.Log, p.Offset, func(h storage.EntryHeader) (bool, error) {
		if p.Floor == nil {
			f := h
			p.Floor = &f
		}
		i := len(p.Entries)
		if h.Offset >= end || i >= maxEntries {
			return false, nil // D5 / the entry budget
		}
		if p.Bytes+int(h.Size) > lim.PartitionMaxBytes && (i > 0 || !lim.MinOne) {
			return false, nil // the byte budget (KIP-74: the first is whole)
		}
		if offloaded[h.Ledger] {
			pe := Entry{EntryHeader: h, Object: objectOf(objs, p.Log, h.Ledger)}
			if pe.Object == "" {
				pe.Err = fmt.Errorf("%w: offloaded and no published object", storage.ErrRemoved)
			}
			p.Entries = append(p.Entries, pe)
			p.Bytes += int(h.Size)
			return pe.Err == nil, nil
		}
		e, err := ro.ReadEntry(p.Log, h)
		if err == nil {
			err = resolver.ValidateStored(e)
		}
		p.Entries = append(p.Entries, Entry{EntryHeader: h, Err: err})
		p.Bytes += int(h.Size)
		return err == nil, nil // a bad entry fails the partition closed
	})
}

// Failed reports whether the plan's fetch fails closed (step 5).
func (p Plan) Failed() error {
	for _, e := range p.Entries {
		if e.Err != nil {
			return errors.Join(resolver.ErrStorage, e.Err)
		}
	}
	return nil
}
