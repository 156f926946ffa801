package checkpoint

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/graphstate/redcheck/internal/canonjson"
)

// Type tags written by MsgpackSerializer and JSONSerializer.
const (
	// TagNull is the type tag of nil; its data is empty.
	TagNull = "null"
	// TagBytes is the type tag of a top-level []byte; its data is the bytes
	// themselves, unencoded.
	TagBytes = "bytes"
	// TagMsgpack is the type tag of a value encoded by MsgpackSerializer.
	TagMsgpack = "msgpack"
	// TagJSON is the type tag of a value encoded by JSONSerializer.
	TagJSON = "json"
	// TagDeltaPrefix prefixes the tag of the value of a DeltaSnapshot:
	// "delta/null", "delta/bytes", "delta/msgpack", "delta/json". Snapshots do
	// not nest.
	TagDeltaPrefix = "delta/"
)

// maxDepth bounds the nesting of containers (maps, arrays) that the decoders
// accept and the encoders produce. It matches encoding/json's own limit.
const maxDepth = canonjson.MaxDepth

// serErr returns an error wrapping ErrSerialization.
func serErr(format string, args ...any) error {
	return fmt.Errorf("checkpoint: "+format+": %w", append(args, ErrSerialization)...)
}

// serWrap returns an error wrapping both ErrSerialization and err.
func serWrap(what string, err error) error {
	return fmt.Errorf("checkpoint: %s: %w: %w", what, ErrSerialization, err)
}

// dumpsTyped implements Serializer.DumpsTyped for a serializer whose tag is
// tag and whose encoder is encode: nil, []byte and DeltaSnapshot (or a
// non-nil *DeltaSnapshot) are handled here, everything else goes to encode.
func dumpsTyped(v any, tag string, encode func(any) ([]byte, error)) (string, []byte, error) {
	prefix := ""
	switch d := v.(type) {
	case DeltaSnapshot:
		prefix, v = TagDeltaPrefix, d.Value
	case *DeltaSnapshot:
		if d != nil {
			prefix, v = TagDeltaPrefix, d.Value
		}
	}
	if prefix != "" {
		switch d := v.(type) {
		case DeltaSnapshot:
			return "", nil, serErr("nested DeltaSnapshot cannot be encoded")
		case *DeltaSnapshot:
			if d != nil {
				return "", nil, serErr("nested DeltaSnapshot cannot be encoded")
			}
		}
	}
	switch b := v.(type) {
	case nil:
		return prefix + TagNull, nil, nil
	case []byte:
		return prefix + TagBytes, append([]byte{}, b...), nil
	}
	data, err := encode(v)
	if err != nil {
		return "", nil, err
	}
	return prefix + tag, data, nil
}

// loadsTyped implements Serializer.LoadsTyped and StringLoader for both
// serializers. It accepts "null", "bytes", "msgpack" and "json", each
// optionally prefixed once by "delta/".
func loadsTyped(typ, data string) (any, error) {
	inner, delta := strings.CutPrefix(typ, TagDeltaPrefix)
	v, err := loadsPlain(inner, data)
	if err != nil {
		return nil, err
	}
	if delta {
		return DeltaSnapshot{Value: v}, nil
	}
	return v, nil
}

func loadsPlain(typ, data string) (any, error) {
	switch typ {
	case TagNull:
		if len(data) != 0 {
			return nil, serErr("type %q: unexpected %d bytes of data", typ, len(data))
		}
		return nil, nil
	case TagBytes:
		return append([]byte{}, data...), nil
	case TagMsgpack:
		return decodeMsgpack(data)
	case TagJSON:
		return decodeJSON(data)
	}
	return nil, serErr("unknown type tag %q", truncateTag(typ))
}

// truncateTag keeps error messages short when a hostile tag is huge.
func truncateTag(typ string) string {
	if len(typ) > 80 {
		return typ[:80] + "..."
	}
	return typ
}

// checkEncodable refuses values nested deeper than the decoders accept, which
// includes cyclic values (a map holding itself, a pointer loop): the msgpack
// encoder would otherwise recurse until the stack overflows. It follows what
// an encoder would: pointers, interfaces, map keys and values, elements of
// slices and arrays of non-scalar elements, and exported struct fields.
func checkEncodable(v any) error {
	return checkDynamic(v, 0)
}

// checkDynamic walks the dynamic values channel values are made of (maps of
// string to any, slices of any, scalars) without reflection, and hands
// anything else to checkDepth.
func checkDynamic(v any, depth int) error {
	if depth > maxReflectDepth {
		return serErr("value nested too deeply or cyclic")
	}
	switch x := v.(type) {
	case nil, string, bool, int, int64, float64, []byte:
		return nil
	case map[string]any:
		for _, e := range x {
			if err := checkDynamic(e, depth+2); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for _, e := range x {
			if err := checkDynamic(e, depth+2); err != nil {
				return err
			}
		}
		return nil
	}
	return checkDepth(reflect.ValueOf(v), depth)
}

// maxReflectDepth counts every reflect level: an []any or map[string]any
// element is two (the interface, then the container), so it lets through
// the maxDepth levels of containers that the decoders read back, and no
// more (a pointer or struct level counts too, which only refuses earlier): a
// value that encodes always decodes.
const maxReflectDepth = 2 * maxDepth

func checkDepth(v reflect.Value, depth int) error {
	if depth > maxReflectDepth {
		return serErr("value nested too deeply or cyclic")
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkDepth(v.Elem(), depth+1)
	case reflect.Map:
		if scalarKind(v.Type().Key().Kind()) && scalarKind(v.Type().Elem().Kind()) {
			return nil
		}
		it := v.MapRange()
		for it.Next() {
			if err := checkDepth(it.Key(), depth+1); err != nil {
				return err
			}
			if err := checkDepth(it.Value(), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if scalarKind(v.Type().Elem().Kind()) {
			return nil
		}
		for i := range v.Len() {
			if err := checkDepth(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if !t.Field(i).IsExported() && !t.Field(i).Anonymous {
				continue
			}
			if err := checkDepth(v.Field(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalarKind reports whether values of kind k hold no references.
func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16,
		reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Uintptr, reflect.Float32,
		reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}
