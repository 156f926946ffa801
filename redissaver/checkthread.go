package redissaver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	mb "github.com/graphstate/redcheck/internal/member"
)

// thread checks the reply of check_thread.lua for one thread.
func (c *checker) thread(enct string, reply []any, runs map[string]bool) {
	th, err := keys.Decode(enct)
	if err != nil {
		th = enct
	}
	registered := c.d.num(reply[0]) == 1
	inThreadIndex := map[string]bool{} // id \0 encoded ns
	for _, m := range c.d.list(reply[1]) {
		id, encns, ok := strings.Cut(c.d.str(m), mb.Sep)
		_, nserr := keys.Decode(encns)
		if !ok || keys.ValidateID(id) != nil || nserr != nil {
			c.add(KindBadEntry, th, "", "", fmt.Sprintf("thread index member %q is not id \\0 namespace", c.d.str(m)))
			continue
		}
		inThreadIndex[c.d.str(m)] = true
	}
	live := 0
	for _, entry := range reply[2:] {
		live += c.namespace(th, c.d.list(entry), inThreadIndex, runs)
	}
	switch {
	case live > 0 && !registered:
		c.add(KindMissingIndexEntry, th, "", "", "the thread has checkpoints but is not in its shard's registry")
	case live == 0 && registered:
		c.lost(KindStaleEntry, th, "", "", "the registry names a thread without checkpoints")
	}
	if live > 0 || registered {
		c.res.Threads++
	}
}

// namespace checks one namespace entry of check_thread.lua and returns the
// number of checkpoints it holds.
func (c *checker) namespace(th string, e []any, inThreadIndex, runs map[string]bool) int {
	if len(e) != 5 {
		c.add(KindBadEntry, th, "", "", "namespace entry of the check reply is malformed")
		return 0
	}
	encns, inSet := c.d.str(e[0]), c.d.num(e[1]) == 1
	ns, err := keys.Decode(encns)
	if err != nil {
		c.add(KindBadEntry, th, encns, "", "namespace is not encoded")
		ns = encns
	}
	inIndex := map[string]bool{}
	for _, id := range c.d.list(e[2]) {
		if keys.ValidateID(c.d.str(id)) != nil {
			c.add(KindBadEntry, th, ns, "", fmt.Sprintf("namespace index member %q is no checkpoint id", c.d.str(id)))
		}
		inIndex[c.d.str(id)] = true
	}
	blobs := map[string]string{}
	bf := c.d.list(e[3])
	for i := 0; i+1 < len(bf); i += 2 {
		blobs[c.d.str(bf[i])] = c.d.str(bf[i+1])
	}
	if _, ok := blobs[valuesMarker]; !ok && len(inIndex) > 0 {
		// A namespace's values hash exists from its first Put on: lost.
		c.add(KindLostKey, th, ns, "", "values hash of the namespace is missing")
	}
	cps := c.d.list(e[4])
	exists := map[string]bool{}
	for _, cp := range cps {
		if f := c.d.list(cp); len(f) == 4 && len(c.d.list(f[1])) > 0 {
			exists[c.d.str(f[0])] = true
		}
	}
	live := 0
	decoded := map[string]bool{} // blob fields already decoded
	for _, cp := range cps {
		f := c.d.list(cp)
		if len(f) != 4 {
			continue
		}
		id, flat, inAll, inRun := c.d.str(f[0]), c.d.list(f[1]), c.d.num(f[2]), c.d.num(f[3])
		if !exists[id] {
			if inIndex[id] {
				c.lost(KindMissingCheckpoint, th, ns, id, "named by the namespace index")
			}
			if inThreadIndex[id+mb.Sep+encns] {
				c.lost(KindMissingCheckpoint, th, ns, id, "named by the thread index")
			}
			continue
		}
		live++
		c.res.Checkpoints++
		for _, miss := range []struct {
			absent bool
			what   string
		}{
			{!inIndex[id], "the namespace index"},
			{!inThreadIndex[id+mb.Sep+encns], "the thread index"},
			{inAll != 1, "the shard index"},
		} {
			if miss.absent {
				c.add(KindMissingIndexEntry, th, ns, id, "not in "+miss.what)
			}
		}
		run := c.d.field(flat, fieldRunKey)
		switch inRun {
		case 0:
			c.lost(KindMissingIndexEntry, th, ns, id, fmt.Sprintf("not in its run index %q", run))
		case -2:
			c.add(KindBadCheckpoint, th, ns, id, fmt.Sprintf("run index key %q lies outside the thread's shard", run))
		}
		if inRun >= 0 && run != "" {
			runs[run] = true
		}
		c.checkpoint(th, ns, id, flat, blobs, exists, decoded)
	}
	if live > 0 && !inSet {
		c.add(KindMissingIndexEntry, th, ns, "", nsNotInSet)
	}
	if live == 0 && inSet {
		c.lost(KindStaleEntry, th, ns, "", "the thread's namespace set names a namespace without checkpoints")
	}
	return live
}

// checkpoint checks the fields of one checkpoint hash.
func (c *checker) checkpoint(th, ns, id string, flat []any, blobs map[string]string, exists, decoded map[string]bool) {
	bad := func(kind, format string, args ...any) { c.add(kind, th, ns, id, fmt.Sprintf(format, args...)) }
	hasV := false
	for i := 0; i+1 < len(flat); i += 2 {
		f, v := c.d.str(flat[i]), c.d.str(flat[i+1])
		switch {
		case f == fieldV:
			hasV = true
			if _, err := strconv.Atoi(v); err != nil {
				bad(KindBadCheckpoint, "format version %q", v)
			}
		case f == fieldVersionsSeen:
			var seen map[string]map[string]string
			if err := json.Unmarshal([]byte(v), &seen); err != nil {
				bad(KindBadCheckpoint, "versions seen: %v", err)
			}
		case f == fieldUpdated:
			var u []string
			if err := json.Unmarshal([]byte(v), &u); err != nil {
				bad(KindBadCheckpoint, "updated channels: %v", err)
			}
		case f == fieldParent:
			if keys.ValidateID(v) != nil {
				bad(KindBadCheckpoint, "parent %q is no checkpoint id", v)
			} else if !exists[v] {
				c.add(KindDanglingParent, th, ns, id, fmt.Sprintf("parent %s does not exist", v))
			}
		case strings.HasPrefix(f, prefixChannel):
			ch := f[len(prefixChannel):]
			field := mb.Blob(ch, v)
			c.res.Values++
			stored, ok := blobs[field]
			switch {
			case !ok:
				bad(KindMissingBlob, "channel %q version %q has no value (blob field %q)", ch, storedVersion(v), field)
			case stored != "" && !decoded[field]:
				decoded[field] = true
				if _, err := c.s.decodeValue(c.ctx, channelPlace(th, ns, ch, storedVersion(v)), stored); err != nil {
					bad(KindBadValue, "channel %q version %q: %v", ch, storedVersion(v), err)
				}
			}
		case strings.HasPrefix(f, prefixMetadata):
			if _, err := checkpoint.DecodeMetadataValue([]byte(v)); err != nil {
				bad(KindBadCheckpoint, "metadata %q: %v", f[len(prefixMetadata):], err)
			}
		case strings.HasPrefix(f, prefixWrite):
			c.res.Writes++
			if _, err := c.s.decodeWrite(c.ctx, th, ns, id, f, v); err != nil {
				bad(KindBadWrite, "%v", err)
			}
		}
	}
	if !hasV {
		bad(KindBadCheckpoint, "no format version (field %q): a hash of writes without a checkpoint", fieldV)
	}
}
