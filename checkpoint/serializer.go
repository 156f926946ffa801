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
