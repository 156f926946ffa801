// Package member encodes the members of redcheck's indexes and the fields
// of its values hashes (docs/storage-format.md): storage internals shared by
// the saver and its tests, kept out of the public keys package.
package member

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/internal/keys"
)

// Sep separates the parts of an index member (checkpoint ID, encoded thread,
// encoded namespace, generation). It sorts before every byte an ID may hold,
// so members sort by ID first.
const Sep = "\x00"

// Blob is the field of a channel value in the Blobs hash:
// len(channel) ":" channel version. The length makes it injective.
func Blob(channel, version string) string {
	return strconv.Itoa(len(channel)) + ":" + channel + version
}

// Of is an entry of the All and Run indexes: id \0 Encode(thread) \0
// Encode(ns) \0 generation.
func Of(id, threadID, ns, gen string) string {
	return id + Sep + keys.Encode(threadID) + Sep + keys.Encode(ns) + Sep + gen
}

// Parse reverses Of.
func Parse(m string) (id, threadID, ns, gen string, err error) {
	parts := strings.Split(m, Sep)
	if len(parts) != 4 {
		return "", "", "", "", fmt.Errorf("%w: index member %q", keys.ErrMalformed, m)
	}
	if keys.ValidateID(parts[0]) != nil {
		return "", "", "", "", fmt.Errorf("%w: index member id %q", keys.ErrMalformed, parts[0])
	}
	if keys.ValidateGen(parts[3]) != nil {
		return "", "", "", "", fmt.Errorf("%w: index member generation %q", keys.ErrMalformed, parts[3])
	}
	if threadID, err = keys.Decode(parts[1]); err != nil {
		return "", "", "", "", err
	}
	if ns, err = keys.Decode(parts[2]); err != nil {
		return "", "", "", "", err
	}
	return parts[0], threadID, ns, parts[3], nil
}
