package redisstore

import (
	"errors"
	"math"
	"testing"
)

func TestFilterMatch(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		filter map[string]any
		doc    string
		want   bool
	}{
		{nil, `{}`, true},
		{map[string]any{"a": 1}, `{"a":1}`, true},
		{map[string]any{"a": 1.0}, `{"a":1}`, true},
		{map[string]any{"a": 1}, `{"a":"1"}`, false},
		{map[string]any{"a.b": "x<y"}, `{"a":{"b":"x<y"}}`, true},
		{map[string]any{"a.b": 1}, `{"a.b":1}`, true},
		{map[string]any{"a.b": 1}, `{"a.b":2,"a":{"b":1}}`, false},
		{map[string]any{"a": nil}, `{"b":1}`, true},
		{map[string]any{"a": nil}, `{"a":null}`, true},
		{map[string]any{"e": []any{}}, `{"e":{}}`, false},
		{map[string]any{"e": map[string]any{}}, `{"e":[]}`, false},
		{map[string]any{"e": []any{}}, `{"e":[]}`, true},
		{map[string]any{"e": map[string]any{}}, `{"e":{}}`, true},
		{map[string]any{"e": []any{[]any{}}}, `{"e":[{}]}`, false},
		{map[string]any{"o": map[string]any{"y": 1.0, "x": []any{true}}}, `{"o":{"x":[true],"y":1}}`, true},
		{map[string]any{"o": map[string]any{"$ne": map[string]any{"k": "v"}}}, `{"o":{"k":"v"}}`, false},
		{map[string]any{"s": map[string]any{"$gt": "abc", "$lte": "abd"}}, `{"s":"abd"}`, true},
		{map[string]any{"s": map[string]any{"$gt": "abc", "$lte": "abd"}}, `{"s":"abc"}`, false},
		{map[string]any{"n": map[string]any{"$lt": inf}}, `{"n":1e300}`, true},
		{map[string]any{"n": map[string]any{"$lt": inf}}, `{"n":"x"}`, false},
		{map[string]any{"n": map[string]any{"$lte": float32(inf)}}, `{"n":-5}`, true},
		{map[string]any{"n": map[string]any{"$gt": -inf}}, `{"n":-1e300}`, true},
		{map[string]any{"n": map[string]any{"$gt": -inf}}, `{}`, false},
		{map[string]any{"n": map[string]any{"$gt": inf}}, `{"n":1}`, false},
		{map[string]any{"n": map[string]any{"$lt": -inf}}, `{"n":1}`, false},
		{map[string]any{"n": map[string]any{"$eq": nan}}, `{"n":1}`, false},
		{map[string]any{"n": nan}, `{}`, false},
		{map[string]any{"n": map[string]any{"$ne": nan}}, `{"n":1}`, true},
		{map[string]any{"n": map[string]any{"$gte": nan}}, `{"n":1}`, false},
		{map[string]any{"n": []any{1, inf}}, `{"n":[1,1]}`, false},
		{map[string]any{"n": map[string]any{"$ne": []float64{inf}}}, `{"n":[1]}`, true},
		{map[string]any{"big": int64(1) << 62}, `{"big":4611686018427387904}`, true},
	}
	for _, tt := range tests {
		f, err := compileFilter(tt.filter)
		if err != nil {
			t.Fatalf("compileFilter(%v): %v", tt.filter, err)
		}
		if got := f.match(tt.doc); got != tt.want {
			t.Errorf("filter %v on %s = %v, want %v", tt.filter, tt.doc, got, tt.want)
		}
	}
	for _, bad := range []map[string]any{
		{"a": map[string]any{"$in": []any{1}}},
		{"a": map[string]any{"$gt": 1, "b": 2}},
		{"a": map[string]any{"$gt": false}},
		{"a": map[string]any{"$lt": map[string]any{}}},
		{"a": map[string]any{"$lt": nil}},
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
