package inspect

import (
	"maps"
	"reflect"
	"slices"
)

// Change kinds of a ChannelChange.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// ChannelChange is one channel that differs between two states.
type ChannelChange struct {
	Channel string `json:"channel"`
	Kind    string `json:"kind"` // Added, Removed or Changed
	Old     any    `json:"old"`  // nil when added
	New     any    `json:"new"`  // nil when removed
	// Members, for a changed channel whose old and new values are both
	// objects, are the operations that turn the old object into the new
	// one, their paths within the channel; nil otherwise.
	Members []PatchOp `json:"members,omitempty"`
}

// Diff compares two states' channel values (Plain data) and returns the
// channels that differ, in channel order, and the number that are equal.
func Diff(from, to map[string]any) (changes []ChannelChange, same int) {
	names := map[string]bool{}
	for k := range from {
		names[k] = true
	}
	for k := range to {
		names[k] = true
	}
	changes = []ChannelChange{}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		old, inFrom := from[k]
		cur, inTo := to[k]
		switch {
		case inFrom && inTo && reflect.DeepEqual(old, cur):
			same++
		case !inFrom:
			changes = append(changes, ChannelChange{Channel: k, Kind: Added, New: cur})
		case !inTo:
			changes = append(changes, ChannelChange{Channel: k, Kind: Removed, Old: old})
		default:
			c := ChannelChange{Channel: k, Kind: Changed, Old: old, New: cur}
			_, objOld := old.(map[string]any)
			_, objCur := cur.(map[string]any)
			if objOld && objCur {
				c.Members = []PatchOp{}
				JSONPatch("", old, cur, &c.Members)
			}
			changes = append(changes, c)
		}
	}
	return changes, same
}

// Patch returns the RFC 6902 JSON Patch that turns from into to, never nil.
func Patch(from, to any) []PatchOp {
	ops := []PatchOp{}
	JSONPatch("", from, to, &ops)
	return ops
}
