package checkpoint

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

// stringAny returns the string *p as an any that points to *p instead of to
// a copy of it, so that it allocates nothing. *p must never change
// afterwards: the any is then indistinguishable from any(*p) (type
// switches, comparisons, reflection and the garbage collector see an
// ordinary string), and it keeps *p's memory alive.
func stringAny(p *string) (a any) {
	e := (*eface)(unsafe.Pointer(&a))
	e.typ = stringType
	e.data = unsafe.Pointer(p)
	return a
}
