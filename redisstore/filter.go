package redisstore

import (
	"bytes"
	"encoding/json"
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

// compileFilter turns a filter into the JSON the search script reads: an
// array of [path labels, op, operand], in the order of the sorted filter
// keys. It returns "" for an empty filter.
func compileFilter(filter map[string]any) (string, error) {
	if len(filter) == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	first := true
	for _, field := range sortedKeys(filter) {
		labels := strings.Split(field, ".")
		if slices.Contains(labels, "") {
			return "", errorf(ErrInvalidFilter, "field %q has an empty path element", field)
		}
		conds, err := conditions(field, filter[field])
		if err != nil {
			return "", err
		}
		path, err := json.Marshal(labels)
		if err != nil {
			return "", errorf(ErrInvalidFilter, "field %q: %v", field, err)
		}
		for _, c := range conds {
			if !first {
				buf.WriteByte(',')
			}
			first = false
			buf.WriteByte('[')
			buf.Write(path)
			buf.WriteString(`,"` + c.op + `",`)
			buf.Write(c.operand)
			buf.WriteByte(']')
		}
	}
	buf.WriteByte(']')
	return buf.String(), nil
}

type condition struct {
	op      string
	operand []byte // canonical JSON
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
		operand, err := checkpoint.EncodeMetadataValue(want)
		if err != nil {
			return nil, errorf(ErrInvalidFilter, "field %q: %v", field, err)
		}
		return []condition{{op: "eq", operand: operand}}, nil
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
		operand, err := checkpoint.EncodeMetadataValue(opsMap[k])
		if err != nil {
			return nil, errorf(ErrInvalidFilter, "field %q %s: %v", field, k, err)
		}
		if op != "eq" && op != "ne" && !rangeOperand(operand) {
			return nil, errorf(ErrInvalidFilter, "field %q: %s needs a number or a string, not %s", field, k, operand)
		}
		out = append(out, condition{op: op, operand: operand})
	}
	return out, nil
}

// rangeOperand reports whether canonical JSON holds a number or a string.
func rangeOperand(j []byte) bool {
	if len(j) == 0 {
		return false
	}
	c := j[0]
	return c == '"' || c == '-' || ('0' <= c && c <= '9')
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
