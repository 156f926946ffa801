package seal

import "strconv"

// Associated data (docs/storage-format.md, "Encrypted values"). The AAD of
// a value is the concatenation of len(part) ":" part for each of its parts
// (lengths in bytes, decimal, no leading zeros: every part prefixed, the
// last too, so the encoding is injective), the parts being:
//
//	FormatTag, kind, then the kind's parts
//
// channel: prefix, thread ID, checkpoint namespace, channel, version
// write:   prefix, thread ID, checkpoint namespace, checkpoint ID, task ID,
//
//	write index (decimal, "-1" for ErrorChannel...), channel
//
// item:    store prefix, the number of namespace labels (decimal), each
//
//	label, key
//
// IDs, namespaces and names are the caller's bytes as given, not their
// Encode'd key form.
const (
	// FormatTag opens every AAD: the envelope's format and version.
	FormatTag = "redcheck/enc/1"
	// The kinds of place a value has.
	KindChannel = "channel"
	KindWrite   = "write"
	KindItem    = "item"
)

// appendPart appends len(p) ":" p.
func appendPart(b []byte, p string) []byte {
	b = strconv.AppendInt(b, int64(len(p)), 10)
	b = append(b, ':')
	return append(b, p...)
}

func build(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 11
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = appendPart(b, p)
	}
	return b
}

// ChannelAAD is the AAD of the value of channel at version, in the given
// thread and namespace of prefix.
func ChannelAAD(prefix, threadID, ns, channel, version string) []byte {
	return build(FormatTag, KindChannel, prefix, threadID, ns, channel, version)
}

// WriteAAD is the AAD of the value of a pending write: the write of task
// taskID with index idx (checkpoint.WriteIndex) to channel, against
// checkpoint checkpointID of the thread and namespace.
func WriteAAD(prefix, threadID, ns, checkpointID, taskID string, idx int, channel string) []byte {
	return build(FormatTag, KindWrite, prefix, threadID, ns, checkpointID, taskID, strconv.Itoa(idx), channel)
}

// ItemAAD is the AAD of the value of a memory-store item: key in the
// namespace path namespace of the store prefix.
func ItemAAD(prefix string, namespace []string, key string) []byte {
	parts := make([]string, 0, len(namespace)+6)
	parts = append(parts, FormatTag, KindItem, prefix, strconv.Itoa(len(namespace)))
	parts = append(parts, namespace...)
	parts = append(parts, key)
	return build(parts...)
}
