package strbox

import (
	"fmt"
	"reflect"
	"testing"
)

// TestStringAny checks that a string boxed by Any is an ordinary
// string to every user of an any.
func TestStringAny(t *testing.T) {
	s := []string{"hello", ""}
	a, e := Any(&s[0]), Any(&s[1])
	if v, ok := a.(string); !ok || v != "hello" {
		t.Fatalf("type assertion: %q, %v", v, ok)
	}
	if a != any("hello") || e != any("") || a == e {
		t.Fatal("comparison with ordinary boxed strings")
	}
	if !reflect.DeepEqual(map[string]any{"k": a}, map[string]any{"k": "hello"}) {
		t.Fatal("reflect.DeepEqual")
	}
	if reflect.TypeOf(a) != reflect.TypeOf("") || fmt.Sprint(a) != "hello" {
		t.Fatal("reflection and fmt")
	}
	switch v := a.(type) {
	case string:
		if v != "hello" {
			t.Fatal(v)
		}
	default:
		t.Fatalf("type switch: %T", v)
	}
	m := map[any]int{a: 1}
	if m["hello"] != 1 {
		t.Fatal("as a map key")
	}
}

// TestPairs: every pair of the map, each field at an even position followed
// by its value, as ordinary strings.
func TestPairs(t *testing.T) {
	for _, m := range []map[string]string{{}, {"a": "1"}, {"v": "4", "c:x": "", "p": "01J"}} {
		got := Pairs(m)
		if len(got) != 2*len(m) {
			t.Fatalf("%d items for %d pairs", len(got), len(m))
		}
		back := map[string]string{}
		for i := 0; i < len(got); i += 2 {
			f, ok1 := got[i].(string)
			v, ok2 := got[i+1].(string)
			if !ok1 || !ok2 {
				t.Fatalf("pair %d of %T, %T", i/2, got[i], got[i+1])
			}
			back[f] = v
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("pairs %v of %v", got, m)
		}
	}
}
