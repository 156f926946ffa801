package checkpoint

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

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
