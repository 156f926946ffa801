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
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// Put stores cp in the thread and namespace of cfg, with cfg.CheckpointID as
// its parent ("" for a root checkpoint), and returns the Config of the stored
// checkpoint. It writes the values of the channels in newVersions only (a
// channel listed there but absent from cp.ChannelValues is stored as empty,
// and reads back absent); the other channels are read back from the values
// earlier checkpoints stored for their versions. Metadata is stored verbatim,
// one canonical JSON field per key.
//
// Put is one round trip and one atomic unit: the checkpoint, its values,
// the indexes, the thread registry and the thread's lease change together or
// not at all. When the saver knows the thread's generation (from its last
// Put or GetTuple of the thread), or the checkpoint is a root in a thread it
// does not know (a new thread, most likely), the values go by a plain HSET
// in the same MULTI/EXEC as the script, so no value byte enters Lua; a
// refusal takes them back (docs/storage-format.md, "Writing a checkpoint").
// (A root checkpoint of a thread that exists after all is still one round
// trip: the script moves its staged values into the live generation, through
// Lua.) When the generation the saver knew was stale (the thread was deleted
// or replaced), nothing was written and Put stages the values again knowing
// the live generation, then through the script; when Redis discarded the
// transaction, it sends them through the script: a second round trip.
// Re-putting an existing ID with the same parent replaces its checkpoint
// and metadata and keeps its pending writes. A call re-sent by the client
// after a network error (go-redis re-sends a script call, not a
// transaction) finds its own checkpoint and changes nothing; a Put whose
// reply was lost returns the error, and may have been stored: calling it
// again re-puts the same checkpoint.
//
// Errors, all before anything is written: checkpoint.ErrInvalidConfig for a
// missing or over-long thread ID or namespace or a malformed parent ID;
// checkpoint.ErrInvalidCheckpoint for a malformed checkpoint ID, a checkpoint
// that is its own parent, a re-put that changes the parent, a newVersions
// entry that is not the checkpoint's version of that channel, a "step" that
// is not an integer, metadata that is not JSON or a value the serializer
// refuses; checkpoint.ErrDataLoss when the thread's head is missing while
// its registry entry says it lives, or its generation lacks an index;
// otherwise the Redis error, wrapped.
func (s *Saver) Put(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string) (checkpoint.Config, error) {
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
	if cfg.CheckpointID == cp.ID {
		return checkpoint.Config{}, invalidCheckpoint("checkpoint %q cannot be its own parent", cp.ID)
	}
	if err := validateVersions(cp, newVersions); err != nil {
		return checkpoint.Config{}, err
	}
	if err := validateStep(md); err != nil {
		return checkpoint.Config{}, err
	}
	return s.put(ctx, cfg, cp, md, newVersions, 2)
}

// stageTTL bounds the life of a stage key whose script never ran (Redis
// lacked it and the transaction could not be sent again): put.lua renames
// or deletes a stage key in the same transaction.
const stageTTL = 10 * time.Minute

// put is Put once validated, with stagings staged attempts left. A staged
// attempt sends the values by plain HSET in the same MULTI/EXEC as the
// script, under fields qualified by the call token (no value enters Lua):
// to the values hash of the thread's generation when the saver knows it,
// or, for a root checkpoint of a thread it does not know (a new thread,
// most likely), to a stage key for the generation the call proposes. A
// stale guess (status 3: nothing written) is tried again knowing the live
// generation; with no staged attempt left the values go through the script.
func (s *Saver) put(ctx context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string, stagings int) (checkpoint.Config, error) {
	th, ns := cfg.ThreadID, cfg.CheckpointNS
	token, newGen := keys.NewGen(), keys.NewGen()
	gen := ""
	if stagings > 0 && len(newVersions) > 0 {
		var known bool
		if gen, known = s.gens.get(th); !known && cfg.CheckpointID == "" {
			gen = newGen
		}
	}
	suffix := ""
	if gen != "" {
		suffix = mb.Staged(token)
	}
	fields, runID, err := s.checkpointFields(cfg.CheckpointID, cp, md, newVersions, suffix)
	if err != nil {
		return checkpoint.Config{}, err
	}
	blobs, err := s.blobArgs(cp, newVersions, suffix)
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
	event := s.eventSpec(s.checkpointEvent(cfg, cp, md, newVersions, blobs)...)
	inherited := 0
	if suffix != "" {
		fields, inherited = s.stagedOrder(cfg, gen, fields, newVersions, suffix)
	}
	args := make([]any, 0, 10+len(event)+len(fields)+len(blobs))
	args = append(args, s.layout.ShardBase(shard), keys.Encode(th), keys.Encode(ns), cp.ID, cfg.CheckpointID,
		newGen, token, s.opts.ttlMillis(), len(fields)/2, len(blobs)/2)
	args = append(args, event...)
	for _, f := range fields {
		args = append(args, f)
	}
	var cmd *redis.Cmd
	if suffix == "" {
		for _, b := range blobs {
			args = append(args, b)
		}
		cmd = s.run(ctx, scriptrun.Put, keyList, args...)
	} else {
		stage := gen == newGen
		values := s.layout.Blobs(th, gen, ns)
		if stage {
			values = s.layout.Stage(shard, token)
		}
		args[9] = -len(blobs) / 2
		hset := make([]any, 0, len(blobs))
		for i := 0; i < len(blobs); i += 2 {
			args = append(args, blobs[i])
			hset = append(hset, blobs[i], blobs[i+1])
		}
		args = append(args, inherited)
		cmd, _ = scriptrun.RunTx(ctx, s.rdb, scriptrun.Put, func(p redis.Pipeliner) {
			p.HSet(ctx, values, hset...)
			if stage {
				p.PExpire(ctx, values, stageTTL)
			}
		}, nil, append(keyList, values), args...)
	}
	if suffix != "" && redis.HasErrorPrefix(cmd.Err(), "EXECABORT") {
		// Redis discarded the transaction (a command refused when queued,
		// out of memory for one): nothing ran. The script alone says why.
		return s.put(ctx, cfg, cp, md, newVersions, 0)
	}
	status, live, exact, err := putReply(cmd)
	if err != nil {
		return checkpoint.Config{}, err
	}
	if live == "" {
		s.gens.forget(th)
	} else {
		s.gens.set(th, live)
	}
	if status == putStale {
		// The values went to a generation that is not the thread's; the
		// script took them back and wrote nothing. Try again knowing the
		// live one, or, after a second stale guess, through the script,
		// which starts or finds it.
		return s.put(ctx, cfg, cp, md, newVersions, stagings-1)
	}
	s.rememberPut(cfg, cp.ID, live, token, fields, exact)
	return checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: cp.ID}, nil
}

// put.lua's statuses (docs/storage-format.md).
const (
	putReplaced = 0
	putNew      = 1
	putResent   = 2
	putStale    = 3
)

// putReply decodes put.lua's reply: {status, the thread's generation}, and
// whether the checkpoint's "c:" fields are exactly those sent (a third
// element, 1, for statuses 0 and 1).
func putReply(cmd *redis.Cmd) (status int64, gen string, exact bool, err error) {
	v, err := cmd.Result()
	if err != nil {
		return 0, "", false, scriptErr("put", err)
	}
	var d reply
	pair := d.list(v)
	if d.err == nil && len(pair) != 2 && len(pair) != 3 {
		d.fail("a {status, generation[, exact]} reply", v)
	}
	if d.err != nil {
		return 0, "", false, d.err
	}
	if len(pair) == 3 {
		exact = d.num(pair[2]) == 1
	}
	status, gen = d.num(pair[0]), d.str(pair[1])
	if d.err == nil && (status < putReplaced || status > putStale) {
		d.fail("a put status", pair[0])
	}
	return status, gen, exact, d.err
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

// validateStep checks that metadata "step", when present, is an integer, so
// that every event announcing the checkpoint decodes.
func validateStep(md checkpoint.Metadata) error {
	step, ok := md["step"]
	if !ok || step == nil {
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

// checkpointFields builds the field/value pairs of a checkpoint hash, and
// returns the run id to index (from metadata "run_id", when it is a valid
// string).
//
// suffix ("" or \0 token) follows the versions of the channels in
// newVersions: the blob fields of values staged by the client.
func (s *Saver) checkpointFields(parent string, cp checkpoint.Checkpoint, md checkpoint.Metadata, newVersions map[string]string, suffix string) ([]string, string, error) {
	fields := make([]string, 0, 8+2*len(cp.ChannelVersions)+2*len(md))
	fields = append(fields, fieldV, strconv.Itoa(cp.V), fieldTS, cp.TS)
	if parent != "" {
		fields = append(fields, fieldParent, parent)
	}
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
		if _, ok := newVersions[ch]; ok {
			ver += suffix
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

// blobArgs builds the blob field/value pairs of the channels in newVersions,
// suffix following each version (see checkpointFields).
func (s *Saver) blobArgs(cp checkpoint.Checkpoint, newVersions map[string]string, suffix string) ([]string, error) {
	out := make([]string, 0, 2*len(newVersions))
	for _, ch := range slices.Sorted(maps.Keys(newVersions)) { // in channel order: events are deterministic
		ver := newVersions[ch]
		stored := "" // the empty marker: the channel has this version but no value
		if v, ok := cp.ChannelValues[ch]; ok {
			enc, err := s.encodeValue(v)
			if err != nil {
				return nil, err
			}
			stored = enc
		}
		out = append(out, mb.Blob(ch, ver+suffix), stored)
	}
	return out, nil
}
