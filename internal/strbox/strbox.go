// Package strbox turns strings into interface values (any) without
// allocating one string header per string: the headers live in slices the
// caller (or Pairs) allocates, and each any points into them. Decoders
// that return many strings as any (the msgpack reader, hash replies) use it.
package strbox

import "unsafe"

// eface is the layout of an interface value with no methods (an any): its
// dynamic type, and a pointer to its value. A string in an any is always
// held by pointer, to a string header the runtime treats as immutable.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// stringType is the type word of a string in an any.
var stringType = func() unsafe.Pointer {
	var a any = ""
	return (*eface)(unsafe.Pointer(&a)).typ
}()

// Any returns the string *p as an any that points to *p instead of to
// a copy of it, so that it allocates nothing. *p must never change
// afterwards: the any is then indistinguishable from any(*p) (type
// switches, comparisons, reflection and the garbage collector see an
// ordinary string), and it keeps *p's memory alive.
func Any(p *string) (a any) {
	e := (*eface)(unsafe.Pointer(&a))
	e.typ = stringType
	e.data = unsafe.Pointer(p)
	return a
}

// Pairs returns the field/value pairs of a hash as one flat list, fields at
// even positions, in no particular order: two allocations, whatever the
// number of pairs.
func Pairs(m map[string]string) []any {
	strs := make([]string, 0, 2*len(m))
	out := make([]any, 2*len(m))
	for f, v := range m {
		strs = append(strs, f, v)
	}
	for i := range strs {
		out[i] = Any(&strs[i])
	}
	return out
}
