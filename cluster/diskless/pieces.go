package diskless

import "crypto/sha256"

// cutPieces cuts one partition's batches of a commit, laid out back to
// back from byte pos of the object, into pieces of at most limit bytes
// (commit ranges in pieces): runs of whole batches, a batch larger than
// limit alone in its piece. None when they make one piece. The pieces'
// SHA-256s are left to sumPieces.
func cutPieces(bs []Batch, pos, limit int64) []Piece {
	var out []Piece
	for _, b := range bs {
		n, end := int64(len(b.Data)), b.Base+int64(b.Records)
		if k := len(out) - 1; k >= 0 && out[k].Len+n <= limit {
			out[k].End, out[k].Len, out[k].MaxTime = end, out[k].Len+n, max(out[k].MaxTime, b.MaxTime)
		} else {
			out = append(out, Piece{Base: b.Base, End: end, Pos: pos, Len: n, MaxTime: b.MaxTime})
		}
		pos += n
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// sumPieces sets the SHA-256 of each of parts' pieces from data, the
// object's bytes, in a goroutine of its own when there is any: the
// channel is closed once they are set.
func sumPieces(parts []part, data []byte) <-chan struct{} {
	done := make(chan struct{})
	var cut []part
	for _, p := range parts {
		if len(p.r.Pieces) > 0 {
			cut = append(cut, p)
		}
	}
	if len(cut) == 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		for _, p := range cut {
			for i := range p.r.Pieces {
				q := &p.r.Pieces[i]
				q.SHA256 = sha256.Sum256(data[q.Pos : q.Pos+q.Len])
			}
		}
	}()
	return done
}
