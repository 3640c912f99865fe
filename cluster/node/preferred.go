package node

// Preferred is the node among live that placement prefers for pkey (rendezvous placement),
// -1 with none: what tests compare a cluster's leaders with.
func Preferred(pkey string, live []int32) int32 { return preferred(pkey, live) }
