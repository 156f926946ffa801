package redisstore

import (
	"errors"
	"testing"
)

func TestCompileFilter(t *testing.T) {
	tests := []struct {
		filter map[string]any
		want   string
	}{
		{nil, ""},
		{map[string]any{}, ""},
		{map[string]any{"a": 1}, `[[["a"],"eq",1]]`},
		{map[string]any{"a.b": "x<y"}, `[[["a","b"],"eq","x<y"]]`},
		{map[string]any{"s": map[string]any{"$lt": 5.5, "$gte": -1}, "a": nil}, `[[["a"],"eq",null],[["s"],"ge",-1],[["s"],"lt",5.5]]`},
		{map[string]any{"o": map[string]any{"y": 1.0, "x": []any{true}}}, `[[["o"],"eq",{"x":[true],"y":1}]]`},
		{map[string]any{"o": map[string]any{"$ne": map[string]any{"k": "v"}}}, `[[["o"],"ne",{"k":"v"}]]`},
		{map[string]any{"s": map[string]any{"$gt": "abc", "$lte": "abd"}}, `[[["s"],"gt","abc"],[["s"],"le","abd"]]`},
	}
	for _, tt := range tests {
		got, err := compileFilter(tt.filter)
		if err != nil || got != tt.want {
			t.Errorf("compileFilter(%v) = %s, %v; want %s", tt.filter, got, err, tt.want)
		}
	}
	for _, bad := range []map[string]any{
		{"a": map[string]any{"$in": []any{1}}},
		{"a": map[string]any{"$gt": 1, "b": 2}},
		{"a": map[string]any{"$gt": false}},
		{"a": map[string]any{"$lt": map[string]any{}}},
		{"": 1},
		{"a.": 1},
	} {
		if _, err := compileFilter(bad); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("compileFilter(%v) = %v, want ErrInvalidFilter", bad, err)
		}
	}
}

func TestJSONDepth(t *testing.T) {
	for s, want := range map[string]int{`1`: 0, `{}`: 1, `[[1]]`: 2, `{"a":"[[[["}`: 1, `["\"[["]`: 1, `[{"a":[{}]}]`: 4} {
		if got := jsonDepth([]byte(s)); got != want {
			t.Errorf("jsonDepth(%s) = %d, want %d", s, got, want)
		}
	}
}
