package checkpoint

import (
	"slices"
	"time"
)

// LatestVersion is the checkpoint format version (Checkpoint.V) that Empty
// and Next write: the one of LangGraph's current checkpoints, where pending
// sends are regular writes (see MigratePendingSends for older ones).
const LatestVersion = 4

// Empty returns the checkpoint a thread starts from, as LangGraph's
// empty_checkpoint does: V is LatestVersion, ID a new NewID, TS the current
// UTC time in RFC 3339 with nanoseconds, and the maps are empty (not nil).
// Build the first checkpoint of a thread with Next(Empty(), input, ...).
func Empty() Checkpoint {
	return Checkpoint{
		V:               LatestVersion,
		ID:              NewID(),
		TS:              now(),
		ChannelValues:   map[string]any{},
		ChannelVersions: map[string]string{},
		VersionsSeen:    map[string]map[string]string{},
	}
}

// Next returns the checkpoint that follows prev once the channels of
// updates hold their new values, and the newVersions to pass to Saver.Put
// with it: what a graph runtime does between two super-steps (LangGraph's
// create_checkpoint, with the version bumps of its loop).
//
// The result has V = LatestVersion, a new ID (NewID) and TS (the current
// UTC time, RFC 3339 with nanoseconds). Its ChannelValues are prev's with
// updates applied; its ChannelVersions are prev's, where each channel of
// updates has the version nextVersion returns for its previous one ("" when
// it had none). newVersions holds exactly those new versions, so that Put
// writes the values of the changed channels only. UpdatedChannels lists the
// channels of updates, sorted. VersionsSeen is prev's: a runtime that tracks
// which versions each node has seen updates it on the result.
//
// Pass the saver's NextVersion as nextVersion (savers may have their own
// version scheme); nil uses the package's NextVersion. Next copies every map
// it returns and never modifies prev or updates; values themselves are not
// copied.
func Next(prev Checkpoint, updates map[string]any, nextVersion func(current string) string) (next Checkpoint, newVersions map[string]string) {
	if nextVersion == nil {
		nextVersion = NextVersion
	}
	next = Checkpoint{
		V:               LatestVersion,
		ID:              NewID(),
		TS:              now(),
		ChannelValues:   make(map[string]any, len(prev.ChannelValues)+len(updates)),
		ChannelVersions: make(map[string]string, len(prev.ChannelVersions)+len(updates)),
		VersionsSeen:    make(map[string]map[string]string, len(prev.VersionsSeen)),
		UpdatedChannels: make([]string, 0, len(updates)),
	}
	for ch, v := range prev.ChannelValues {
		next.ChannelValues[ch] = v
	}
	for ch, v := range prev.ChannelVersions {
		next.ChannelVersions[ch] = v
	}
	for node, seen := range prev.VersionsSeen {
		c := make(map[string]string, len(seen))
		for ch, v := range seen {
			c[ch] = v
		}
		next.VersionsSeen[node] = c
	}
	newVersions = make(map[string]string, len(updates))
	for ch, v := range updates {
		ver := nextVersion(prev.ChannelVersions[ch])
		next.ChannelValues[ch] = v
		next.ChannelVersions[ch] = ver
		newVersions[ch] = ver
		next.UpdatedChannels = append(next.UpdatedChannels, ch)
	}
	slices.Sort(next.UpdatedChannels)
	return next, newVersions
}

// now is the current time as Empty and Next write TS.
func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }
