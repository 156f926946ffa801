package inspect

import (
	"encoding/hex"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/oklog/ulid/v2"
)

// IDTime returns the creation time an ID holds: a ULID's milliseconds, or
// the timestamp of a UUID of version 6 (LangGraph's uuid6), 7 or 1. ok is
// false for any other ID.
func IDTime(id string) (time.Time, bool) {
	if len(id) == ulid.EncodedSize {
		if u, err := ulid.ParseStrict(id); err == nil {
			return ulid.Time(u.Time()).UTC(), true
		}
		return time.Time{}, false
	}
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return time.Time{}, false
	}
	raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(raw) != 16 {
		return time.Time{}, false
	}
	be := func(b []byte) uint64 {
		var n uint64
		for _, c := range b {
			n = n<<8 | uint64(c)
		}
		return n
	}
	// 100-ns intervals from the Gregorian epoch (1582-10-15) to Unix's.
	const gregorian = 0x01B21DD213814000
	fromGregorian := func(ticks uint64) (time.Time, bool) {
		if ticks < gregorian {
			return time.Time{}, false
		}
		d := ticks - gregorian
		return time.Unix(int64(d/1e7), int64(d%1e7)*100).UTC(), true
	}
	switch raw[6] >> 4 {
	case 6:
		return fromGregorian(be(raw[0:6])<<12 | be(raw[6:8])&0x0fff)
	case 7:
		return time.UnixMilli(int64(be(raw[0:6]))).UTC(), true
	case 1:
		return fromGregorian((be(raw[6:8])&0x0fff)<<48 | be(raw[4:6])<<32 | be(raw[0:4]))
	}
	return time.Time{}, false
}

// CheckpointTime returns the time of a checkpoint: its ID's when the ID is
// time-ordered, else its ts field's. ok is false when neither tells.
func CheckpointTime(cp checkpoint.Checkpoint) (time.Time, bool) {
	if t, ok := IDTime(cp.ID); ok {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, cp.TS); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}
