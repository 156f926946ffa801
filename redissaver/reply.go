package redissaver

// reply decodes the values of script replies strictly: the first value that
// is not of the type docs/storage-format.md gives its place is recorded,
// and err reports it (ErrCorrupt), so a changed reply shape is an error,
// never a zero value read as data. It is the one owner of those types.
type reply struct{ err error }

func (r *reply) fail(want string, v any) {
	if r.err == nil {
		r.err = corrupt("script reply: %T %v where %s was expected", v, v, want)
	}
}

// str is a string.
func (r *reply) str(v any) string {
	s, ok := v.(string)
	if !ok {
		r.fail("a string", v)
	}
	return s
}

// optStr is a string, or Redis's nil (false from Lua): "".
func (r *reply) optStr(v any) string {
	if v == nil || v == false {
		return ""
	}
	return r.str(v)
}

// num is an integer.
func (r *reply) num(v any) int64 {
	n, ok := v.(int64)
	if !ok {
		r.fail("an integer", v)
	}
	return n
}

// list is an array.
func (r *reply) list(v any) []any {
	s, ok := v.([]any)
	if !ok {
		r.fail("an array", v)
	}
	return s
}

// field returns the value of field f in a flat hash reply, or "".
func (r *reply) field(flat []any, f string) string {
	for i := 0; i+1 < len(flat); i += 2 {
		if r.str(flat[i]) == f {
			return r.str(flat[i+1])
		}
	}
	return ""
}
