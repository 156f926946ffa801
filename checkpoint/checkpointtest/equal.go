package checkpointtest

import (
	"bytes"
	"math"
	"reflect"

	"github.com/graphstate/redcheck/checkpoint"
)

// equal is Python-style deep equality for values that went through a saver:
// numbers compare by value whatever their Go type (1 == int64(1) == 1.0),
// maps and slices element by element, []byte by bytes, and a DeltaSnapshot
// only equals a DeltaSnapshot with an equal value.
func equal(a, b any) bool {
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an.eq(bn)
	}
	switch av := a.(type) {
	case nil:
		return b == nil
	case checkpoint.DeltaSnapshot:
		bv, ok := b.(checkpoint.DeltaSnapshot)
		return ok && equal(av.Value, bv.Value)
	case []byte:
		bv, ok := b.([]byte)
		return ok && bytes.Equal(av, bv)
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	}
	if _, ok := b.(checkpoint.DeltaSnapshot); ok {
		return false
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	switch {
	case ra.Kind() == reflect.Map && rb.Kind() == reflect.Map:
		if ra.Len() != rb.Len() || ra.Type().Key().Kind() != reflect.String || rb.Type().Key().Kind() != reflect.String {
			return false
		}
		for _, k := range ra.MapKeys() {
			bvv := rb.MapIndex(reflect.ValueOf(k.String()).Convert(rb.Type().Key()))
			if !bvv.IsValid() || !equal(ra.MapIndex(k).Interface(), bvv.Interface()) {
				return false
			}
		}
		return true
	case isList(ra) && isList(rb):
		if ra.Len() != rb.Len() {
			return false
		}
		for i := range ra.Len() {
			if !equal(ra.Index(i).Interface(), rb.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func isList(v reflect.Value) bool {
	return (v.Kind() == reflect.Slice || v.Kind() == reflect.Array) && v.Type().Elem().Kind() != reflect.Uint8
}

// num is a number normalised for comparison: integers exactly, other values
// as float64.
type num struct {
	isInt bool
	i     int64
	f     float64
}

func (a num) eq(b num) bool {
	if a.isInt && b.isInt {
		return a.i == b.i
	}
	af, bf := a.f, b.f
	if a.isInt {
		af = float64(a.i)
	}
	if b.isInt {
		bf = float64(b.i)
	}
	return af == bf
}

// number converts any Go integer or float to a num.
func number(v any) (num, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return num{isInt: true, i: rv.Int()}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return num{f: float64(u)}, true
		}
		return num{isInt: true, i: int64(u)}, true
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return num{isInt: true, i: int64(f)}, true
		}
		return num{f: f}, true
	}
	return num{}, false
}
