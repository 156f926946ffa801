package keys

import (
	"fmt"

	"github.com/graphstate/redcheck/checkpoint"
)

// Limits on caller strings. Longer values are refused rather than truncated.
const (
	MaxThreadIDLen     = 4096
	MaxNamespaceLen    = 4096
	MaxCheckpointIDLen = 128
	MaxRunIDLen        = 1024
)

// ErrInvalid is wrapped by the Validate functions. It wraps
// checkpoint.ErrInvalidConfig: one fault, one sentinel, whichever package
// (saver, stream, store) reports a name it refuses.
var ErrInvalid = fmt.Errorf("keys: invalid name: %w", checkpoint.ErrInvalidConfig)

// ValidateThreadID accepts any non-empty thread ID of at most MaxThreadIDLen
// bytes. Every byte is allowed: Encode makes it safe.
func ValidateThreadID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty thread id", ErrInvalid)
	case len(id) > MaxThreadIDLen:
		return fmt.Errorf("%w: thread id of %d bytes (max %d)", ErrInvalid, len(id), MaxThreadIDLen)
	}
	return nil
}

// ValidateNamespace accepts any namespace ("" is the root graph) of at most
// MaxNamespaceLen bytes.
func ValidateNamespace(ns string) error {
	if len(ns) > MaxNamespaceLen {
		return fmt.Errorf("%w: namespace of %d bytes (max %d)", ErrInvalid, len(ns), MaxNamespaceLen)
	}
	return nil
}

// ValidateRunID accepts run IDs of 1 to MaxRunIDLen bytes.
func ValidateRunID(id string) error {
	if id == "" || len(id) > MaxRunIDLen {
		return fmt.Errorf("%w: run id of %d bytes (1 to %d)", ErrInvalid, len(id), MaxRunIDLen)
	}
	return nil
}

// ValidateID accepts checkpoint IDs of 1 to MaxCheckpointIDLen bytes of
// printable ASCII (0x21 to 0x7e) other than % : { } * ? [ ] and \. UUIDs
// (v1, v6, v7), ULIDs and most other schemes qualify. Such an ID needs no
// encoding and sorts in the index exactly by its bytes.
func ValidateID(id string) error {
	if id == "" || len(id) > MaxCheckpointIDLen {
		return fmt.Errorf("%w: checkpoint id of %d bytes (1 to %d)", ErrInvalid, len(id), MaxCheckpointIDLen)
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return fmt.Errorf("%w: checkpoint id %q has byte %q", ErrInvalid, id, id[i])
		}
	}
	return nil
}

func idByte(b byte) bool {
	if b < 0x21 || b > 0x7e {
		return false
	}
	switch b {
	case '%', ':', '{', '}', '*', '?', '[', ']', '\\':
		return false
	}
	return true
}
