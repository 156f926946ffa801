package keys_test

import (
	mb "github.com/graphstate/redcheck/internal/member"
	"testing"

	"github.com/graphstate/redcheck/internal/formatvec"
	"github.com/graphstate/redcheck/internal/keys"
)

// keysDoc is testdata/format/keys.json.
type keysDoc struct {
	Description string `json:"description"`
	Format      int    `json:"format"`
	// EncodeBytes[b] is Encode of the one-byte string b, for every byte.
	EncodeBytes []string   `json:"encode_bytes"`
	Cases       []keysCase `json:"cases"`
	Invalid     []invalid  `json:"invalid"`
}

type keysInput struct {
	Prefix       string        `json:"prefix"`
	Shards       int           `json:"shards"`
	ThreadID     formatvec.Bin `json:"thread_id"`
	Namespace    formatvec.Bin `json:"namespace"`
	RunID        formatvec.Bin `json:"run_id"`
	Generation   string        `json:"generation"`
	CheckpointID string        `json:"checkpoint_id"`
}

type keysCase struct {
	Name    string    `json:"name"`
	Input   keysInput `json:"input"`
	Shard   int       `json:"shard"`
	Encoded struct {
		ThreadID  string `json:"thread_id"`
		Namespace string `json:"namespace"`
		RunID     string `json:"run_id"`
	} `json:"encoded"`
	Keys struct {
		Meta        string `json:"meta"`
		Threads     string `json:"threads"`
		All         string `json:"all"`
		Run         string `json:"run"`
		GC          string `json:"gc"`
		Feed        string `json:"feed"`
		Head        string `json:"head"`
		Events      string `json:"events"`
		NSSet       string `json:"ns_set"`
		ThreadIndex string `json:"thread_index"`
		NSIndex     string `json:"ns_index"`
		Blobs       string `json:"blobs"`
		Checkpoint  string `json:"checkpoint"`
		Early       string `json:"early"`
		EarlyIndex  string `json:"early_index"`
	} `json:"keys"`
	Members struct {
		All         formatvec.Bin `json:"all_and_run"`
		ThreadIndex formatvec.Bin `json:"thread_index"`
		NSIndex     string        `json:"ns_index"`
		NSSet       string        `json:"ns_set"`
		Threads     string        `json:"threads"`
		GC          formatvec.Bin `json:"gc"`
	} `json:"members"`
}

// invalid is an input every implementation must refuse.
type invalid struct {
	What  string        `json:"what"` // prefix, shards, checkpoint_id, generation, thread_id, run_id
	Value formatvec.Bin `json:"value"`
}

type keysInputGo struct {
	prefix                   string
	shards                   int
	thread, ns, run, gen, id string
}

var keysInputs = []struct {
	name string
	in   keysInputGo
}{
	{"plain", keysInputGo{"redcheck", 0, "thread-1", "", "run-1", "abcdefghijklm", "1ef4f797-8335-6428-8001-8a1503f9b875"}},
	{"hash tag braces in every component", keysInputGo{"redcheck", 16, "{x}", "a}b{c", "{run}", "a2b3c4d5e6f7g", "01J8Z3K4M5N6P7Q8R9S0T1V2W3"}},
	{"colon and percent", keysInputGo{"app:v1", 16, ":", "%", "%41:", "zzzzzzzzzzzzz", "~!$&'()+,;=@-_."}},
	{"NUL bytes", keysInputGo{"p", 16, "\x00", "a\x00b", "\x00\x00", "a", "x"}},
	{"unicode", keysInputGo{"redcheck", 16, "日本語", "名前空間", "走る", "mnopqrstuvwx2", "1ef4f797-8335-6428-8001-8a1503f9b875"}},
	{"invalid UTF-8", keysInputGo{"redcheck", 16, "\xff\xfe", "\xc3", "\x80", "abc", "a/b<c>d#e^f|g"}},
	{"subgraph namespace", keysInputGo{"redcheck", 16, "user:42", "node:6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab|inner:0f1e2d3c-4b5a-6978-8a9b-abcdef012345", "6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", "qrstuvwxyz234", "1ef4f797-8335-6428-8001-8a1503f9b875"}},
	{"spaces and slashes", keysInputGo{"redcheck", 7, "a b/c", " ", "a\tb", "k", "A"}},
	{"one shard", keysInputGo{"r", 1, "thread-1", "ns", "run", "g", "1"}},
	{"most shards", keysInputGo{"redcheck", keys.MaxShards, "thread-1", "", "run-1", "abcdefghijklmnop", "1ef4f797-8335-6428-8001-8a1503f9b875"}},
	{"every safe byte", keysInputGo{"P", 16, "AZaz09-_.~@+=,;!$&'()/|^<>#", "", "r", "bbbbbbbbbbbbb", "!\"#$&'()+,-./09;<=>@AZ^_`az|~"}},
}

var invalidInputs = []struct{ what, value string }{
	{"prefix", ""},
	{"prefix", "a{b"},
	{"prefix", "a}b"},
	{"prefix", "a b"},
	{"prefix", "a\x00b"},
	{"prefix", "a\x7fb"},
	{"shards", "-1"},
	{"shards", "16385"},
	{"checkpoint_id", ""},
	{"checkpoint_id", "a:b"},
	{"checkpoint_id", "a%b"},
	{"checkpoint_id", "a b"},
	{"checkpoint_id", "a{b"},
	{"checkpoint_id", "a*b"},
	{"checkpoint_id", "a?b"},
	{"checkpoint_id", "a[b]"},
	{"checkpoint_id", "a\\b"},
	{"checkpoint_id", "日本"},
	{"checkpoint_id", string(make([]byte, 129))},
	{"generation", ""},
	{"generation", "ABC"},
	{"generation", "a1"},
	{"generation", "a8"},
	{"generation", "abcdefghijklmnopq"},
	{"thread_id", ""},
	{"run_id", ""},
}

// refused reports whether the implementation refuses an invalid input.
func refused(t *testing.T, what, value string) bool {
	t.Helper()
	var err error
	switch what {
	case "prefix":
		_, err = keys.New(value, 0)
	case "shards":
		n := map[string]int{"-1": -1, "16385": keys.MaxShards + 1}[value]
		_, err = keys.New("p", n)
	case "checkpoint_id":
		err = keys.ValidateID(value)
	case "generation":
		err = keys.ValidateGen(value)
	case "thread_id":
		err = keys.ValidateThreadID(value)
	case "run_id":
		err = keys.ValidateRunID(value)
	default:
		t.Fatalf("unknown invalid input kind %q", what)
	}
	return err != nil
}

func buildKeysDoc(t *testing.T) keysDoc {
	doc := keysDoc{
		Description: "Keys of the redcheck storage format (docs/storage-format.md). encode_bytes[b] is Encode of the one-byte string with byte value b. " +
			"Each case gives inputs (prefix, shards where 0 means the default 16, thread ID, namespace, run ID as text when valid UTF-8 and always as hex, generation, checkpoint ID) " +
			"and the shard, the encoded components, every key and the members of the indexes. Members hold the byte 0: use their hex. " +
			"invalid lists inputs every implementation must refuse.",
		Format: keys.FormatVersion,
	}
	for b := 0; b < 256; b++ {
		doc.EncodeBytes = append(doc.EncodeBytes, keys.Encode(string([]byte{byte(b)})))
	}
	for _, tc := range keysInputs {
		in := tc.in
		l, err := keys.New(in.prefix, in.shards)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, err := range []error{keys.ValidateThreadID(in.thread), keys.ValidateNamespace(in.ns), keys.ValidateRunID(in.run), keys.ValidateGen(in.gen), keys.ValidateID(in.id)} {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		var c keysCase
		c.Name = tc.name
		c.Input = keysInput{Prefix: in.prefix, Shards: in.shards, ThreadID: formatvec.B(in.thread), Namespace: formatvec.B(in.ns),
			RunID: formatvec.B(in.run), Generation: in.gen, CheckpointID: in.id}
		n := l.Shard(in.thread)
		c.Shard = n
		c.Encoded.ThreadID, c.Encoded.Namespace, c.Encoded.RunID = keys.Encode(in.thread), keys.Encode(in.ns), keys.Encode(in.run)
		for _, e := range []struct{ plain, enc string }{{in.thread, c.Encoded.ThreadID}, {in.ns, c.Encoded.Namespace}, {in.run, c.Encoded.RunID}} {
			if dec, err := keys.Decode(e.enc); err != nil || dec != e.plain {
				t.Fatalf("%s: Decode(%q) = %q, %v; want %q", tc.name, e.enc, dec, err, e.plain)
			}
		}
		k := &c.Keys
		k.Meta, k.Threads, k.All, k.Run, k.GC, k.Feed = l.Meta(), l.Threads(n), l.All(n), l.Run(n, in.run), l.GC(n), l.Feed(n)
		k.Head, k.Events = l.Head(in.thread), l.Events(in.thread)
		k.NSSet, k.ThreadIndex = l.Namespaces(in.thread, in.gen), l.ThreadIndex(in.thread, in.gen)
		k.NSIndex, k.Blobs = l.Index(in.thread, in.gen, in.ns), l.Blobs(in.thread, in.gen, in.ns)
		k.Checkpoint = l.Checkpoint(in.thread, in.gen, in.ns, in.id)
		k.Early, k.EarlyIndex = l.Early(in.thread, in.ns, in.id), l.EarlyIndex(n)
		if th, ns, id, err := l.ParseCheckpointKey(k.Checkpoint); err != nil || th != in.thread || ns != in.ns || id != in.id {
			t.Fatalf("%s: ParseCheckpointKey(%q) = %q, %q, %q, %v", tc.name, k.Checkpoint, th, ns, id, err)
		}
		member := mb.Of(in.id, in.thread, in.ns, in.gen)
		if id, th, ns, g, err := mb.Parse(member); err != nil || id != in.id || th != in.thread || ns != in.ns || g != in.gen {
			t.Fatalf("%s: ParseMember(%q) = %q, %q, %q, %q, %v", tc.name, member, id, th, ns, g, err)
		}
		m := &c.Members
		m.All = formatvec.B(member)
		// The thread index, namespace set, registry and reclaim queue
		// members are built by the scripts (put.lua, lib.lua retire), not by
		// package keys; these are what the scripts write.
		m.ThreadIndex = formatvec.B(in.id + mb.Sep + keys.Encode(in.ns))
		m.NSIndex = in.id
		m.NSSet = keys.Encode(in.ns)
		m.Threads = keys.Encode(in.thread)
		m.GC = formatvec.B(keys.Encode(in.thread) + mb.Sep + in.gen)
		doc.Cases = append(doc.Cases, c)
	}
	for _, iv := range invalidInputs {
		if !refused(t, iv.what, iv.value) {
			t.Fatalf("%s %q is accepted", iv.what, iv.value)
		}
		doc.Invalid = append(doc.Invalid, invalid{What: iv.what, Value: formatvec.B(iv.value)})
	}
	return doc
}

// TestFormatVectorsKeys checks testdata/format/keys.json against package
// keys (REDCHECK_UPDATE_VECTORS=1 rewrites it).
func TestFormatVectorsKeys(t *testing.T) {
	formatvec.Check(t, "keys.json", buildKeysDoc(t))
}
