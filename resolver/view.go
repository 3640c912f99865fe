package resolver

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/topicconfig"
)

// The TOPIC_COMPACTED view (doc.go "Compacted view", the compacted view rules): a
// delete-policy topic with kgateway.compacted.view.enable=true gets a
// compacted materialization of each partition beside its full log,
// read through a read-only companion topic named <topic>.compacted.

const (
	// CompanionSuffix ends a companion topic's name: <topic>.compacted.
	CompanionSuffix = ".compacted"
	// viewLogBit marks a view's storage log: the source log's id with the
	// top bit set, so it needs no allocation and no binding of its own
	// (topic log ids are a counter that never reaches it).
	viewLogBit = storage.LogID(1) << 63
)

// viewLogOf is the storage log of the view of source log l (the view log).
func viewLogOf(l storage.LogID) storage.LogID { return l | viewLogBit }

// CompanionName is the companion topic of topic (the companion topic).
func CompanionName(topic string) string { return topic + CompanionSuffix }

// companionID is a companion's topic id: derived from its source's, so
// it is stable across restarts and never a source's own (the companion topic).
func companionID(src TopicID) TopicID {
	h := sha256.Sum256(append(src[:], "kgateway compacted view"...))
	var id TopicID
	copy(id[:], h[:16])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// companionOf is the public description of t's companion (the companion topic): its own
// name and id, t's partition count, no explicit configs.
func companionOf(t *topic) Topic {
	return Topic{Name: CompanionName(t.name), ID: companionID(t.id), Partitions: int32(len(t.parts)), Configs: map[string]string{}, Companion: true}
}

// errReadOnly is the refusal of read-only companions of anything but reads on a companion.
func errReadOnly(name string) error {
	return fmt.Errorf("%w: %q is the read-only compacted view of %q", ErrInvalidTopic, name, strings.TrimSuffix(name, CompanionSuffix))
}

// syncViews makes every partition's view log agree with its topic's
// config (view removal): the ledger reads a view where it is on and one exists;
// where it is off the view log is removed, and so is every view log
// whose source log has no binding (a deleted topic; a crash between a
// change and this call). Open and every config change or deletion call
// it.
func syncViews(store *storage.Store, b *bindings) error {
	b.RLock()
	want := map[storage.LogID]*partition{}
	var off []*partition
	for _, t := range b.topics {
		for _, p := range t.parts {
			if topicconfig.ViewOn(t.configs) {
				want[viewLogOf(p.log)] = p
			} else {
				off = append(off, p)
			}
		}
	}
	b.RUnlock()
	for _, p := range off {
		if ml, _, err := p.ledgerAndSettings(); err == nil {
			ml.SetCompactedView(0, false) // before its log goes (view removal)
		}
	}
	exists := map[storage.LogID]bool{}
	var errs []error
	for _, l := range store.Logs() {
		if l&viewLogBit == 0 {
			continue
		}
		if _, ok := want[l]; ok {
			exists[l] = true
			continue
		}
		if err := store.DeleteLog(l); err != nil && !errors.Is(err, storage.ErrNoLog) {
			errs = append(errs, storageErr(fmt.Sprintf("delete view %s", l), err))
		}
	}
	for l, p := range want {
		if ml, _, err := p.ledgerAndSettings(); err == nil && exists[l] {
			ml.SetCompactedView(l, true)
		}
	}
	return errors.Join(errs...)
}

// CompanionSource returns the source topic of a companion name (the companion topic):
// false when name is not the companion of a topic with a view on (a
// topic of that name itself never is, no name collisions).
func (r *Resolver) CompanionSource(name string) (string, bool) { return r.mu.companionSource(name) }
