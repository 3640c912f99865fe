package node

import "github.com/kgateway/kgateway/cluster/owner"

// ServingKey is this node's ownership of pkey while it serves it (rebuild before serving: rebuilt,
// or restored for the coordinator role, and not being released): the guard of
// the share-partition state writes a leader makes (fenced share-state writes).
func (n *Node) ServingKey(pkey string) (owner.Ownership, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h := n.mu.held[pkey]
	if h == nil || !h.serving {
		return owner.Ownership{}, false
	}
	return h.o, true
}
