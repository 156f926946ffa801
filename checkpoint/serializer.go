package checkpoint

// Serializer turns channel values and write values into typed bytes and
// back. The type tag it returns is stored beside the bytes and handed back to
// LoadsTyped; it must be 1 to 64 bytes of [a-z0-9_./-].
//
// Implementations must round-trip nil, bool, integers (as int64), floats (as
// float64), strings, []byte, []any, map[string]any, Go structs (as
// map[string]any) and DeltaSnapshot, which must come back as a DeltaSnapshot
// and stay distinct from a plain value. DumpsTyped returns an error wrapping
// ErrSerialization for a value it cannot encode; LoadsTyped returns one for
// an unknown type tag or corrupted bytes. Neither panics.
type Serializer interface {
	DumpsTyped(v any) (typ string, data []byte, err error)
	LoadsTyped(typ string, data []byte) (any, error)
}

// DeltaSnapshot marks a channel value that seeds the reconstruction of a
// delta channel (see DeltaHistorian). Serializers keep it distinct from a
// plain value.
type DeltaSnapshot struct{ Value any }

// StringLoader is an optional interface of a Serializer: LoadsTypedString
// decodes data held in a string exactly as LoadsTyped decodes the same
// bytes, without the copy into a []byte that LoadsTyped needs. Strings of the
// value it returns may share memory with data (keeping all of it alive).
// MsgpackSerializer and JSONSerializer implement it; savers use it through
// LoadString.
type StringLoader interface {
	LoadsTypedString(typ, data string) (any, error)
}

// LoadString decodes data written with the type tag typ by ser: with
// LoadsTypedString when ser is a StringLoader, else with LoadsTyped of a
// copy of data.
func LoadString(ser Serializer, typ, data string) (any, error) {
	if sl, ok := ser.(StringLoader); ok {
		return sl.LoadsTypedString(typ, data)
	}
	return ser.LoadsTyped(typ, []byte(data))
}
