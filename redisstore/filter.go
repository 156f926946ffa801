package redisstore

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

// Filter operators of SearchOptions.Filter.
var filterOps = map[string]string{
	"$eq":  "eq",
	"$ne":  "ne",
	"$gt":  "gt",
	"$gte": "ge",
	"$lt":  "lt",
	"$lte": "le",
}

// filter is a compiled SearchOptions.Filter: every condition must hold.
type filter []condition

// condition is one test of a filter on the value at one field.
type condition struct {
	field string   // the filter key, as given: a top-level key of that name wins
	path  []string // the key split at '.'
	op    string   // eq ne gt ge lt le, or "none" / "all" / "number" (non-finite operands)
	// operand, decoded from canonical JSON: nil, bool, string, json.Number,
	// []any or map[string]any.
	operand any
}

// compileFilter validates a filter and compiles it, in the order of the
// sorted filter keys. It returns nil for an empty filter.
func compileFilter(f map[string]any) (filter, error) {
	if len(f) == 0 {
		return nil, nil
	}
	var out filter
	for _, field := range sortedKeys(f) {
		labels := strings.Split(field, ".")
		if slices.Contains(labels, "") {
			return nil, errorf(ErrInvalidFilter, "field %q has an empty path element", field)
		}
		conds, err := conditions(field, f[field])
		if err != nil {
			return nil, err
		}
		for i := range conds {
			conds[i].field, conds[i].path = field, labels
		}
		out = append(out, conds...)
	}
	return out, nil
}

// conditions returns the conditions of one filter entry: an operator map
// ({"$gt": 1, "$lt": 5}) gives one per operator, anything else one plain
// equality.
func conditions(field string, want any) ([]condition, error) {
	opsMap, isMap := want.(map[string]any)
	hasOp := false
	if isMap {
		for k := range opsMap {
			if strings.HasPrefix(k, "$") {
				hasOp = true
			}
		}
	}
	if !hasOp {
		c, err := newCondition("eq", want)
		if err != nil {
			return nil, errorf(ErrInvalidFilter, "field %q: %v", field, err)
		}
		return []condition{c}, nil
	}
	var out []condition
	for _, k := range sortedKeys(opsMap) {
		op, ok := filterOps[k]
		if !ok {
			if strings.HasPrefix(k, "$") {
				return nil, errorf(ErrInvalidFilter, "field %q: unknown operator %q", field, k)
			}
			return nil, errorf(ErrInvalidFilter, "field %q: operator map mixes %q with operators", field, k)
		}
		c, err := newCondition(op, opsMap[k])
		if err != nil {
			return nil, errorf(ErrInvalidFilter, "field %q %s: %v", field, k, err)
		}
		if op != "eq" && op != "ne" && c.op == op {
			switch c.operand.(type) {
			case json.Number, string:
			default:
				return nil, errorf(ErrInvalidFilter, "field %q: %s needs a number or a string, not %v", field, k, opsMap[k])
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// newCondition compiles op with operand. An operand holding an infinite or
// NaN number, which no stored JSON value holds, compiles to what it means
// for every stored value: $lt +Inf and $gt -Inf hold for every number
// ("number"), $eq with it holds for nothing ("none"), $ne for everything
// ("all"), and every other comparison with NaN or on the wrong side of an
// infinity holds for nothing.
func newCondition(op string, operand any) (condition, error) {
	if x, ok := nonFiniteNumber(operand); ok {
		switch {
		case op == "ne":
			return condition{op: "all"}, nil
		case math.IsInf(x, 1) && (op == "lt" || op == "le"), math.IsInf(x, -1) && (op == "gt" || op == "ge"):
			return condition{op: "number"}, nil
		}
		return condition{op: "none"}, nil
	}
	if containsNonFinite(reflect.ValueOf(operand), 0) {
		switch op {
		case "eq":
			return condition{op: "none"}, nil
		case "ne":
			return condition{op: "all"}, nil
		}
	}
	enc, err := checkpoint.EncodeMetadataValue(operand)
	if err != nil {
		return condition{}, err
	}
	v, err := decodeJSON(enc)
	if err != nil {
		return condition{}, err
	}
	return condition{op: op, operand: v}, nil
}

// nonFiniteNumber reports whether v is a float that is infinite or NaN.
func nonFiniteNumber(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Float32 || rv.Kind() == reflect.Float64 {
		x := rv.Float()
		return x, math.IsInf(x, 0) || math.IsNaN(x)
	}
	return 0, false
}

// containsNonFinite reports whether v holds an infinite or NaN float at any
// depth (in slices, arrays, maps, pointers and interfaces).
func containsNonFinite(v reflect.Value, depth int) bool {
	if depth > MaxValueDepth || !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		x := v.Float()
		return math.IsInf(x, 0) || math.IsNaN(x)
	case reflect.Interface, reflect.Pointer:
		return !v.IsNil() && containsNonFinite(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if containsNonFinite(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if containsNonFinite(it.Value(), depth+1) {
				return true
			}
		}
	}
	return false
}

// decodeJSON decodes JSON keeping numbers as json.Number, so that arrays
// and objects stay apart and integers keep their digits.
func decodeJSON(j []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// match reports whether the stored value (canonical JSON) passes the
// filter. A value that does not decode to an object passes nothing.
func (f filter) match(value string) bool {
	doc, err := decodeJSON([]byte(value))
	if err != nil {
		return false
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for _, c := range f {
		if !c.test(lookup(obj, c.field, c.path)) {
			return false
		}
	}
	return true
}

// lookup returns the value at a filter key: the top-level field of that
// exact name when the value has one ("a.b" as a key), else the value at
// the dotted path; nil when there is none.
func lookup(obj map[string]any, field string, path []string) any {
	if v, ok := obj[field]; ok {
		return v
	}
	var v any = obj
	for _, label := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[label]
	}
	return v
}

func (c condition) test(v any) bool {
	switch c.op {
	case "all":
		return true
	case "none":
		return false
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "eq":
		return sameJSON(v, c.operand)
	case "ne":
		return !sameJSON(v, c.operand)
	}
	var cmp int
	switch w := c.operand.(type) {
	case json.Number:
		x, ok := v.(json.Number)
		if !ok {
			return false
		}
		a, err1 := x.Float64()
		b, err2 := w.Float64()
		if err1 != nil || err2 != nil {
			return false
		}
		switch {
		case a < b:
			cmp = -1
		case a > b:
			cmp = 1
		}
	case string:
		x, ok := v.(string)
		if !ok {
			return false
		}
		cmp = strings.Compare(x, w)
	default:
		return false
	}
	switch c.op {
	case "gt":
		return cmp > 0
	case "ge":
		return cmp >= 0
	case "lt":
		return cmp < 0
	}
	return cmp <= 0 // le
}

// sameJSON is deep equality of decoded JSON: numbers by value, a JSON null
// and a missing field alike, arrays and objects never equal to each other.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, err1 := x.Float64()
		fy, err2 := y.Float64()
		return err1 == nil && err2 == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, va := range x {
			if !sameJSON(va, y[k]) {
				return false
			}
		}
		for k, vb := range y {
			if _, ok := x[k]; !ok && vb != nil {
				return false
			}
		}
		return true
	}
	return a == b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
