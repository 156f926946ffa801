package redisstore

import (
	"strings"

	"github.com/graphstate/redcheck/internal/keys"
)

// Wildcard matches any one label in the Prefix and Suffix of
// ListNamespacesOptions.
const Wildcard = "*"

// Namespaces are stored in two forms.
//
// The encoded form, used in key names, is keys.Encode of each label joined
// by ':'. Encode never writes ':', '{' or '}', so the form is injective and
// cannot break the hash tag; an item key ends with ':' and the encoded key,
// the last component, so (namespace, key) pairs never share a key.
//
// The sortable form, used in the registry, orders like the label tuples
// (label by label, each by its bytes, a prefix before its extensions): each
// label with its 0x00 bytes written 0x00 0xFF, followed by 0x00 0x01. A
// 0x00 is then always followed by 0x01 or 0xFF, so the end of a label sorts
// before anything that continues it, and the sortable form of a prefix is a
// byte prefix of the form of every namespace under it.
//
// A registry member is the sortable form, 0x00 0x00, and the encoded form:
// the scripts find the encoded form after the first 0x00 0x00.

// encodeNS returns the encoded form of ns.
func encodeNS(ns []string) string {
	var b strings.Builder
	for i, label := range ns {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(keys.Encode(label))
	}
	return b.String()
}

// decodeNS reverses encodeNS.
func decodeNS(s string) ([]string, error) {
	parts := strings.Split(s, ":")
	out := make([]string, len(parts))
	for i, p := range parts {
		label, err := keys.Decode(p)
		if err != nil || label == "" {
			return nil, errorf(ErrCorrupt, "namespace %q", s)
		}
		out[i] = label
	}
	return out, nil
}

// appendSortable appends the sortable form of ns to b.
func appendSortable(b []byte, ns []string) []byte {
	for _, label := range ns {
		for i := 0; i < len(label); i++ {
			if label[i] == 0 {
				b = append(b, 0, 0xff)
			} else {
				b = append(b, label[i])
			}
		}
		b = append(b, 0, 1)
	}
	return b
}

// member returns the registry member of ns.
func member(ns []string) string {
	b := appendSortable(nil, ns)
	b = append(b, 0, 0)
	return string(b) + encodeNS(ns)
}

// lexRange returns the ZRANGEBYLEX bounds of the registry members of the
// namespaces that start with prefix (label by label); all of them for an
// empty prefix.
func lexRange(prefix []string) (lo, hi string) {
	if len(prefix) == 0 {
		return "-", "+"
	}
	b := appendSortable(nil, prefix)
	lo = "[" + string(b)
	b[len(b)-1] = 2 // past every continuation of the last label's terminator
	return lo, "(" + string(b)
}

// validateNamespace checks the namespace of an item: at least one label.
func validateNamespace(ns []string) error {
	if len(ns) == 0 {
		return errorf(ErrInvalidNamespace, "empty namespace")
	}
	return validateLabels(ns)
}

// validateLabels checks labels: non-empty, at most MaxLabelLen bytes, at
// most MaxNamespaceDepth of them. A label "*" is an ordinary label in items
// and search prefixes; only ListNamespaces reads it as a wildcard.
func validateLabels(ns []string) error {
	if len(ns) > MaxNamespaceDepth {
		return errorf(ErrInvalidNamespace, "%d labels (max %d)", len(ns), MaxNamespaceDepth)
	}
	for i, label := range ns {
		if label == "" {
			return errorf(ErrInvalidNamespace, "label %d of %q is empty", i, ns)
		}
		if len(label) > MaxLabelLen {
			return errorf(ErrInvalidNamespace, "label %d is %d bytes (max %d)", i, len(label), MaxLabelLen)
		}
	}
	return nil
}

func validateKey(key string) error {
	if len(key) > MaxKeyLen {
		return errorf(ErrInvalidKey, "key of %d bytes (max %d)", len(key), MaxKeyLen)
	}
	return nil
}
