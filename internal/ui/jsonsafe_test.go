package ui

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
)

func TestJSONValue(t *testing.T) {
	deep := any("leaf")
	for range 100 {
		deep = []any{deep}
	}
	in := map[string]any{
		"nan":   math.NaN(),
		"inf":   float32(math.Inf(1)),
		"bytes": []byte("hi"),
		"time":  time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), // MarshalJSON fails past 9999
		"list":  []any{int64(1), uint64(math.MaxUint64), "s", nil, true},
		"delta": checkpoint.DeltaSnapshot{Value: []any{math.Inf(-1)}},
		"ptr":   &checkpoint.DeltaSnapshot{Value: "x"},
		"chan":  make(chan int),
		"deep":  deep,
	}
	data, err := json.Marshal(jsonValue(in))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["nan"] != "NaN" || got["inf"] != "+Inf" || got["bytes"].(map[string]any)["$bytes"] != "aGk=" ||
		got["time"] != "12000-01-01T00:00:00Z" || got["ptr"].(map[string]any)["$delta"] != "x" {
		t.Errorf("converted: %s", data)
	}
	if d := got["delta"].(map[string]any)["$delta"].([]any); d[0] != "-Inf" {
		t.Errorf("delta: %v", d)
	}
	if !strings.Contains(string(data), "nested too deep") || !strings.HasPrefix(got["chan"].(string), "0x") {
		t.Errorf("deep or chan: %s", data)
	}
}
