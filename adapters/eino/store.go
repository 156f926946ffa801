package eino

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"iter"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/oklog/ulid/v2"
)

// Channel is the channel of every checkpoint the Store writes: its value is
// the bytes eino handed to Set, stored as they are (a top-level []byte is
// stored with the serializer's "bytes" tag, not re-encoded) and compressed
// when the saver's Options.Compression says so.
const Channel = "eino"

// Source is the metadata "source" of the checkpoints Set writes; Fork writes
// "fork".
const Source = "eino"

// The interfaces Store implements: eino's compose and ADK checkpoint stores
// (one interface, core.CheckPointStore, under two names). A drift of eino's
// signature fails the build.
var (
	_ compose.CheckPointStore = (*Store)(nil)
	_ adk.CheckPointStore     = (*Store)(nil)
)

// ErrInvalidOptions is returned by New for Options it cannot use. It wraps
// checkpoint.ErrInvalidConfig.
var ErrInvalidOptions = fmt.Errorf("redcheck/eino: invalid options: %w", checkpoint.ErrInvalidConfig)

// ErrNotEino is returned when the latest checkpoint of a thread holds no
// eino value: the thread was written by something else than a Store (a
// LangGraph graph, say) under a thread ID that is also an eino checkpoint
// ID. It wraps checkpoint.ErrSerialization: the checkpoint is not one the
// Store can decode. A lost value is checkpoint.ErrDataLoss, never this.
var ErrNotEino = fmt.Errorf("redcheck/eino: checkpoint holds no %q value: %w", Channel, checkpoint.ErrSerialization)

// Options configure a Store. The zero value keeps every checkpoint until the
// thread is deleted or its lease (the saver's Options.TTL) runs out.
type Options struct {
	// PruneEvery, when positive, prunes the history of a checkpoint ID after
	// each Set whose step (0 for the ID's first Set, stored with each
	// checkpoint, so the count holds across processes and restarts) is a
	// positive multiple of PruneEvery: the older checkpoints go, the latest
	// stays (checkpoint.PruneKeepLatest). 1 keeps a single checkpoint per
	// ID, as eino's in-memory store does; N keeps at most N+1. Zero (the
	// default) keeps the whole history, for History and Fork, until Delete
	// or the lease.
	PruneEvery int

	// OnPruneError receives the error of a prune that PruneEvery started.
	// The Set that started it has stored its checkpoint and returns nil: a
	// failed prune loses nothing, and the next prune (automatic or a call
	// of Prune) finishes its work. nil drops such errors.
	OnPruneError func(ctx context.Context, checkPointID string, err error)

	// Metadata, when set, returns metadata to store with the checkpoint a
	// Set writes, for instance {"run_id": ...} so that the saver's
	// DeleteForRuns can delete a run's checkpoints. Values must be
	// representable in JSON. The keys "source" and "step" are the Store's:
	// the values it returns for them are overwritten.
	Metadata func(ctx context.Context, checkPointID string) checkpoint.Metadata
}

// Store is eino's CheckPointStore (compose.CheckPointStore,
// adk.CheckPointStore) on a redissaver.Saver. Each eino checkpoint ID is a
// redcheck thread; each Set stores a new checkpoint of it. It is safe for
// concurrent use. See the package documentation for the mapping and its
// semantics.
type Store struct {
	saver *redissaver.Saver
	opts  Options
}

// New returns a Store on saver. The caller keeps owning the saver and its
// Redis client. The saver's options apply to every eino checkpoint: its TTL
// is a lease per checkpoint ID, its Compression compresses eino's bytes,
// its Events announce every Set (redcheck tail), its Prefix isolates the
// Store from other savers on the same Redis.
func New(saver *redissaver.Saver, opts Options) (*Store, error) {
	if saver == nil {
		return nil, fmt.Errorf("%w: nil saver", ErrInvalidOptions)
	}
	if opts.PruneEvery < 0 {
		return nil, fmt.Errorf("%w: negative PruneEvery", ErrInvalidOptions)
	}
	return &Store{saver: saver, opts: opts}, nil
}

// Saver returns the saver the Store writes to: List, CopyThread,
// DeleteForRuns, Verify and the rest work on eino's checkpoints with the
// eino checkpoint ID as the thread ID.
func (s *Store) Saver() *redissaver.Saver { return s.saver }

// Get returns the bytes of the latest checkpoint of checkPointID (eino's
// CheckPointStore). An ID without checkpoints, deleted, or whose lease ran
// out answers nil, false, nil: eino then starts a new run (a compose graph)
// or reports that the checkpoint does not exist (an ADK Runner's Resume).
//
// Any other failure is an error, never a fresh start: checkpoint.ErrDataLoss
// when Redis lost part of the checkpoint (an evicted or deleted key),
// ErrNotEino when the thread holds checkpoints of something else,
// checkpoint.ErrInvalidConfig for an empty or over-long ID, and Redis
// errors. One round trip (two when the value is over 32 KiB); with the
// saver's RefreshOnRead it renews the lease.
func (s *Store) Get(ctx context.Context, checkPointID string) ([]byte, bool, error) {
	if err := validID(checkPointID); err != nil {
		return nil, false, err
	}
	tup, err := s.saver.GetTuple(ctx, checkpoint.Config{ThreadID: checkPointID})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("redcheck/eino: get %q: %w", checkPointID, err)
	}
	data, err := value(tup)
	if err != nil {
		return nil, false, fmt.Errorf("redcheck/eino: get %q: %w", checkPointID, err)
	}
	return data, true, nil
}

// Set stores checkPoint as the new latest checkpoint of checkPointID
// (eino's CheckPointStore): a child of the latest one, with its step plus
// one, or the first (step 0) of a new thread. It reads the latest
// checkpoint, then writes the new one in one atomic Put that also publishes
// its event and renews the ID's lease: two round trips (three when the
// previous value is over 32 KiB). The stored ID is greater than the one it
// read, whatever the clocks of the processes that wrote them, so a Get
// after a Set returns what it stored unless another Set came since.
//
// Concurrent Sets of one ID (which eino never makes for one run) each store
// their checkpoint whole; the latest is the one with the greatest ID, and
// both stay in the history (siblings when they read the same parent).
//
// A Set fails, writing nothing, when the latest checkpoint cannot be read
// (checkpoint.ErrDataLoss: a new checkpoint would hide the loss; Delete the
// ID to start it again) or when the Put fails. With Options.PruneEvery it
// then prunes; a failed prune does not fail the Set (see OnPruneError).
func (s *Store) Set(ctx context.Context, checkPointID string, checkPoint []byte) error {
	if err := validID(checkPointID); err != nil {
		return err
	}
	step, err := s.put(ctx, checkPointID, checkPoint, Source, nil)
	if err != nil {
		return fmt.Errorf("redcheck/eino: set %q: %w", checkPointID, err)
	}
	if n := s.opts.PruneEvery; n > 0 && step > 0 && step%int64(n) == 0 {
		if err := s.Prune(ctx, checkPointID); err != nil && s.opts.OnPruneError != nil {
			s.opts.OnPruneError(ctx, checkPointID, err)
		}
	}
	return nil
}

// put stores data as the new latest checkpoint of thread id, with the
// metadata source and extra, and returns its step.
func (s *Store) put(ctx context.Context, id string, data []byte, source string, extra checkpoint.Metadata) (int64, error) {
	parent := checkpoint.Root(id, "")
	prev := checkpoint.Empty()
	step := int64(0)
	tup, err := s.saver.GetTuple(ctx, checkpoint.Config{ThreadID: id})
	switch {
	case err == nil:
		parent = checkpoint.Parent(tup.Config)
		prev = tup.Checkpoint
		if st, ok := tup.Metadata["step"].(int64); ok && st >= 0 {
			step = st + 1
		}
	case errors.Is(err, checkpoint.ErrNotFound):
	default:
		return 0, fmt.Errorf("read the latest checkpoint: %w", err)
	}
	next, newVersions := checkpoint.Next(prev, map[string]any{Channel: data}, s.saver.NextVersion)
	// Only eino's channel: a thread written by something else keeps its
	// other channels out of the Store's checkpoints.
	for ch := range next.ChannelVersions {
		if ch != Channel {
			delete(next.ChannelVersions, ch)
			delete(next.ChannelValues, ch)
		}
	}
	if tup != nil && next.ID <= tup.Config.CheckpointID {
		next.ID = laterID(tup.Config.CheckpointID)
	}
	md := checkpoint.Metadata{}
	if s.opts.Metadata != nil {
		for k, v := range s.opts.Metadata(ctx, id) {
			md[k] = v
		}
	}
	for k, v := range extra {
		md[k] = v
	}
	md["source"] = source
	md["step"] = step
	if _, err := s.saver.Put(ctx, parent, next, md, newVersions); err != nil {
		return 0, err
	}
	return step, nil
}

// laterID returns a new checkpoint ID greater than prev: a ULID one
// millisecond after prev's time when prev is a ULID (a writer whose clock
// lags the one that wrote prev), else prev with a ULID appended (a thread
// whose IDs are of another scheme; byte order still puts it after prev).
func laterID(prev string) string {
	if u, err := ulid.ParseStrict(prev); err == nil && u.Time() < ulid.MaxTime() {
		if id, err := ulid.New(u.Time()+1, rand.Reader); err == nil {
			return id.String()
		}
	}
	return prev + "~" + checkpoint.NewID()
}

// Delete removes every checkpoint of checkPointID, its history included,
// as the saver's DeleteThread does: at once for readers (a Get answers not
// found, a Set starts the ID anew at step 0), then its keys in bounded
// steps; a thread_deleted event is published. Call it when the run that
// used the ID finished (eino's CheckPointStore has no delete, and eino
// v0.7.36 declares no optional deleter interface). Deleting an unknown ID is
// a no-op. When Redis lost the ID's head key, Delete clears the ID all the
// same (Get then answers not found) and returns an error wrapping
// checkpoint.ErrDataLoss: the keys that head pointed to cannot be found from
// it (see redissaver.Saver.DeleteThread).
func (s *Store) Delete(ctx context.Context, checkPointID string) error {
	if err := validID(checkPointID); err != nil {
		return err
	}
	if err := s.saver.DeleteThread(ctx, checkPointID); err != nil {
		return fmt.Errorf("redcheck/eino: delete %q: %w", checkPointID, err)
	}
	return nil
}

// Prune removes the checkpoints of checkPointID older than its latest, with
// the values only they point to (checkpoint.PruneKeepLatest, in bounded
// steps): Get answers as before, and memory no longer grows with each
// interrupt. Options.PruneEvery calls it after Sets. Pruning an unknown ID
// is a no-op.
func (s *Store) Prune(ctx context.Context, checkPointID string) error {
	if err := validID(checkPointID); err != nil {
		return err
	}
	if err := s.saver.Prune(ctx, []string{checkPointID}, checkpoint.PruneKeepLatest); err != nil {
		return fmt.Errorf("redcheck/eino: prune %q: %w", checkPointID, err)
	}
	return nil
}

// Version is one stored checkpoint of an eino checkpoint ID.
type Version struct {
	// CheckpointID is redcheck's ID of the checkpoint (a ULID): pass it to
	// GetVersion and Fork.
	CheckpointID string
	// ParentID is the ID of the checkpoint it followed ("" for the first).
	ParentID string
	// Step counts the Sets of the ID: 0 for the first.
	Step int64
	// Source is "eino" for a Set, "fork" for a Fork.
	Source string
	// Time is the checkpoint's timestamp (RFC 3339, UTC), as Set wrote it.
	Time string
	// Metadata is all of the checkpoint's metadata.
	Metadata checkpoint.Metadata
	// Data is the bytes eino stored.
	Data []byte
}

// History yields the stored checkpoints of checkPointID, newest first (at
// most limit of them; limit <= 0 for all), with eino's bytes: the saver's
// List, a page of checkpoints per round trip. An error ends it: it is
// yielded once, with a nil Version. An unknown ID yields nothing.
func (s *Store) History(ctx context.Context, checkPointID string, limit int) iter.Seq2[*Version, error] {
	return func(yield func(*Version, error) bool) {
		if err := validID(checkPointID); err != nil {
			yield(nil, err)
			return
		}
		q := checkpoint.ListQuery{ThreadID: checkPointID, CheckpointNS: checkpoint.NS(""), Limit: limit}
		for tup, err := range s.saver.List(ctx, q) {
			if err != nil {
				yield(nil, fmt.Errorf("redcheck/eino: history of %q: %w", checkPointID, err))
				return
			}
			v, err := version(tup)
			if err != nil {
				yield(nil, fmt.Errorf("redcheck/eino: history of %q: %w", checkPointID, err))
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// GetVersion returns the checkpoint at of checkPointID (a
// Version.CheckpointID; "" for the latest). A version that does not exist
// (pruned, deleted, never written) is an error wrapping
// checkpoint.ErrNotFound.
func (s *Store) GetVersion(ctx context.Context, checkPointID, at string) (*Version, error) {
	if err := validID(checkPointID); err != nil {
		return nil, err
	}
	tup, err := s.saver.GetTuple(ctx, checkpoint.Config{ThreadID: checkPointID, CheckpointID: at})
	if err != nil {
		return nil, fmt.Errorf("redcheck/eino: get %q version %q: %w", checkPointID, at, err)
	}
	v, err := version(tup)
	if err != nil {
		return nil, fmt.Errorf("redcheck/eino: get %q version %q: %w", checkPointID, at, err)
	}
	return v, nil
}

// Fork makes the checkpoint at of source (a Version.CheckpointID; "" for
// the latest) the latest checkpoint of target, so that eino resumes target from
// that point while source stays as it is: rerun an interrupt with another
// answer, or from an earlier interrupt. The new checkpoint has the metadata
// source "fork" and "forked_from" {"id": source, "checkpoint": version}; it
// follows target's own history when target has one. To copy a whole
// history instead, use Saver().CopyThread(ctx, source, target) on a target
// without checkpoints.
func (s *Store) Fork(ctx context.Context, source, at, target string) error {
	v, err := s.GetVersion(ctx, source, at)
	if err != nil {
		return err
	}
	if err := validID(target); err != nil {
		return err
	}
	extra := checkpoint.Metadata{"forked_from": map[string]any{"id": source, "checkpoint": v.CheckpointID}}
	if _, err := s.put(ctx, target, v.Data, "fork", extra); err != nil {
		return fmt.Errorf("redcheck/eino: fork %q version %q to %q: %w", source, v.CheckpointID, target, err)
	}
	return nil
}

// validID refuses the empty ID: the saver reads an empty thread ID as not
// found, which would make Get start a fresh run on a caller's bug. The
// saver refuses over-long IDs itself (checkpoint.ErrInvalidConfig).
func validID(id string) error {
	if id == "" {
		return fmt.Errorf("redcheck/eino: empty checkpoint id: %w", checkpoint.ErrInvalidConfig)
	}
	return nil
}

// value returns the eino bytes of tup.
func value(tup *checkpoint.Tuple) ([]byte, error) {
	v, ok := tup.Checkpoint.ChannelValues[Channel]
	if !ok {
		if _, versioned := tup.Checkpoint.ChannelVersions[Channel]; versioned {
			return nil, fmt.Errorf("%w: checkpoint %s names a %q version without a value", checkpoint.ErrDataLoss, tup.Config.CheckpointID, Channel)
		}
		return nil, fmt.Errorf("%w (checkpoint %s)", ErrNotEino, tup.Config.CheckpointID)
	}
	data, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("%w (checkpoint %s: a %T)", ErrNotEino, tup.Config.CheckpointID, v)
	}
	return data, nil
}

// version converts a tuple read from the saver.
func version(tup *checkpoint.Tuple) (*Version, error) {
	data, err := value(tup)
	if err != nil {
		return nil, err
	}
	v := &Version{
		CheckpointID: tup.Config.CheckpointID,
		Time:         tup.Checkpoint.TS,
		Metadata:     tup.Metadata,
		Data:         data,
	}
	if tup.ParentConfig != nil {
		v.ParentID = tup.ParentConfig.CheckpointID
	}
	v.Step, _ = tup.Metadata["step"].(int64)
	v.Source, _ = tup.Metadata["source"].(string)
	return v, nil
}
