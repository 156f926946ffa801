package redissaver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/redis/go-redis/v9"
)

// copyBudget is the number of checkpoints, or of values, one page of a
// CopyThread carries at most.
const copyBudget = 32

// copyGrace is how long a copy's staging generation may wait between two
// steps before the sweeps may reclaim it.
const copyGrace = 10 * time.Minute

// CopyThread copies every checkpoint of the source thread, in every
// namespace, with its ID, parent link, metadata, pending writes and channel
// values, to the target thread, which must have no checkpoints: copying onto
// a thread that has some is an error wrapping checkpoint.ErrInvalidConfig,
// and changes nothing. The source is unchanged; copying a thread that does
// not exist is a no-op.
//
// The copy proceeds in bounded pages of at most copyBudget checkpoints or
// values, each read from the source by one script and written to the target
// by another (the threads may live in different Cluster slots), into a
// staging generation that no reader sees. One last script makes it the
// target's thread, at once: readers of the target see nothing, then the
// whole copy. Checkpoints put to the source during the copy may or may not
// be copied; a source deleted or replaced during the copy fails it
// (checkpoint.ErrNotFound), and so does a Prune, DeleteForRuns or re-put of
// the source that removes the values of checkpoints the copy already took
// (each namespace's checkpoints are read before its values; the copy checks
// that it wrote every value they point to before it commits). A source
// whose namespaces were all emptied before the copy read them copies
// nothing, as a thread without checkpoints. A source that lost a key the
// copy needs (a namespace's index, its values hash, a checkpoint hash) or
// values its checkpoints point to fails it with checkpoint.ErrDataLoss. A copy cut off leaves the target
// as it was; its staging generation is reclaimed by the sweeps after
// copyGrace, and a copy idle for longer fails (checkpoint.ErrNotFound).
func (s *Saver) CopyThread(ctx context.Context, sourceThreadID, targetThreadID string) (err error) {
	ctx, call := s.begin(ctx, opCopyThread)
	defer func() { call.end(err) }()
	call.address(sourceThreadID, "", "")
	call.set(attrTargetThread.String(targetThreadID))
	for _, th := range []string{sourceThreadID, targetThreadID} {
		if err := keys.ValidateThreadID(th); err != nil {
			return invalidConfig("%v", err)
		}
	}
	if sourceThreadID == targetThreadID {
		return invalidConfig("cannot copy thread %q onto itself", sourceThreadID)
	}
	src := &copyReader{s: s, th: sourceThreadID}
	namespaces, err := src.namespaces(ctx)
	if err != nil || len(namespaces) == 0 {
		return err
	}
	dst := &copyWriter{s: s, th: targetThreadID, gen: keys.NewGen()}
	if err := dst.step(ctx, "begin"); err != nil {
		return err
	}
	count, err := s.copyNamespaces(ctx, src, dst, namespaces)
	if err == nil && count > 0 {
		err = dst.step(ctx, append([]any{"commit", s.opts.ttlMillis(), count},
			s.eventSpec(ctx, evType, "thread_copied", evThread, keys.Encode(targetThreadID), evSourceTh, keys.Encode(sourceThreadID))...)...)
	}
	if err != nil || count == 0 {
		// The staging generation is reclaimed now rather than after the grace.
		// A copy of no checkpoint (every namespace listed was emptied before
		// its checkpoints were read) is not committed: nothing to copy, as
		// from a thread without checkpoints.
		_ = dst.step(context.WithoutCancel(ctx), "abort")
		return err
	}
	return nil
}

// copyNamespaces copies the checkpoints, then the values, of each
// namespace, and returns the number of checkpoints copied.
func (s *Saver) copyNamespaces(ctx context.Context, src *copyReader, dst *copyWriter, namespaces []string) (int, error) {
	count := 0
	shard := s.layout.Shard(dst.th)
	var d reply
	for _, encns := range namespaces {
		ns, err := keys.Decode(encns)
		if err != nil {
			return 0, corrupt("copy thread: namespace %q", encns)
		}
		before := count
		var ids []string // the checkpoints copied, for lostValues
		for cursor := ""; ; {
			res, err := src.page(ctx, "cps", encns, cursor)
			if err != nil {
				return 0, err
			}
			args := []any{"cps", encns}
			for _, c := range res[1:] {
				cp := d.list(c)
				if len(cp) != 2 {
					return 0, corrupt("copy page checkpoint %v", c)
				}
				flat := d.list(cp[1])
				if d.err != nil || len(flat)%2 != 0 {
					return 0, corrupt("copy page checkpoint %v", c)
				}
				ids = append(ids, d.str(cp[0]))
				args = append(args, cp[0], len(flat)/2)
				for i := 0; i < len(flat); i += 2 {
					v := flat[i+1]
					if flat[i] == fieldRunKey {
						v = s.rehomeRunKey(v, shard)
					} else if f, _ := flat[i].(string); strings.HasPrefix(f, prefixWrite) {
						if v, err = s.resealWrite(ctx, src.th, dst.th, ns, d.str(cp[0]), f, d.str(v)); err != nil {
							return 0, err
						}
					}
					args = append(args, flat[i], v)
				}
				count++
			}
			if len(res) > 1 {
				if err := dst.step(ctx, args...); err != nil {
					return 0, err
				}
			}
			if cursor = d.str(res[0]); d.err != nil {
				return 0, d.err
			} else if cursor == "" {
				break
			}
		}
		if count == before {
			// A namespace emptied since the source listed it: no checkpoint,
			// so no value, to copy.
			continue
		}
		if copyBetweenPhases != nil {
			copyBetweenPhases()
		}
		for cursor := "0"; ; {
			res, err := src.page(ctx, "blobs", encns, cursor)
			if err != nil {
				return 0, err
			}
			if len(res) > 1 {
				if err := s.resealBlobs(ctx, src.th, dst.th, ns, res[1:]); err != nil {
					return 0, err
				}
				if err := dst.step(ctx, append([]any{"blobs", encns}, res[1:]...)...); err != nil {
					return 0, err
				}
			}
			if cursor = d.str(res[0]); d.err != nil {
				return 0, d.err
			} else if cursor == "0" {
				break
			}
		}
		if err := dst.step(ctx, "check", encns); err != nil {
			if errors.Is(err, errMissing) {
				// A value the copied checkpoints point to was not copied: lost
				// data when one of them still points to it, else reclaimed.
				if lerr := src.lostValues(ctx, encns, ids); lerr != nil {
					return 0, lerr
				}
				return 0, notFound("copy thread: %v (%v)", errSourceValuesGone, err)
			}
			return 0, err
		}
	}
	return count, nil
}

// copyBetweenPhases, when set (by tests), runs between a namespace's
// checkpoints and its values.
var copyBetweenPhases func()

// errSourceChanged reports a source deleted or replaced during a copy.
var errSourceChanged = errors.New("the source thread was deleted or replaced during the copy")

// errSourceValuesGone reports values of checkpoints a copy had taken that
// the source reclaimed before the copy read them.
var errSourceValuesGone = errors.New("values of checkpoints the copy had taken left the source during the copy " +
	"(a Prune, DeleteForRuns or re-put of the source ran meanwhile): copy again")

// errMissing is a copy's check that found a value of the copied
// checkpoints not copied (copy_write.lua's MISSING); copyNamespaces tells
// a reclaim (checkpoint.ErrNotFound) from lost data.
var errMissing = errors.New("a value of a copied checkpoint was not copied")

// lostValues asks the source whether a checkpoint of ids (of namespace
// encns) still points to a value its values hash lacks, in pages of
// copyBudget: checkpoint.ErrDataLoss when one does, nil when none does (or
// when the source was deleted or replaced meanwhile: the copy's NotFound
// then stands).
func (r *copyReader) lostValues(ctx context.Context, encns string, ids []string) error {
	for page := range slices.Chunk(ids, copyBudget) {
		args := make([]any, 0, len(page))
		for _, id := range page {
			args = append(args, id)
		}
		if _, err := r.page(ctx, "lost", encns, "", args...); err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return err
		}
	}
	return nil
}

// copyReader reads the source of a copy in pages (copy_read.lua).
type copyReader struct {
	s   *Saver
	th  string
	gen string
}

// page reads one page; it returns {next cursor, items...}.
func (r *copyReader) page(ctx context.Context, part, encns, cursor string, ids ...any) ([]any, error) {
	shard := r.s.layout.Shard(r.th)
	args := append([]any{r.s.layout.ShardBase(shard), keys.Encode(r.th), r.gen, part, encns, cursor, copyBudget}, ids...)
	res, err := r.s.run(ctx, scriptrun.CopyRead, []string{r.s.layout.Head(r.th), r.s.layout.Threads(shard)}, args...).Slice()
	if err != nil {
		return nil, scriptErr("copy thread: read source", err)
	}
	if len(res) == 0 {
		return nil, corrupt("empty copy page")
	}
	var d reply
	g := d.str(res[0])
	if d.err != nil {
		return nil, d.err
	}
	if g == "" {
		if r.gen == "" {
			return nil, nil // no source
		}
		return nil, notFound("copy thread: %v", errSourceChanged)
	}
	r.gen = g
	if len(res) < 2 {
		return nil, corrupt("copy page of %d items", len(res))
	}
	return res[1:], nil
}

// namespaces lists the source's namespaces; none for an unknown source.
func (r *copyReader) namespaces(ctx context.Context) ([]string, error) {
	var out []string
	for cursor := "0"; ; {
		res, err := r.page(ctx, "ns", "", cursor)
		if err != nil || res == nil {
			return nil, err
		}
		var d reply
		for _, m := range res[1:] {
			out = append(out, d.str(m))
		}
		if cursor = d.str(res[0]); d.err != nil {
			return nil, d.err
		} else if cursor == "0" {
			return out, nil
		}
	}
}

// copyWriter writes the target of a copy (copy_write.lua).
type copyWriter struct {
	s   *Saver
	th  string
	gen string
}

func (w *copyWriter) step(ctx context.Context, args ...any) error {
	shard := w.s.layout.Shard(w.th)
	keyList := []string{w.s.layout.Head(w.th), w.s.layout.Threads(shard), w.s.layout.All(shard), w.s.layout.GC(shard),
		w.s.layout.Events(w.th), w.s.layout.Feed(shard)}
	phase := args[0]
	all := append([]any{w.s.layout.ShardBase(shard), keys.Encode(w.th), w.gen, phase, copyGrace.Milliseconds()}, args[1:]...)
	err := w.s.run(ctx, scriptrun.CopyWrite, keyList, all...).Err()
	if redis.HasErrorPrefix(err, "EXISTS") {
		return invalidConfig("target thread %q already has checkpoints", w.th)
	}
	if redis.HasErrorPrefix(err, "MISSING") {
		return fmt.Errorf("%w: %v", errMissing, err)
	}
	if err != nil {
		return scriptErr("copy thread: write target", err)
	}
	return nil
}

// rehomeRunKey moves a run index key to another shard: the run stays, the
// shard changes.
func (s *Saver) rehomeRunKey(v any, shard int) any {
	key, _ := v.(string)
	_, encRun, ok := strings.Cut(key, "}:run:")
	if !ok {
		return v
	}
	return s.layout.ShardBase(shard) + "run:" + encRun
}
