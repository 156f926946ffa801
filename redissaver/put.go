package redissaver

import (
	"context"
	"encoding/json"
	mb "github.com/graphstate/redcheck/internal/member"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// Put stores cp in the thread and namespace of cfg, with cfg.CheckpointID as
// its parent ("" for a root checkpoint), and returns the Config of the stored
// checkpoint. It writes the values of the channels in newVersions only (a
// channel listed there but absent from cp.ChannelValues is stored as empty,
// and reads back absent); every channel version the checkpoint names reads
// back the value stored under that (channel, version) when it is read,
// whatever the order in which checkpoints were put. Metadata is stored
// verbatim, one canonical JSON field per key.
//
// Put is one round trip and one atomic unit (one script): the checkpoint,
// its values, the indexes, the thread registry and the thread's lease
// change together or not at all. Re-putting an existing ID with the same
// parent replaces its checkpoint and metadata and keeps its pending writes;
// a Put whose cfg.CheckpointID is cp.ID itself replaces that stored
// checkpoint in place, keeping its stored parent (LangGraph's runtime puts
// a loaded checkpoint again this way). A call re-sent by the client after a
// network error finds its own checkpoint and changes nothing; a Put whose
// reply was lost returns the error, and may have been stored: calling it
// again re-puts the same checkpoint.
//
// Errors, all before anything is written: checkpoint.ErrInvalidConfig for a
// missing or over-long thread ID or namespace or a malformed parent ID;
// checkpoint.ErrInvalidCheckpoint for a malformed checkpoint ID, a re-put
// that changes the parent, an in-place re-put of a checkpoint not stored, a
// newVersions entry that is not the checkpoint's version of that channel,
// a "step" that is not an integer, metadata that is not JSON or a value the
// serializer refuses; checkpoint.ErrDataLoss when the thread's head is
// missing while its registry entry says it lives, or its generation lacks an
// index; otherwise the Redis error, wrapped.
func (s *Saver) Put(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string) (_ checkpoint.Config, err error) {
	ctx, call := s.begin(ctx, opPut)
	defer func() { call.end(err) }()
	call.address(cfg.ThreadID, cfg.CheckpointNS, cp.ID)
	call.step(md)
	if err := validateAddress(cfg); err != nil {
		return checkpoint.Config{}, err
	}
	if cfg.CheckpointID != "" {
		if err := keys.ValidateID(cfg.CheckpointID); err != nil {
			return checkpoint.Config{}, invalidConfig("parent %v", err)
		}
	}
	if err := keys.ValidateID(cp.ID); err != nil {
		return checkpoint.Config{}, invalidCheckpoint("%v", err)
	}
	if err := validateVersions(cp, newVersions); err != nil {
		return checkpoint.Config{}, err
	}
	if err := validateStep(md); err != nil {
		return checkpoint.Config{}, err
	}
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	fields, runID, err := s.checkpointFields(cp, md)
	if err != nil {
		return checkpoint.Config{}, err
	}
	blobs, err := s.blobArgs(ctx, cfg, cp, newVersions)
	if err != nil {
		return checkpoint.Config{}, err
	}
	shard := s.layout.Shard(th)
	keyList := []string{
		s.layout.Head(th),
		s.layout.Threads(shard),
		s.layout.All(shard),
		s.layout.GC(shard),
		s.layout.Events(th),
		s.layout.Feed(shard),
	}
	if runID != "" {
		runKey := s.layout.Run(shard, runID)
		keyList = append(keyList, runKey)
		fields = append(fields, fieldRunKey, runKey)
	}
	event := s.eventSpec(ctx, s.checkpointEvent(cfg, cp, md, newVersions, blobs)...)
	args := make([]any, 0, 10+len(event)+len(fields)+len(blobs))
	args = append(args, s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), cp.ID, cfg.CheckpointID,
		keys.NewGen(), keys.NewGen(), s.opts.ttlMillis(), len(fields)/2, len(blobs)/2)
	args = append(args, event...)
	for _, f := range fields {
		args = append(args, f)
	}
	for _, b := range blobs {
		args = append(args, b)
	}
	if _, err := putReply(s.run(ctx, scriptrun.Put, keyList, args...)); err != nil {
		return checkpoint.Config{}, err
	}
	return checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: cp.ID}, nil
}

// put.lua's statuses (docs/storage-format.md).
const (
	putReplaced = 0
	putNew      = 1
	putResent   = 2
)

// putReply decodes put.lua's reply: {status, the thread's generation}.
func putReply(cmd *redis.Cmd) (status int64, err error) {
	v, err := cmd.Result()
	if err != nil {
		return 0, scriptErr("put", err)
	}
	var d reply
	pair := d.list(v)
	if d.err == nil && len(pair) != 2 {
		d.fail("a {status, generation} reply", v)
	}
	if d.err != nil {
		return 0, d.err
	}
	status = d.num(pair[0])
	d.str(pair[1])
	if d.err == nil && (status < putReplaced || status > putResent) {
		d.fail("a put status", pair[0])
	}
	return status, d.err
}

// validateVersions checks that every entry of newVersions is the
// checkpoint's own version of that channel: a value stored under another
// version than the checkpoint names would read back absent.
func validateVersions(cp checkpoint.Checkpoint, newVersions map[string]string) error {
	for ch, ver := range newVersions {
		have, ok := cp.ChannelVersions[ch]
		switch {
		case !ok:
			return invalidCheckpoint("newVersions names channel %q, which has no version in the checkpoint", ch)
		case have != ver:
			return invalidCheckpoint("newVersions gives channel %q version %q, the checkpoint %q", ch, ver, have)
		case ver == "":
			return invalidCheckpoint("channel %q has an empty version", ch)
		}
	}
	return nil
}

// validateStep checks that metadata "step", when present, is an integer
// (not null), so that every event announcing the checkpoint decodes.
func validateStep(md checkpoint.Metadata) error {
	step, ok := md["step"]
	if !ok {
		return nil
	}
	switch v := step.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32:
		return nil
	case uint64:
		if v <= math.MaxInt64 {
			return nil
		}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return nil
		}
	case float32:
		if float64(v) == math.Trunc(float64(v)) && math.Abs(float64(v)) < 1<<24 {
			return nil
		}
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return nil
		}
	}
	return invalidCheckpoint("metadata step must be an integer, not %T %v", step, step)
}

// checkpointFields builds the field/value pairs of a checkpoint hash but
// its parent and call token (put.lua writes those), and returns the run id
// to index (from metadata "run_id", when it is a valid string).
func (s *Saver) checkpointFields(cp checkpoint.Checkpoint, md checkpoint.Metadata) ([]string, string, error) {
	fields := make([]string, 0, 8+2*len(cp.ChannelVersions)+2*len(md))
	fields = append(fields, fieldV, strconv.Itoa(cp.V), fieldTS, cp.TS)
	seen := cp.VersionsSeen
	if seen == nil {
		seen = map[string]map[string]string{}
	}
	seenJSON, err := json.Marshal(seen)
	if err != nil {
		return nil, "", invalidCheckpoint("versions seen: %v", err)
	}
	fields = append(fields, fieldVersionsSeen, string(seenJSON))
	if cp.UpdatedChannels != nil {
		u, err := json.Marshal(cp.UpdatedChannels)
		if err != nil {
			return nil, "", invalidCheckpoint("updated channels: %v", err)
		}
		fields = append(fields, fieldUpdated, string(u))
	}
	for ch, ver := range cp.ChannelVersions {
		if strings.IndexByte(ver, 0) >= 0 {
			return nil, "", invalidCheckpoint("channel %q: version %q holds the byte 0", ch, ver)
		}
		fields = append(fields, prefixChannel+ch, ver)
	}
	runID := ""
	for k, v := range md {
		enc, err := checkpoint.EncodeMetadataValue(v)
		if err != nil {
			return nil, "", invalidCheckpoint("metadata %q: %v", k, err)
		}
		fields = append(fields, prefixMetadata+k, string(enc))
		if r, ok := v.(string); ok && k == "run_id" && keys.ValidateRunID(r) == nil {
			runID = r
		}
	}
	return fields, runID, nil
}

// blobArgs builds the blob field/value pairs of the channels in newVersions.
func (s *Saver) blobArgs(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, newVersions map[string]string) ([]string, error) {
	out := make([]string, 0, 2*len(newVersions))
	for _, ch := range slices.Sorted(maps.Keys(newVersions)) { // in channel order: events are deterministic
		ver := newVersions[ch]
		stored := "" // the empty marker: the channel has this version but no value
		if v, ok := cp.ChannelValues[ch]; ok {
			enc, err := s.encodeValue(ctx, channelPlace(cfg.ThreadID, cfg.CheckpointNS, ch, ver), v)
			if err != nil {
				return nil, err
			}
			stored = enc
		}
		out = append(out, mb.Blob(ch, ver), stored)
	}
	return out, nil
}
