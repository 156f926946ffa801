package redissaver

// The size memory: per thread, whether the saver's last script read of each
// kind found the values small, so that the next one asks for them whole and
// the script spends no HSTRLEN on their sizes (values.go reads the values a
// script leaves out; docs/storage-format.md, "Values out of Lua").

// inlineBytes is lib.lua's inline_bytes: the bytes of values up to which
// a script asked to leave them out of Lua still returns them itself.
const inlineBytes = 32 << 10

// The kinds of read whose values' size the saver remembers, per thread.
const (
	readTuple = iota // a GetTuple read by the script
	readPage         // a List page of the thread
)

// smallReads is what the saver remembers of a thread's reads: whether the
// last of each kind found the values small (at most inlineBytes).
type smallReads [2]bool

// valuesAsk returns how a script read of kind kind of thread th asks for
// the values: whole (listWhole) when the saver's last such read of the
// thread found them small, so that the script spends no HSTRLEN on their
// sizes; else listAuto, which leaves large ones out of Lua. A listing of
// every thread ("") always asks listAuto.
func (s *Saver) valuesAsk(th string, kind int) string {
	if th == "" {
		return listAuto
	}
	if r, _ := s.small.get(th); r[kind] {
		return listWhole
	}
	return listAuto
}

// learnValues records the bytes of the values a read of kind kind of thread
// th returned (counted once per checkpoint that holds them).
func (s *Saver) learnValues(th string, kind int, bytes int) {
	r, _ := s.small.get(th)
	if small := bytes <= inlineBytes; r[kind] != small {
		r[kind] = small
		s.small.set(th, r)
	}
}

// learnPage records the bytes of the values a page of thread th ("" for
// every thread) returned, and returns how the next page asks for them.
func (s *Saver) learnPage(th string, items []cpReply) string {
	if th != "" && len(items) > 0 {
		bytes := 0
		for _, it := range items {
			bytes += valuesBytes(it.values)
		}
		s.learnValues(th, readPage, bytes)
	}
	return s.valuesAsk(th, readPage)
}

// valuesBytes returns the bytes of the values of a reply (a []any of strings).
func valuesBytes(values any) int {
	vals, _ := values.([]any)
	n := 0
	for _, v := range vals {
		if b, ok := v.(string); ok {
			n += len(b)
		}
	}
	return n
}
