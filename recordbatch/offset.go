package recordbatch

import "github.com/kgateway/kgateway/storage"

// Offset is a Kafka offset, the storage layer's.
type Offset = storage.Offset
