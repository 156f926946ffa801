package checkpoint

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

var idGen struct {
	sync.Mutex
	entropy *ulid.MonotonicEntropy
	lastMs  uint64
}

// NewID returns a new checkpoint ID: a ULID (26 characters of Crockford
// base32, uppercase) whose first 48 bits are the Unix time in milliseconds
// and whose remaining 80 bits come from crypto/rand.
//
// IDs are ordered by their bytes (the string order of the ULIDs, which is
// also their time order). Within one process every call returns an ID
// strictly greater than the one before, even within the same millisecond (the
// random part is then incremented, as ulid.Monotonic does) and even if the
// wall clock steps back (the last timestamp is kept until the clock catches
// up). NewID is safe for concurrent use.
//
// Savers order the checkpoints of a thread by ID, so one thread should not
// mix ID schemes (ULIDs with LangGraph's uuid6 or UUIDv7, say): IDs of
// different schemes do not compare by creation time.
func NewID() string {
	idGen.Lock()
	defer idGen.Unlock()
	if idGen.entropy == nil {
		idGen.entropy = ulid.Monotonic(rand.Reader, 0)
	}
	ms := max(ulid.Timestamp(time.Now()), idGen.lastMs)
	for {
		id, err := ulid.New(ms, idGen.entropy)
		if err == nil {
			idGen.lastMs = ms
			return id.String()
		}
		if ms >= ulid.MaxTime() {
			// Only a wall clock past the year 10889 gets here.
			panic("checkpoint: NewID: " + err.Error())
		}
		// The random part overflowed within this millisecond: move to the
		// next millisecond, which starts from fresh randomness and still
		// sorts after.
		ms++
	}
}
