package kafka

// A fetch response on its way to the connection writer: its record
// batches are markers into a kafka/fetchwire.Batches, which the writer
// splits the encoding at (appendSegments).

import (
	"github.com/kgateway/kgateway/kafka/connection"
	"github.com/kgateway/kgateway/kafka/fetchwire"
	"github.com/kgateway/kgateway/kafka/sendfile"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newWire is a response's batch holder: its reads leased, keeping pins
// when conn sends batches with sendfile (kafka/connection: Conn.Sendfile).
func newWire(conn *conn) *fetchwire.Batches {
	if conn == nil {
		return fetchwire.New(nil)
	}
	return fetchwire.New(resolver.NewLease(conn.sendfile()))
}

// batchResponse is a FetchResponse whose record batches are markers into
// wire; the connection writer writes it with appendSegments.
type batchResponse struct {
	*kmsg.FetchResponse
	wire *fetchwire.Batches
}

// shareResponse is a ShareFetchResponse whose records are markers into
// wire (kafka/share Wire); every ShareFetch version is flexible.
type shareResponse struct {
	*kmsg.ShareFetchResponse
	wire *fetchwire.Batches
}

// fetchRecordBytes returns the record batch bytes per topic of a fetch
// response, markers resolved (for observers); ok is false for any other
// response.
func fetchRecordBytes(resp kmsg.Response) (perTopic map[string]int, ok bool) {
	switch r := resp.(type) {
	case *batchResponse:
		return fetchwire.RecordBytes(r.FetchResponse, r.wire), true
	case *kmsg.FetchResponse:
		return fetchwire.RecordBytes(r, nil), true
	}
	return nil, false
}

// appendSegments frames the response into dst (header and every field but
// the record batches) and returns it, the pieces to write in order (a
// batch read from a file names its range there), and their total size.
func (br *batchResponse) appendSegments(dst []byte, sl *connection.Slot) ([]byte, []sendfile.Piece, int) {
	enc := appendResponse(dst, sl)
	pieces, total := br.wire.Segments(enc, sl.Version >= 12)
	return enc, pieces, total
}
