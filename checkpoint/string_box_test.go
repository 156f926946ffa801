package checkpoint

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestStringAny checks that a string boxed by stringAny is an ordinary
// string to every user of an any.
func TestStringAny(t *testing.T) {
	s := []string{"hello", ""}
	a, e := stringAny(&s[0]), stringAny(&s[1])
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

// TestBoxedStringsSurviveGC decodes many strings, drops everything but the
// decoded value, collects, and checks every string: the slabs the boxes
// point into must stay alive as long as the value does.
func TestBoxedStringsSurviveGC(t *testing.T) {
	want := make([]any, 2000)
	for i := range want {
		want[i] = map[string]any{"id": fmt.Sprintf("msg-%06d", i), "text": strings.Repeat(fmt.Sprint(i), 20), "type": "ai"}
	}
	_, data, err := MsgpackSerializer{}.DumpsTyped(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMsgpack(string(data))
	if err != nil {
		t.Fatal(err)
	}
	data = nil
	for range 3 {
		runtime.GC()
		_ = make([]byte, 1<<20) // reuse freed memory, if anything was freed early
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("decoded value changed after garbage collection")
	}
}
