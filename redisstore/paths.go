package redisstore

import (
	"strconv"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

// A path selects texts to embed in a value; see Options.Fields.
type path struct {
	whole bool      // "$": the whole value
	segs  []segment // otherwise, applied in order
}

type segKind uint8

const (
	segField segKind = iota // a named field of an object
	segIndex                // one element of a list ([N], negative from the end)
	segAll                  // every element of a list ([*])
	segWild                 // every field value of an object, or element of a list (*)
	segMulti                // several sub-paths of an object ({a,b.c})
)

type segment struct {
	kind  segKind
	name  string
	index int
	multi []path
}

func parsePaths(specs []string) ([]path, error) {
	out := make([]path, 0, len(specs))
	for _, s := range specs {
		p, err := parsePath(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// parsePath parses one field path. It refuses empty paths, empty field
// names ("a..b"), unbalanced brackets and indexes that are not integers or
// "*".
func parsePath(s string) (path, error) {
	if s == "$" {
		return path{whole: true}, nil
	}
	s = strings.TrimPrefix(s, "$.")
	if s == "" {
		return path{}, errorf(ErrInvalidArgument, "empty field path")
	}
	var segs []segment
	field := strings.Builder{}
	afterClose := false // just after "]" or "}": a '.' or another bracket must follow
	flush := func(atDot bool) error {
		if field.Len() == 0 {
			if atDot && !afterClose {
				return errorf(ErrInvalidArgument, "field path %q has an empty field name", s)
			}
			return nil
		}
		name := field.String()
		field.Reset()
		if name == "*" {
			segs = append(segs, segment{kind: segWild})
		} else {
			segs = append(segs, segment{kind: segField, name: name})
		}
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '.':
			if err := flush(true); err != nil {
				return path{}, err
			}
			if i == len(s)-1 {
				return path{}, errorf(ErrInvalidArgument, "field path %q ends with '.'", s)
			}
			afterClose = false
		case '[', '{':
			if err := flush(false); err != nil {
				return path{}, err
			}
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			end := matching(s, i, c, closer)
			if end < 0 {
				return path{}, errorf(ErrInvalidArgument, "field path %q: unbalanced %q", s, c)
			}
			inner := s[i+1 : end]
			seg, err := bracket(c, inner, s)
			if err != nil {
				return path{}, err
			}
			segs = append(segs, seg)
			i = end
			afterClose = true
		case ']', '}':
			return path{}, errorf(ErrInvalidArgument, "field path %q: unbalanced %q", s, c)
		default:
			if afterClose {
				return path{}, errorf(ErrInvalidArgument, "field path %q: want '.' after %q", s, s[i-1])
			}
			field.WriteByte(c)
		}
	}
	if err := flush(false); err != nil {
		return path{}, err
	}
	return path{segs: segs}, nil
}

// matching returns the index of the closer that balances s[at], or -1.
func matching(s string, at int, open, closer byte) int {
	depth := 0
	for i := at; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case closer:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func bracket(open byte, inner, whole string) (segment, error) {
	if open == '[' {
		if inner == "*" {
			return segment{kind: segAll}, nil
		}
		n, err := strconv.Atoi(inner)
		if err != nil {
			return segment{}, errorf(ErrInvalidArgument, "field path %q: index %q is not an integer or *", whole, inner)
		}
		return segment{kind: segIndex, index: n}, nil
	}
	var subs []path
	for _, part := range splitTop(inner) {
		p, err := parsePath(strings.TrimSpace(part))
		if err != nil {
			return segment{}, err
		}
		if p.whole {
			return segment{}, errorf(ErrInvalidArgument, "field path %q: \"$\" inside {}", whole)
		}
		subs = append(subs, p)
	}
	return segment{kind: segMulti, multi: subs}, nil
}

// splitTop splits s on the commas outside brackets and braces.
func splitTop(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
	}
	return append(out, s[from:])
}

// texts returns the texts the paths select in v, a value as
// checkpoint.DecodeMetadataValue returns it (map[string]any, []any, string,
// int64, uint64, float64, bool, nil); whole is its canonical JSON.
func texts(v any, whole []byte, paths []path) []string {
	var out []string
	for _, p := range paths {
		if p.whole {
			out = append(out, string(whole))
			continue
		}
		out = extract(out, v, p.segs)
	}
	return out
}

func extract(out []string, v any, segs []segment) []string {
	if len(segs) == 0 {
		return appendLeaf(out, v)
	}
	seg, rest := segs[0], segs[1:]
	switch seg.kind {
	case segField:
		if m, ok := v.(map[string]any); ok {
			if x, ok := m[seg.name]; ok {
				return extract(out, x, rest)
			}
		}
	case segIndex:
		if l, ok := v.([]any); ok {
			i := seg.index
			if i < 0 {
				i += len(l)
			}
			if i >= 0 && i < len(l) {
				return extract(out, l[i], rest)
			}
		}
	case segAll:
		if l, ok := v.([]any); ok {
			for _, x := range l {
				out = extract(out, x, rest)
			}
		}
	case segWild:
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				out = extract(out, x[k], rest)
			}
		case []any:
			for _, e := range x {
				out = extract(out, e, rest)
			}
		}
	case segMulti:
		if _, ok := v.(map[string]any); ok {
			for _, sub := range seg.multi {
				segs := append(append([]segment(nil), sub.segs...), rest...)
				out = extract(out, v, segs)
			}
		}
	}
	return out
}

// appendLeaf adds the text of a selected value: a string as is, nothing for
// null, anything else as canonical JSON.
func appendLeaf(out []string, v any) []string {
	switch x := v.(type) {
	case nil:
		return out
	case string:
		return append(out, x)
	}
	b, err := checkpoint.EncodeMetadataValue(v)
	if err != nil {
		return out // cannot happen: v was decoded from canonical JSON
	}
	return append(out, string(b))
}
