package fetch

import (
	"testing"

	"github.com/kgateway/kgateway/kafka/fetchsession"
)

// namesHost answers TopicByID from a map and counts the lookups; the
// rest of Host is not used by sessionItems.
type namesHost struct {
	Host
	names   map[[16]byte]string
	lookups int
}

func (h *namesHost) TopicByID(id [16]byte) (string, bool) {
	h.lookups++
	name, ok := h.names[id]
	return name, ok
}

// TestSessionItemsNamedPerTopic: every item of a session keyed by topic
// id carries its own topic's name (an unknown id is UNKNOWN_TOPIC_ID),
// whatever order the topics come in, and a run of one topic's
// partitions is looked up once.
func TestSessionItemsNamedPerTopic(t *testing.T) {
	a, b, gone := [16]byte{1}, [16]byte{2}, [16]byte{3}
	h := &namesHost{names: map[[16]byte]string{a: "a", b: "b"}}
	f := &Fetcher{Host: h}
	var order []*fetchsession.Part
	for _, k := range []struct {
		id [16]byte
		p  int32
	}{{a, 0}, {a, 1}, {a, 2}, {b, 0}, {gone, 0}, {a, 3}, {b, 1}, {b, 2}} {
		order = append(order, &fetchsession.Part{Key: fetchsession.KeyOf(true, "", k.id, k.p)})
	}
	items := f.sessionItems(true, order, make([]Item, len(order)))
	want := []string{"a", "a", "a", "b", "", "a", "b", "b"}
	for i, it := range items {
		if it.Name != want[i] || it.ErrID != (want[i] == "") || it.ID != order[i].Key.ID {
			t.Errorf("item %d: name %q, errID %v, id %v; want %q", i, it.Name, it.ErrID, it.ID, want[i])
		}
	}
	if h.lookups != 5 {
		t.Errorf("%d lookups for 5 runs of one topic", h.lookups)
	}
}
