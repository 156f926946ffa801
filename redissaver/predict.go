package redissaver

import (
	"maps"
	"slices"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	mb "github.com/graphstate/redcheck/internal/member"
)

// tupleHint is what a saver last wrote or read of a namespace's latest
// checkpoint: its generation, its id and its "c:" field/value pairs. With it
// GetTuple reads the values by a plain HMGET in the same transaction as
// get_tuple.lua, which confirms the prediction (docs/storage-format.md,
// "Reading a checkpoint").
type tupleHint struct {
	gen, id string
	pairs   []string // "c:" field, value, …
}

// hintKey is the key of a namespace's hint.
func hintKey(thread, ns string) string { return thread + "\x00" + ns }

// blobFields are the blob fields of the hint's values, in the order of its
// pairs.
func (h tupleHint) blobFields() []string {
	out := make([]string, 0, len(h.pairs)/2)
	for i := 0; i+1 < len(h.pairs); i += 2 {
		out = append(out, mb.Blob(h.pairs[i][len(prefixChannel):], h.pairs[i+1]))
	}
	return out
}

// rememberPut records the checkpoint a Put stored: fields are its hash
// fields as sent, the versions it did not write resolved as parentPointer
// does (put.lua's rule, which get_tuple.lua checks when it reads).
func (s *Saver) rememberPut(cfg checkpoint.Config, id, gen string, fields []string, newVersions map[string]string) {
	inherit := s.parentPointers(cfg, gen)
	pairs := make([]string, 0, 2*len(fields))
	for i := 0; i+1 < len(fields); i += 2 {
		f, v := fields[i], fields[i+1]
		if !strings.HasPrefix(f, prefixChannel) {
			continue
		}
		if _, written := newVersions[f[len(prefixChannel):]]; !written {
			v = parentPointer(inherit, f, v)
		}
		pairs = append(pairs, f, v)
	}
	s.rememberTuple(hintKey(cfg.ThreadID, cfg.CheckpointNS), tupleHint{gen: gen, id: id, pairs: pairs})
}

// parentPointers returns the "c:" pairs the saver remembers of the parent of
// a checkpoint written at cfg (cfg.CheckpointID) in generation gen, by
// field; none when what it remembers is another checkpoint.
func (s *Saver) parentPointers(cfg checkpoint.Config, gen string) map[string]string {
	prev, ok := s.tuples.get(hintKey(cfg.ThreadID, cfg.CheckpointNS))
	if !ok || prev.gen != gen || prev.id != cfg.CheckpointID || cfg.CheckpointID == "" {
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

// rememberRead records the checkpoint a GetTuple read (its hash fields as
// field/value pairs) and its thread's generation.
func (s *Saver) rememberRead(thread, ns, id, gen string, flat []any) {
	s.gens.set(thread, gen)
	pairs := make([]string, 0, len(flat))
	for i := 0; i+1 < len(flat); i += 2 {
		f, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		if strings.HasPrefix(f, prefixChannel) {
			pairs = append(pairs, f, v)
		}
	}
	s.rememberTuple(hintKey(thread, ns), tupleHint{gen: gen, id: id, pairs: pairs})
}

func (s *Saver) rememberTuple(key string, h tupleHint) {
	if len(h.pairs) == 0 {
		s.tuples.forget(key) // nothing to read by HMGET
		return
	}
	s.tuples.set(key, h)
}

// alignValues turns the reply of the HMGET of a confirmed prediction (values
// in the order of the hint's pairs) into values aligned with the "c:" fields
// of flat, as load_checkpoint (lib.lua) returns them. A value missing is
// lost data.
func alignValues(h tupleHint, flat []any, got []any, valuesKey string) ([]any, error) {
	byField := make(map[string]any, len(h.pairs)/2)
	for i := 0; i+1 < len(h.pairs) && i/2 < len(got); i += 2 {
		byField[h.pairs[i]] = got[i/2]
	}
	out := make([]any, 0, len(h.pairs)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		f, _ := flat[i].(string)
		if !strings.HasPrefix(f, prefixChannel) {
			continue
		}
		v, ok := byField[f]
		if !ok {
			return nil, corrupt("get tuple: confirmed prediction lacks %q", f)
		}
		if v == nil {
			val, _ := flat[i+1].(string)
			return nil, dataLoss("get tuple: value %s of checkpoint in %s is missing", mb.Blob(f[len(prefixChannel):], val), valuesKey)
		}
		out = append(out, v)
	}
	return out, nil
}
