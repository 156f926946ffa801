package redissaver

import (
	"maps"
	"slices"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	mb "github.com/graphstate/redcheck/internal/member"
)

// tupleHint is what a saver last wrote or read of a namespace's latest
// checkpoint: its generation, its id, its call token (field "o") and its
// "c:" field/value pairs. With it GetTuple reads the checkpoint's hash and
// values by a plain HGETALL and HMGET, confirmed by plain reads in the same
// transaction (confirm.go) or by get_tuple.lua (docs/storage-format.md,
// "Reading a checkpoint").
type tupleHint struct {
	gen, id, token string
	pairs          []string       // "c:" field, value, …
	hmget          []any          // the HMGET of its values: "hmget", the values hash, the blob fields of pairs
	at             map[string]int // "c:" field -> its index in pairs
}

// newTupleHint builds a hint, with the HMGET of its values, once: a hint is
// read by every GetTuple that predicts it.
func (s *Saver) newTupleHint(thread, ns, gen, id, token string, pairs []string) tupleHint {
	h := tupleHint{gen: gen, id: id, token: token, pairs: pairs,
		hmget: make([]any, 0, 2+len(pairs)/2), at: make(map[string]int, len(pairs)/2)}
	h.hmget = append(h.hmget, "hmget", s.layout.Blobs(thread, gen, ns))
	for i := 0; i+1 < len(pairs); i += 2 {
		h.hmget = append(h.hmget, mb.Blob(pairs[i][len(prefixChannel):], pairs[i+1]))
		h.at[pairs[i]] = i
	}
	return h
}

// same reports whether h is the hint of the checkpoint id of generation gen
// as written by the call with token token: its "c:" pairs are then those
// already known.
func (h tupleHint) same(gen, id, token string) bool {
	return h.gen == gen && h.id == id && h.token == token
}

// newerThan reports whether h names a checkpoint of generation gen whose id
// sorts after id. A Put of id then leaves the namespace's latest checkpoint
// h's: the latest is the greatest id (get_tuple.lua reads it by ZREVRANGE),
// so a saver whose Puts to a namespace end out of id order (concurrent
// writers, a re-put of an older checkpoint) keeps predicting the latest.
func (h tupleHint) newerThan(gen, id string) bool { return h.gen == gen && h.id > id }

// hintKey is the key of a namespace's hint.
func hintKey(thread, ns string) string { return thread + "\x00" + ns }

// idKey is the key of the hint of one checkpoint, read by id or listed.
func idKey(thread, ns, id string) string { return thread + "\x00" + ns + "\x00" + id }

// rememberPut records the checkpoint a Put stored with the call token
// token as its namespace's latest. When exact (put.lua said so), fields are
// its hash fields exactly as stored; else the script resolved pointers the
// saver does not know, and it forgets the namespace's hint: the next read
// learns them. A hint of a newer checkpoint stays either way (newerThan).
func (s *Saver) rememberPut(cfg checkpoint.Config, id, gen, token string, fields []string, exact bool) {
	key := hintKey(cfg.ThreadID, cfg.CheckpointNS)
	newer := func(old tupleHint) bool { return old.newerThan(gen, id) }
	var pairs []string
	if exact {
		pairs = make([]string, 0, len(fields))
		for i := 0; i+1 < len(fields); i += 2 {
			if strings.HasPrefix(fields[i], prefixChannel) {
				pairs = append(pairs, fields[i], fields[i+1])
			}
		}
	}
	if len(pairs) == 0 {
		s.tuples.forgetUnless(key, newer) // nothing to read by HMGET
		return
	}
	s.tuples.setUnless(key, s.newTupleHint(cfg.ThreadID, cfg.CheckpointNS, gen, id, token, pairs), newer)
}

// parentPointers returns the "c:" pairs the saver remembers of the parent of
// a checkpoint written at cfg (cfg.CheckpointID) in generation gen, by
// field; none when what it remembers is another checkpoint.
func (s *Saver) parentPointers(cfg checkpoint.Config, gen string) map[string]string {
	if cfg.CheckpointID == "" {
		return nil
	}
	prev, ok := s.tuples.get(hintKey(cfg.ThreadID, cfg.CheckpointNS))
	if !ok || prev.id != cfg.CheckpointID {
		prev, ok = s.byID.get(idKey(cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)) // a fork from a checkpoint read
	}
	if !ok || prev.gen != gen || prev.id != cfg.CheckpointID {
		return nil
	}
	out := make(map[string]string, len(prev.pairs)/2)
	for i := 0; i+1 < len(prev.pairs); i += 2 {
		out[prev.pairs[i]] = prev.pairs[i+1]
	}
	return out
}

// parentPointer returns what the "c:" field f of a checkpoint that names
// version v of its channel without writing it points to: where its parent's
// field points, when that names the same version (v itself, or v \0 token);
// else v, which put.lua resolves.
func parentPointer(parent map[string]string, f, v string) string {
	if p, ok := parent[f]; ok && (p == v || strings.HasPrefix(p, v+mb.Sep)) {
		return p
	}
	return v
}

// stagedOrder puts a staged Put's hash pairs in the order put.lua takes them
// (docs/storage-format.md, "Writing a checkpoint"): the "c:" pairs of the
// staged values, in channel order as blobArgs stages them; then the other
// "c:" pairs, each valued with the pointer the parent is expected to hold
// (parentPointer: put.lua then only compares it with the parent's); then
// the rest. It returns the pairs and the count of the second group.
func (s *Saver) stagedOrder(cfg checkpoint.Config, gen string, fields []string, newVersions map[string]string, suffix string) ([]string, int) {
	parent := s.parentPointers(cfg, gen)
	out := make([]string, 0, len(fields))
	for _, ch := range slices.Sorted(maps.Keys(newVersions)) {
		out = append(out, prefixChannel+ch, newVersions[ch]+suffix)
	}
	inherited := 0
	for i := 0; i+1 < len(fields); i += 2 {
		f, v := fields[i], fields[i+1]
		if strings.HasPrefix(f, prefixChannel) {
			if _, written := newVersions[f[len(prefixChannel):]]; !written {
				out = append(out, f, parentPointer(parent, f, v))
				inherited++
			}
		}
	}
	for i := 0; i+1 < len(fields); i += 2 {
		if !strings.HasPrefix(fields[i], prefixChannel) {
			out = append(out, fields[i], fields[i+1])
		}
	}
	return out, inherited
}

// forgetThread drops what the saver remembers of a thread it deleted or
// found gone: its generation and every prediction in it (keys that start with the thread
// and "\x00"; a thread id holding "\x00" may take another thread's hints
// along, which only costs that thread its predictions).
func (s *Saver) forgetThread(thread string) {
	s.gens.forget(thread)
	s.small.forget(thread)
	s.forgetPredictions(thread)
}

// forgetPredictions drops the saver's predictions of a thread's checkpoints
// (keys that start with the thread and "\x00") and its namespaces' contention
// marks, keeping its generation: after a deletion of some of its checkpoints
// (DeleteForRuns), whose latest may be gone.
func (s *Saver) forgetPredictions(thread string) {
	prefix := thread + "\x00"
	s.tuples.forgetPrefix(prefix)
	s.byID.forgetPrefix(prefix)
	s.contended.forgetPrefix(prefix)
}

// forgetCheckpoint drops the saver's predictions of a checkpoint found
// deleted: by id, and as its namespace's latest while the hint there still
// names it.
func (s *Saver) forgetCheckpoint(thread, ns string, h tupleHint) {
	s.byID.forget(idKey(thread, ns, h.id))
	s.tuples.forgetUnless(hintKey(thread, ns), func(old tupleHint) bool { return !old.same(h.gen, h.id, h.token) })
}

// rememberRead records a checkpoint read (its hash fields as field/value
// pairs) and its thread's generation: as its namespace's latest when it was
// read as the latest, else by id (a GetTuple by id, a List), so that a read
// of it by id predicts it too.
func (s *Saver) rememberRead(thread, ns, id, gen string, flat []any, latest bool) {
	s.gens.set(thread, gen)
	cache, key := s.tuples, hintKey(thread, ns)
	if !latest {
		cache, key = s.byID, idKey(thread, ns, id)
	}
	token, channels := "", 0
	for i := 0; i+1 < len(flat); i += 2 {
		f, _ := flat[i].(string)
		if f == fieldToken {
			token, _ = flat[i+1].(string)
		} else if strings.HasPrefix(f, prefixChannel) {
			channels++
		}
	}
	if token == "" || channels == 0 {
		cache.forget(key) // nothing to confirm a prediction by, or to read by HMGET
		return
	}
	if h, ok := cache.get(key); ok && h.same(gen, id, token) {
		return // the checkpoint read again: its "c:" pairs are the hint's
	}
	pairs := make([]string, 0, 2*channels)
	for i := 0; i+1 < len(flat); i += 2 {
		if f, _ := flat[i].(string); strings.HasPrefix(f, prefixChannel) {
			v, _ := flat[i+1].(string)
			pairs = append(pairs, f, v)
		}
	}
	cache.set(key, s.newTupleHint(thread, ns, gen, id, token, pairs))
}

// alignValues turns the reply of the HMGET of a confirmed prediction (values
// in the order of the hint's pairs) into values aligned with the "c:" fields
// of flat, as load_checkpoint (lib.lua) returns them. A value missing is
// lost data; a "c:" field that is not the hint's is a saver bug (the token
// of the Put that wrote them was confirmed).
func alignValues(h tupleHint, flat []any, got []any, valuesKey string) ([]any, error) {
	if len(got) != len(h.pairs)/2 {
		return nil, corrupt("get tuple: %d values read for %d predicted", len(got), len(h.pairs)/2)
	}
	out := make([]any, 0, len(h.pairs)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		f, _ := flat[i].(string)
		if !strings.HasPrefix(f, prefixChannel) {
			continue
		}
		j, ok := h.at[f]
		if !ok || h.pairs[j+1] != flat[i+1] {
			return nil, corrupt("get tuple: the confirmed prediction differs from the checkpoint at %q", f)
		}
		if got[j/2] == nil {
			return nil, dataLoss("get tuple: value %s of checkpoint in %s is missing", mb.Blob(f[len(prefixChannel):], h.pairs[j+1]), valuesKey)
		}
		out = append(out, got[j/2])
	}
	if len(out) != len(got) {
		return nil, corrupt("get tuple: the checkpoint has %d of the %d predicted versions", len(out), len(got))
	}
	return out, nil
}
