package member_test

import (
	"errors"
	"testing"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/member"
)

func TestMember(t *testing.T) {
	if got, want := member.Blob("messages", "0001.ab"), "8:messages0001.ab"; got != want {
		t.Errorf("Blob: %q, want %q", got, want)
	}
	if got, want := member.Of("id1", "t:1", "", "g2"), "id1\x00t%3A1\x00\x00g2"; got != want {
		t.Errorf("Of: %q, want %q", got, want)
	}
	id, th, ns, g, err := member.Parse(member.Of("id", "t\x00:", "n", "g2"))
	if err != nil || id != "id" || th != "t\x00:" || ns != "n" || g != "g2" {
		t.Fatalf("Parse: %q %q %q %q %v", id, th, ns, g, err)
	}
	for _, bad := range []string{"id\x00t\x00n", "id\x00t\x00n\x00", "id\x00t\x00n\x00G"} {
		if _, _, _, _, err := member.Parse(bad); !errors.Is(err, keys.ErrMalformed) {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

// FuzzMember proves Of injective: a member parses back to exactly its parts.
func FuzzMember(f *testing.F) {
	f.Add("id1", "a", "")
	f.Add("x-y", "{x}", "a}b{c")
	f.Add("z", "\x00", "%3A")
	f.Fuzz(func(t *testing.T, id, thread, ns string) {
		if keys.ValidateThreadID(thread) != nil || keys.ValidateNamespace(ns) != nil || keys.ValidateID(id) != nil {
			return
		}
		gen := keys.NewGen()
		m := member.Of(id, thread, ns, gen)
		i, th, n, g, err := member.Parse(m)
		if err != nil || i != id || th != thread || n != ns || g != gen {
			t.Fatalf("member %q parsed to %q %q %q %q %v", m, i, th, n, g, err)
		}
	})
}
