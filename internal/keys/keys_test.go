package keys

import (
	"errors"
	"strings"
	"testing"
)

func mustLayout(t testing.TB, prefix string, shards int) Layout {
	t.Helper()
	l, err := New(prefix, shards)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestKeyStrings(t *testing.T) {
	l := mustLayout(t, "redcheck", 16)
	s := l.Shard("thread-1")
	base := l.ShardBase(s)
	tests := []struct{ name, got, want string }{
		{"threads", l.Threads(3), "redcheck:{3}:threads"},
		{"all", l.All(0), "redcheck:{0}:all"},
		{"run", l.Run(5, "run:1"), "redcheck:{5}:run:run%3A1"},
		{"thread base", l.ThreadBase("thread-1"), base + "t:thread-1"},
		{"meta", l.Meta(), "redcheck:meta"},
		{"gc", l.GC(2), "redcheck:{2}:gc"},
		{"head", l.Head("thread-1"), base + "t:thread-1"},
		{"namespaces", l.Namespaces("thread-1", "g2"), base + "t:thread-1:g:g2:ns"},
		{"thread index", l.ThreadIndex("thread-1", "g2"), base + "t:thread-1:g:g2:idx"},
		{"root index", l.Index("thread-1", "g2", ""), base + "t:thread-1:g:g2:n::idx"},
		{"child index", l.Index("thread-1", "g2", "child:1"), base + "t:thread-1:g:g2:n:child%3A1:idx"},
		{"blobs", l.Blobs("thread-1", "g2", "a|b:c"), base + "t:thread-1:g:g2:n:a|b%3Ac:blobs"},
		{"checkpoint", l.Checkpoint("thread-1", "g2", "", "01J0ABC"), base + "t:thread-1:g:g2:n::cp:01J0ABC"},
		{"hostile thread", l.Checkpoint("a}b{c", "g2", "*", "x"), l.ShardBase(l.Shard("a}b{c")) + "t:a%7Db%7Bc:g:g2:n:%2A:cp:x"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestShardIsStable(t *testing.T) {
	// FNV-1a 32 of "thread-1" is 0x6c1a2ad9 ... pinned so a change of hash is noticed.
	l := mustLayout(t, "p", 16)
	got := []int{l.Shard(""), l.Shard("thread-1"), l.Shard("a")}
	want := []int{0x811c9dc5 % 16, int(fnv32a("thread-1") % 16), int(fnv32a("a") % 16)}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("shard %d: got %d want %d", i, got[i], want[i])
		}
	}
	if l1 := mustLayout(t, "p", 1); l1.Shard("anything") != 0 {
		t.Error("one shard must map everything to 0")
	}
}

func fnv32a(s string) uint32 {
	h := uint32(0x811c9dc5)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func TestHashTagIsTheShard(t *testing.T) {
	l := mustLayout(t, "pre:fix", 64)
	for _, th := range []string{"t", "{x}", "a}b{c", "}", "{", "{}", strings.Repeat("z", 5000)} {
		k := l.Checkpoint(th, "abc", "{ns}", "id")
		open := strings.IndexByte(k, '{')
		closing := strings.IndexByte(k[open+1:], '}')
		tag := k[open+1 : open+1+closing]
		if want := strings.TrimSuffix(strings.TrimPrefix(l.ShardBase(l.Shard(th)), "pre:fix:{"), "}:"); tag != want {
			t.Errorf("thread %q: hash tag %q, want %q", th, tag, want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		shards int
		ok     bool
	}{
		{"redcheck", 0, true}, {"a:b", 1, true}, {"", 1, false}, {"a{b", 1, false},
		{"a}b", 1, false}, {"a b", 1, false}, {"p", -1, false}, {"p", MaxShards + 1, false},
		{strings.Repeat("p", 129), 1, false},
	} {
		_, err := New(tt.prefix, tt.shards)
		if (err == nil) != tt.ok {
			t.Errorf("New(%q, %d): err %v", tt.prefix, tt.shards, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%q): error %v does not wrap ErrInvalid", tt.prefix, err)
		}
	}
}

func TestValidateID(t *testing.T) {
	good := []string{"1ef4f797-8335-6428-8001-8a1503f9b875", "01J8Z3K4M5N6P7Q8R9S0T1V2W3", "a", strings.Repeat("x", 128)}
	bad := []string{"", "a b", "a:b", "a%b", "{x}", "a*", "é", "a\x00", strings.Repeat("x", 129)}
	for _, id := range good {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
	}
	for _, id := range bad {
		if err := ValidateID(id); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalid", id, err)
		}
	}
	if ValidateThreadID("") == nil || ValidateThreadID(strings.Repeat("t", MaxThreadIDLen+1)) == nil {
		t.Error("thread id limits not enforced")
	}
	if ValidateNamespace(strings.Repeat("n", MaxNamespaceLen+1)) == nil || ValidateNamespace("") != nil {
		t.Error("namespace limits wrong")
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, s := range []string{"", "a", "a:b", "child:1", "node:uuid|inner:uuid", "%", "%25", "{x}", "a b", "日本", "\x00\xff", "*?[]\\"} {
		e := Encode(s)
		for _, c := range []string{":", "{", "}", "*", "?", "[", "]", "\\", " ", "\x00"} {
			if strings.Contains(e, c) {
				t.Errorf("Encode(%q) = %q holds %q", s, e, c)
			}
		}
		d, err := Decode(e)
		if err != nil || d != s {
			t.Errorf("Decode(Encode(%q)) = %q, %v", s, d, err)
		}
	}
	for _, bad := range []string{"%", "%2", "%zz", "%2a", "a:b", "%41"} {
		if _, err := Decode(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestParse(t *testing.T) {
	l := mustLayout(t, "p:q", 16)
	th, ns, id, err := l.ParseCheckpointKey(l.Checkpoint("a:b", "g2", "c:d", "ID-1"))
	if err != nil || th != "a:b" || ns != "c:d" || id != "ID-1" {
		t.Fatalf("parse: %q %q %q %v", th, ns, id, err)
	}
	for _, bad := range []string{"", "p:q:{1}:t:x", "other:{1}:t:a:g:g2:n::cp:x", l.Index("a", "g2", ""),
		"p:q:{5}:t:a:g:G!:n::cp:x", "p:q:{5}:t:a:n::cp:x"} {
		if _, _, _, err := l.ParseCheckpointKey(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("parse %q: %v", bad, err)
		}
	}
}

// FuzzLayoutInjective proves that distinct (thread, ns, id) never share a
// checkpoint key: the key parses back to exactly its parts.
func FuzzLayoutInjective(f *testing.F) {
	f.Add("a", "", "id1")
	f.Add("a:b", "c", "id2")
	f.Add("a", "b:c", "id2")
	f.Add("{x}", "a}b{c", "x-y")
	f.Add("\x00", "%3A", "z")
	l := mustLayout(f, "rc", 16)
	f.Fuzz(func(t *testing.T, thread, ns, id string) {
		if ValidateThreadID(thread) != nil || ValidateNamespace(ns) != nil || ValidateID(id) != nil {
			return
		}
		gen := NewGen()
		k := l.Checkpoint(thread, gen, ns, id)
		th, n, i, err := l.ParseCheckpointKey(k)
		if err != nil || th != thread || n != ns || i != id {
			t.Fatalf("key %q parsed to %q %q %q %v", k, th, n, i, err)
		}
		if !strings.HasPrefix(k, l.ShardBase(l.Shard(thread))) {
			t.Fatalf("key %q not in its shard", k)
		}
	})
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// re-encodes to the same string.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "a", "%3A", "%", "%zz", "a%25b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Decode(s)
		if err != nil {
			return
		}
		if Encode(d) != s {
			t.Fatalf("Encode(Decode(%q)) = %q", s, Encode(d))
		}
	})
}
