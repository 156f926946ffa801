package redissaver

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	mb "github.com/graphstate/redcheck/internal/member"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/formatvec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/tracectx"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The storage-format vectors of the saver's fields and checkpoints
// (testdata/format/fields.json and checkpoint.json, described in
// docs/storage-format.md). The Test*Vectors* tests build them from the
// saver's own field construction and compare them with the files byte for
// byte (REDCHECK_UPDATE_VECTORS=1 rewrites them); TestFormatVectorsLive runs
// the checkpoint vectors through the real scripts and reads back the raw keys.

type tv = formatvec.Value

var (
	fvNull, fvBool, fvInt, fvUint = formatvec.Null, formatvec.Bool, formatvec.Int, formatvec.Uint
	fvFloat, fvStr, fvStrHex      = formatvec.Float, formatvec.Str, formatvec.StrHex
	fvBytes, fvList, fvMap        = formatvec.Bytes, formatvec.List, formatvec.Map
	fvDelta                       = formatvec.Delta
)

// fieldsDoc is testdata/format/fields.json.
type fieldsDoc struct {
	Description    string          `json:"description"`
	BlobFields     []blobFieldVec  `json:"blob_fields"`
	WriteFields    []writeFieldVec `json:"write_fields"`
	Pack           []packVec       `json:"pack"`
	JoinedNames    []joinVec       `json:"joined_names"`
	StoredValues   []storedVec     `json:"stored_values"`
	MetadataValues []metadataVec   `json:"metadata_values"`
	Compressed     []compressedVec `json:"compressed_values"`
	BadCompressed  []badVec        `json:"invalid_compressed_values"`
}

// compressedVec is a stored value as a writer with compression on stores
// it: compressed ("z" len ":" raw DEFLATE) or left plain.
type compressedVec struct {
	Name string `json:"name"`
	// Writer is "go" (the Go saver with Compression{Level, MinBytes}) or
	// "zlib" (node:zlib's deflateRawSync at Level: another DEFLATE writer).
	Writer     string `json:"writer"`
	Level      int    `json:"level"`
	MinBytes   int    `json:"min_bytes,omitempty"`
	PlainHex   string `json:"plain_hex"`
	StoredHex  string `json:"stored_hex"`
	Compressed bool   `json:"compressed"`
}

// badVec is a stored value every reader must refuse.
type badVec struct {
	Name      string `json:"name"`
	StoredHex string `json:"stored_hex"`
}

type blobFieldVec struct {
	Channel formatvec.Bin `json:"channel"`
	Version string        `json:"version"`
	Field   formatvec.Bin `json:"field"`
}

type writeFieldVec struct {
	TaskID   formatvec.Bin `json:"task_id"`
	Channel  string        `json:"channel"`
	Position int           `json:"position"`
	Index    int           `json:"index"`
	Field    formatvec.Bin `json:"field"`
}

type packVec struct {
	Parts  []formatvec.Bin `json:"parts"`
	Packed formatvec.Bin   `json:"packed"`
}

type joinVec struct {
	Names  []formatvec.Bin `json:"names"`
	Joined formatvec.Bin   `json:"joined"`
}

// StoredVec is one value as stored (pack(type, bytes)); exported fields are
// read by package checkpoint's test as well.
type storedVec struct {
	Name       string `json:"name"`
	Serializer string `json:"serializer"`
	Value      tv     `json:"value"`
	Type       string `json:"type"`
	DataHex    string `json:"data_hex"`
	StoredHex  string `json:"stored_hex"`
}

type metadataVec struct {
	Name  string        `json:"name"`
	Value tv            `json:"value"`
	JSON  formatvec.Bin `json:"json"`
}

var serializers = map[string]checkpoint.Serializer{
	"msgpack": checkpoint.MsgpackSerializer{},
	"json":    checkpoint.JSONSerializer{},
}

var storedInputs = []struct {
	name string
	val  tv
}{
	{"nil", fvNull()},
	{"true", fvBool(true)},
	{"false", fvBool(false)},
	{"int 0", fvInt(0)},
	{"int 1", fvInt(1)},
	{"int -1", fvInt(-1)},
	{"int -33", fvInt(-33)},
	{"int 128", fvInt(128)},
	{"int 65536", fvInt(65536)},
	{"int64 max", fvInt(math.MaxInt64)},
	{"int64 min", fvInt(math.MinInt64)},
	{"uint64 max", fvUint(math.MaxUint64)},
	{"float 1.5", fvFloat(1.5)},
	{"float 2 (integral)", fvFloat(2)},
	{"float 0.1", fvFloat(0.1)},
	{"empty string", fvStr("")},
	{"string hi", fvStr("hi")},
	{"string unicode", fvStr("日本語")},
	{"string with NUL and HTML", fvStr("a\x00<b>&")},
	{"string invalid UTF-8", fvStrHex("\xff\xfe")},
	{"bytes 00 01", fvBytes([]byte{0, 1})},
	{"empty bytes", fvBytes([]byte{})},
	{"list a 1", fvList(fvStr("a"), fvInt(1))},
	{"empty list", fvList()},
	{"list with nested bytes", fvList(fvBytes([]byte{0, 0xff}))},
	{"map k v", fvMap("k", fvStr("v"))},
	{"map unsorted keys", fvMap("b", fvInt(1), "a", fvList(fvBool(true), fvNull()), "A", fvFloat(0.5))},
	{"delta snapshot of a list", fvDelta(fvList(fvStr("a"), fvStr("b")))},
	{"delta snapshot of nil", fvDelta(fvNull())},
	{"delta snapshot of bytes", fvDelta(fvBytes([]byte{7}))},
}

var metadataInputs = []struct {
	name string
	val  tv
}{
	{"null", fvNull()},
	{"true", fvBool(true)},
	{"int 1", fvInt(1)},
	{"int -1", fvInt(-1)},
	{"int64 min", fvInt(math.MinInt64)},
	{"uint64 max", fvUint(math.MaxUint64)},
	{"float 1.0 is the integer 1", fvFloat(1)},
	{"float 1.5", fvFloat(1.5)},
	{"float 0.1", fvFloat(0.1)},
	{"float 1e21", fvFloat(1e21)},
	{"float 1e-7", fvFloat(1e-7)},
	{"float -2.5e-300", fvFloat(-2.5e-300)},
	{"string unicode", fvStr("日本語")},
	{"string escapes", fvStr("q\"b\\s/\x00\x1f\u2028\u2029<>&\x7f")},
	{"string invalid UTF-8", fvStrHex("a\xffb")},
	{"empty object", fvMap()},
	{"empty array", fvList()},
	{"nested object with unsorted keys", fvMap("b", fvMap("z", fvInt(1), "a", fvFloat(2)), "a", fvList(fvStr("x"), fvNull()), "B", fvBool(false), "ä", fvStr("é"))},
	{"parents", fvMap("", fvStr("1ef4f797-8335-6428-8001-8a1503f9b875"), "node:6f1c", fvStr("1ef4f797-8335-6429-8002-8a1503f9b875"))},
}

func unitSaver(t testing.TB, opts Options) *Saver {
	t.Helper()
	o, layout, err := opts.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return &Saver{opts: o, layout: layout, ser: o.Serializer}
}

func buildFieldsDoc(t *testing.T) fieldsDoc {
	doc := fieldsDoc{Description: "Fields and values of the redcheck storage format (docs/storage-format.md). " +
		"Byte strings are given as text when they are valid UTF-8 and always as hex. " +
		"blob_fields: len(channel) ':' channel version, the length in bytes; the version is the value of the c: field, staged ones included (version, the byte 0, the staging Put's call token). " +
		"write_fields: 'w:' len(task) ':' task ':' index, where index is the position of the write in the PutWrites call or the fixed negative index of a special channel. " +
		"pack: len(part) ':' part for every part but the last, then the last part as it is. " +
		"joined_names: len(name) ':' name, repeated (event field ch). " +
		"stored_values: a value as stored in a blob hash or a pending write, pack(type, data), under each serializer; the value uses the typed notation (one member of null, bool, int, uint, float, str, str_hex, bytes_hex, list, map, delta). " +
		"metadata_values: canonical JSON of a metadata value (field m:<key>). " +
		"compressed_values: a stored value (plain_hex, pack(type, data)) as a writer with compression on stores it (stored_hex): " +
		"'z' len(plain) ':' raw DEFLATE of plain when it is at least min_bytes long and that is shorter, else plain itself; " +
		"writer go is the Go saver at level, writer zlib node:zlib's deflateRawSync at level (DEFLATE output is not unique: a reader must take any valid stream). " +
		"invalid_compressed_values: stored values every reader must refuse as corrupt."}
	for _, b := range []struct{ ch, ver string }{
		{"messages", "00000000000000000000000000000002.0.243798"},
		{"a", "1"},
		{"", "1"},
		{"12", "3"},
		{"a:b", "2:c"},
		{"日本語", "v1"},
		{"nul\x00ch", "7"},
	} {
		doc.BlobFields = append(doc.BlobFields, blobFieldVec{Channel: formatvec.B(b.ch), Version: b.ver, Field: formatvec.B(mb.Blob(b.ch, b.ver))})
	}
	for _, w := range []struct {
		task, ch string
		pos      int
	}{
		{"6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", "messages", 0},
		{"6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", "count", 12},
		{"task", checkpoint.ErrorChannel, 0},
		{"task", checkpoint.ScheduledChannel, 1},
		{"task", checkpoint.InterruptChannel, 2},
		{"task", checkpoint.ResumeChannel, 3},
		{"", "x", 0},
		{"t:1:2", "x", 5},
		{"タスク", "x", 1},
	} {
		idx := checkpoint.WriteIndex(w.ch, w.pos)
		doc.WriteFields = append(doc.WriteFields, writeFieldVec{TaskID: formatvec.B(w.task), Channel: w.ch, Position: w.pos, Index: idx, Field: formatvec.B(codec.WriteField(w.task, idx))})
	}
	for _, parts := range [][]string{
		{"a"},
		{"", ""},
		{"msgpack", "\x92\xa1a\x01"},
		{"null", ""},
		{"messages", "~__pregel_pull, agent", "msgpack", "\xa2hi"},
		{"日本", "1:2", "", "x"},
	} {
		doc.Pack = append(doc.Pack, packVec{Parts: formatvec.Bins(parts), Packed: formatvec.B(pack(parts...))})
	}
	for _, names := range [][]string{{"messages"}, {"a", "", "b:c"}, {"日本", "__error__"}} {
		doc.JoinedNames = append(doc.JoinedNames, joinVec{Names: formatvec.Bins(names), Joined: formatvec.B(codec.JoinNames(names))})
	}
	for _, name := range []string{"msgpack", "json"} {
		s := unitSaver(t, Options{Serializer: serializers[name]})
		for _, in := range storedInputs {
			val := in.val.MustGo(t)
			typ, data, err := s.ser.DumpsTyped(val)
			if err != nil {
				t.Fatalf("%s %s: %v", name, in.name, err)
			}
			stored, err := s.encodeValue(ctxBG, valuePlace{}, val)
			if err != nil {
				t.Fatalf("%s %s: %v", name, in.name, err)
			}
			doc.StoredValues = append(doc.StoredValues, storedVec{Name: in.name, Serializer: name, Value: in.val, Type: typ,
				DataHex: formatvec.Hex(string(data)), StoredHex: formatvec.Hex(stored)})
		}
	}
	for _, in := range metadataInputs {
		enc, err := checkpoint.EncodeMetadataValue(in.val.MustGo(t))
		if err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
		doc.MetadataValues = append(doc.MetadataValues, metadataVec{Name: in.name, Value: in.val, JSON: formatvec.B(string(enc))})
	}
	buildCompressedVectors(t, &doc)
	return doc
}

// zlibPlain and zlibData: a stored value and its raw DEFLATE as node:zlib
// (zlib 1.3, level 6) writes it, which is not what compress/flate writes.
var (
	zlibPlain = "4:json" + "[" + strings.Repeat(`{"type":"human","content":"the agent calls a tool and reads its result"},{"type":"ai","content":"the agent calls a tool and reads its result"},`, 6)[:857] + "]"
	zlibData  = "edce310e80200c00c0af349d199df88a7168a0110c1643cb608c7f77f3052e267ce07293dfb4ca7ca19d07a3c7d477127418aa188ba1474b0cb4b218042a4581c06a2d4012a13145856c0a8db517c3dbbd10e52f94d1199d5f779607"
)

// compressedInputs are the compression vectors written by the Go saver.
func compressedInputs() []struct {
	name       string
	ser        string
	level, min int
	val        tv
} {
	msgs := make([]tv, 12)
	for i := range msgs {
		msgs[i] = fvMap("type", fvStr([]string{"human", "ai"}[i%2]), "content", fvStr("the agent calls a tool and reads its result"))
	}
	noise := make([]byte, 300)
	x := uint32(1)
	for i := range noise { // xorshift: bytes DEFLATE cannot shorten
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		noise[i] = byte(x)
	}
	a := func(n int) tv { return fvBytes([]byte(strings.Repeat("a", n-len("5:bytes")))) }
	return []struct {
		name       string
		ser        string
		level, min int
		val        tv
	}{
		{"messages, msgpack, level 6", "msgpack", 6, 512, fvList(msgs...)},
		{"messages, msgpack, level 1", "msgpack", 1, 64, fvList(msgs...)},
		{"messages, JSONSerializer, level 9", "json", 9, 64, fvList(msgs...)},
		{"delta snapshot of messages", "msgpack", 6, 64, fvDelta(fvList(msgs...))},
		{"stored form of exactly min_bytes: compressed", "msgpack", 6, 200, a(200)},
		{"stored form one byte under min_bytes: plain", "msgpack", 6, 201, a(200)},
		{"incompressible bytes: plain", "msgpack", 9, 64, fvBytes(noise)},
		{"short value: the header costs more than DEFLATE saves, plain", "msgpack", 6, 1, fvStr("hi there")},
	}
}

func buildCompressedVectors(t *testing.T, doc *fieldsDoc) {
	for _, in := range compressedInputs() {
		s := unitSaver(t, Options{Serializer: serializers[in.ser], Compression: Compression{Enabled: true, Level: in.level, MinBytes: in.min}})
		val := in.val.MustGo(t)
		typ, data, err := s.ser.DumpsTyped(val)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.encodeValue(ctxBG, valuePlace{}, val)
		if err != nil {
			t.Fatal(err)
		}
		plain := pack(typ, string(data))
		doc.Compressed = append(doc.Compressed, compressedVec{Name: in.name, Writer: "go", Level: in.level, MinBytes: in.min,
			PlainHex: formatvec.Hex(plain), StoredHex: formatvec.Hex(stored), Compressed: codec.IsCompressed(stored)})
	}
	doc.Compressed = append(doc.Compressed, compressedVec{Name: "messages, JSON text, written by node:zlib", Writer: "zlib", Level: 6,
		PlainHex: formatvec.Hex(zlibPlain), StoredHex: formatvec.Hex("z" + strconv.Itoa(len(zlibPlain)) + ":" + formatvec.Unhex(t, zlibData)), Compressed: true})

	good := doc.Compressed[0]
	plain, stored := formatvec.Unhex(t, good.PlainHex), formatvec.Unhex(t, good.StoredHex)
	_, data, _ := codec.CutLen(stored[1:])
	n := strconv.Itoa(len(plain))
	zform := func(plain string) string {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, 9)
		_, _ = w.Write([]byte(plain))
		_ = w.Close()
		return "z" + strconv.Itoa(len(plain)) + ":" + b.String()
	}
	twice := zform(stored)
	notTyped := zform(strings.Repeat("y", 300))
	for _, b := range []struct{ name, stored string }{
		{"no length", "z"},
		{"no colon", "z" + n},
		{"empty length", "z:" + data},
		{"zero length", "z0:" + data},
		{"leading zero in the length", "z0" + n + ":" + data},
		{"length one short", "z" + strconv.Itoa(len(plain)-1) + ":" + data},
		{"length one long", "z" + strconv.Itoa(len(plain)+1) + ":" + data},
		{"length over 536870912 (512 MiB)", "z536870913:" + data},
		{"length over 1032 times the DEFLATE data", "z" + strconv.Itoa(1032*len(data)+1032) + ":" + data},
		{"DEFLATE data truncated", "z" + n + ":" + data[:len(data)-4]},
		{"no DEFLATE data", "z" + n + ":"},
		{"a byte after the end of the DEFLATE data", "z" + n + ":" + data + "\x00"},
		{"not DEFLATE (a reserved block type)", "z" + n + ":" + "\xff\xff\xff\xff"},
		{"compressed twice", twice},
		{"the plain form is not a typed value", notTyped},
		{"first byte neither a digit nor z", "y" + stored[1:]},
	} {
		doc.BadCompressed = append(doc.BadCompressed, badVec{Name: b.name, StoredHex: formatvec.Hex(b.stored)})
	}
}

// TestFormatVectorsCompressed reads every compression vector back: the
// stored form inflates to the plain one (whichever writer made it), and
// every invalid one is ErrCorrupt.
func TestFormatVectorsCompressed(t *testing.T) {
	var doc fieldsDoc
	formatvec.Load(t, "fields.json", &doc)
	if len(doc.Compressed) == 0 || len(doc.BadCompressed) == 0 {
		t.Fatal("fields.json has no compression vectors")
	}
	s := unitSaver(t, Options{})
	for _, c := range doc.Compressed {
		stored, plain := formatvec.Unhex(t, c.StoredHex), formatvec.Unhex(t, c.PlainHex)
		if got, err := codec.Decompress(stored); err != nil || got != plain || codec.IsCompressed(stored) != c.Compressed {
			t.Errorf("%s: Decompress = %x, %v", c.Name, got, err)
		}
		want, err := s.decodeValue(ctxBG, valuePlace{}, plain)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got, err := s.decodeValue(ctxBG, valuePlace{}, stored); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decodeValue = %v, %v; want %v", c.Name, got, err, want)
		}
	}
	for _, c := range doc.BadCompressed {
		if got, err := s.decodeValue(ctxBG, valuePlace{}, formatvec.Unhex(t, c.StoredHex)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: decodeValue = %v, %v; want ErrCorrupt", c.Name, got, err)
		}
	}
}

// TestFormatVectorsFields checks testdata/format/fields.json.
func TestFormatVectorsFields(t *testing.T) {
	formatvec.Check(t, "fields.json", buildFieldsDoc(t))
}

// cpDoc is testdata/format/checkpoint.json.
type cpDoc struct {
	Description string   `json:"description"`
	CallToken   string   `json:"call_token"`
	Cases       []cpCase `json:"cases"`
}

type cpCase struct {
	Name   string   `json:"name"`
	Input  cpInput  `json:"input"`
	Expect cpExpect `json:"expect"`
}

type cpInput struct {
	Prefix        string `json:"prefix"`
	Shards        int    `json:"shards"`
	Serializer    string `json:"serializer"`
	IncludeValues bool   `json:"include_values"`
	MaxValueBytes int    `json:"max_value_bytes"`
	ThreadID      string `json:"thread_id"`
	Namespace     string `json:"namespace"`
	ParentID      string `json:"parent_id"`
	Generation    string `json:"generation"`
	// Traceparent and Tracestate are the W3C trace context of the span
	// current during the Put and the PutWrites ("": none), which their
	// events carry.
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	Checkpoint  struct {
		V               int                          `json:"v"`
		ID              string                       `json:"id"`
		TS              string                       `json:"ts"`
		ChannelValues   map[string]tv                `json:"channel_values"`
		ChannelVersions map[string]string            `json:"channel_versions"`
		VersionsSeen    map[string]map[string]string `json:"versions_seen"`
		UpdatedChannels []string                     `json:"updated_channels"`
	} `json:"checkpoint"`
	Metadata    map[string]tv     `json:"metadata"`
	NewVersions map[string]string `json:"new_versions"`
	Writes      struct {
		TaskID   string `json:"task_id"`
		TaskPath string `json:"task_path"`
		Writes   []struct {
			Channel string `json:"channel"`
			Value   tv     `json:"value"`
		} `json:"writes"`
	} `json:"writes"`
}

type scored struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

type cpExpect struct {
	Shard int `json:"shard"`
	// Keys are every key that exists once the Put and the PutWrites ran.
	Keys        map[string]string `json:"keys"`
	Meta        []formatvec.Pair  `json:"meta"`
	Head        []formatvec.Pair  `json:"head"`
	Threads     []scored          `json:"threads"`
	All         []formatvec.Bin   `json:"all"`
	Run         []formatvec.Bin   `json:"run"`
	ThreadIndex []formatvec.Bin   `json:"thread_index"`
	NSIndex     []string          `json:"ns_index"`
	NSSet       []string          `json:"ns_set"`
	Checkpoint  []formatvec.Pair  `json:"checkpoint"`
	Blobs       []formatvec.Pair  `json:"blobs"`
	PutEvent    []formatvec.Pair  `json:"put_event"`
	Writes      []formatvec.Pair  `json:"writes"`
	WritesEvent []formatvec.Pair  `json:"writes_event"`
}

// cpInputs are the checkpoint vectors' inputs.
func cpInputs(t *testing.T) []cpCase {
	const (
		v1 = "00000000000000000000000000000001.0.5132481716524396"
		v2 = "00000000000000000000000000000002.0.2437983574380571"
		v3 = "00000000000000000000000000000003.0.8871233650017845"
	)
	var a cpCase
	a.Name = "child checkpoint in a subgraph namespace, msgpack, events without values"
	a.Input.Prefix, a.Input.Shards, a.Input.Serializer = "vec", 16, "msgpack"
	a.Input.ThreadID, a.Input.Namespace = "user:42 {a}", "node:6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab|inner:0f1e2d3c-4b5a-6978-8a9b-abcdef012345"
	a.Input.ParentID, a.Input.Generation = "1ef4f797-8335-6428-8001-8a1503f9b875", "vectorgen2345"
	cp := &a.Input.Checkpoint
	cp.V, cp.ID, cp.TS = 4, "1ef4f797-8335-6429-8002-8a1503f9b875", "2024-07-31T20:14:19.804150+00:00"
	cp.ChannelValues = map[string]tv{
		"messages": fvList(fvMap("role", fvStr("user"), "content", fvStr("hi 日本")), fvMap("role", fvStr("ai"), "content", fvStr("hello"))),
		"count":    fvInt(3),
		"blob":     fvBytes([]byte{0, 0xff, 0x10}),
		"flag":     fvBool(true),
	}
	cp.ChannelVersions = map[string]string{"messages": v2, "count": v2, "blob": v2, "flag": v1, "empty": v2, "__start__": v3}
	cp.VersionsSeen = map[string]map[string]string{"": {"__input__": v1}, "agent": {"messages": v1, "__start__": v2}}
	cp.UpdatedChannels = []string{"messages", "count"}
	a.Input.Metadata = map[string]tv{
		"source": fvStr("loop"), "step": fvInt(2), "run_id": fvStr("run-7"),
		"parents": fvMap("", fvStr("1ef4f797-8335-6428-8001-8a1503f9b875")),
		"writes":  fvMap("b", fvInt(1), "a", fvList(fvFloat(1.5), fvStr("日本"))),
		"score":   fvFloat(1),
	}
	// Every version the checkpoint names is written now (Put refuses one with no stored value).
	a.Input.NewVersions = map[string]string{"messages": v2, "count": v2, "blob": v2, "empty": v2, "flag": v1, "__start__": v3}
	w := &a.Input.Writes
	w.TaskID, w.TaskPath = "6f1c2d3e-0a1b-4c5d-8e9f-0123456789ab", "~__pregel_pull, agent"
	for _, wr := range []struct {
		ch  string
		val tv
	}{
		{"messages", fvList(fvMap("role", fvStr("ai"), "content", fvStr("more")))},
		{checkpoint.ErrorChannel, fvStr("boom")},
		{"count", fvInt(4)},
		{checkpoint.InterruptChannel, fvNull()},
		{checkpoint.ResumeChannel, fvBytes([]byte{1, 0})},
	} {
		w.Writes = append(w.Writes, struct {
			Channel string `json:"channel"`
			Value   tv     `json:"value"`
		}{wr.ch, wr.val})
	}

	// b: a root checkpoint of the root namespace of another thread, JSON
	// values, events with values: the short ones inline, the long ones by
	// reference.
	var b cpCase
	b.Name = "root checkpoint, root namespace, json, events with values of at most 48 bytes"
	b.Input = a.Input
	b.Input.Serializer, b.Input.IncludeValues, b.Input.MaxValueBytes = "json", true, 48
	b.Input.ThreadID, b.Input.Namespace, b.Input.ParentID, b.Input.Generation = "日本語-thread", "", "", "b2"
	b.Input.Checkpoint.ID = "1ef4f797-8335-6428-8001-8a1503f9b875"
	b.Input.Checkpoint.UpdatedChannels = nil
	b.Input.Metadata = map[string]tv{"source": fvStr("input"), "step": fvInt(-1), "run_id": fvInt(5)}
	b.Input.Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	b.Input.Tracestate = "vendor=opaque,rojo=00f067aa0ba902b7"
	return []cpCase{a, b}
}

// toGo builds the Go inputs of a checkpoint vector.
func (in cpInput) toGo(t *testing.T) (opts Options, cfg checkpoint.Config, cp checkpoint.Checkpoint, md checkpoint.Metadata, writes []checkpoint.Write) {
	// A provider whose spans do not record: the calls' span context is the
	// input's, which their events carry.
	opts = Options{Prefix: in.Prefix, Shards: in.Shards, Serializer: serializers[in.Serializer],
		Events: Events{IncludeValues: in.IncludeValues, MaxValueBytes: in.MaxValueBytes}, AcceptEviction: true,
		TracerProvider: noop.NewTracerProvider()}
	cfg = checkpoint.Config{ThreadID: in.ThreadID, CheckpointNS: in.Namespace, CheckpointID: in.ParentID}
	c := in.Checkpoint
	cp = checkpoint.Checkpoint{V: c.V, ID: c.ID, TS: c.TS, ChannelValues: map[string]any{}, ChannelVersions: c.ChannelVersions,
		VersionsSeen: c.VersionsSeen, UpdatedChannels: c.UpdatedChannels}
	for ch, val := range c.ChannelValues {
		cp.ChannelValues[ch] = val.MustGo(t)
	}
	md = checkpoint.Metadata{}
	for k, val := range in.Metadata {
		md[k] = val.MustGo(t)
	}
	for _, w := range in.Writes.Writes {
		writes = append(writes, checkpoint.Write{Channel: w.Channel, Value: w.Value.MustGo(t)})
	}
	return opts, cfg, cp, md, writes
}

// context is ctx with the input's span context, when it has one.
func (in cpInput) context(ctx context.Context) context.Context {
	if in.Traceparent == "" {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, tracectx.SpanContext(in.Traceparent, in.Tracestate))
}

// sortChannels puts the names of an event's "ch" field in byte order: the
// saver lists a checkpoint's channels in no particular order.
func sortChannels(flat []string) []string {
	out := append([]string(nil), flat...)
	for i := 0; i+1 < len(out); i += 2 {
		if out[i] == evChannels {
			names, ok := codec.SplitNames(out[i+1])
			if ok {
				sort.Strings(names)
				out[i+1] = codec.JoinNames(names)
			}
		}
	}
	return out
}

func buildCheckpointDoc(t *testing.T) cpDoc {
	doc := cpDoc{
		Description: "One Put then one PutWrites per case, and exactly what they leave in Redis (docs/storage-format.md). " +
			"Inputs: values in the typed notation of fields.json; shards 0 means 16; max_value_bytes 0 means 65536. " +
			"expect.keys lists every key that exists afterwards (and no other does); generation is the generation the thread's head names (a fresh thread's is random: substitute it). " +
			"Hash fields and stream entry fields are pairs sorted by field bytes, as text when valid UTF-8 and always as hex; field order is not significant. " +
			"checkpoint omits the field o (see call_token). put_event and writes_event are the fields of the thread's events stream entries (the shard's feed holds the same), their IDs left out; " +
			"the channel names of a checkpoint event's ch field come in no particular order (given here sorted); traceparent and tracestate in the input are the trace context of the span current during both calls, which both events carry (none without one). writes holds the w: fields PutWrites adds to the checkpoint hash.",
		CallToken: "field o of the checkpoint hash: the call token of the Put that wrote it, and field ow: the call token of the last PutWrites against it; each 13 characters of [a-z2-7] (keys.NewGen), random per call",
	}
	for _, c := range cpInputs(t) {
		opts, cfg, cp, md, writes := c.Input.toGo(t)
		s := unitSaver(t, opts)
		l := s.layout
		th, ns, gen, id := cfg.ThreadID, cfg.CheckpointNS, c.Input.Generation, cp.ID
		n := l.Shard(th)
		if err := validateVersions(cp, c.Input.NewVersions); err != nil {
			t.Fatal(err)
		}
		fields, runID, err := s.checkpointFields(cp, md)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CheckpointID != "" {
			fields = append(fields, fieldParent, cfg.CheckpointID)
		}
		blobs, err := s.blobArgs(ctxBG, cfg, cp, c.Input.NewVersions)
		if err != nil {
			t.Fatal(err)
		}
		e := &c.Expect
		e.Shard = n
		e.Keys = map[string]string{
			"meta": l.Meta(), "threads": l.Threads(n), "all": l.All(n), "feed": l.Feed(n), "head": l.Head(th), "events": l.Events(th),
			"ns_set": l.Namespaces(th, gen), "thread_index": l.ThreadIndex(th, gen), "ns_index": l.Index(th, gen, ns),
			"blobs": l.Blobs(th, gen, ns), "checkpoint": l.Checkpoint(th, gen, ns, id),
		}
		member := mb.Of(id, th, ns, gen)
		e.All = []formatvec.Bin{formatvec.B(member)}
		e.Run = []formatvec.Bin{}
		if runID != "" {
			e.Keys["run"] = l.Run(n, runID)
			fields = append(fields, fieldRunKey, l.Run(n, runID))
			e.Run = []formatvec.Bin{formatvec.B(member)}
		}
		e.Meta = formatvec.Pairs([]string{"format", strconv.Itoa(keys.FormatVersion), "shards", strconv.Itoa(l.Shards())})
		e.Head = formatvec.Pairs([]string{"g", gen, "exp", "0"})
		e.Threads = []scored{{Member: keys.Encode(th), Score: 0}}
		e.ThreadIndex = []formatvec.Bin{formatvec.B(id + mb.Sep + keys.Encode(ns))}
		e.NSIndex = []string{id}
		e.NSSet = []string{keys.Encode(ns)}
		e.Checkpoint = formatvec.Pairs(fields)
		e.Blobs = formatvec.Pairs(append([]string{valuesMarker, ""}, blobs...)) // the namespace's first Put makes its values hash
		traced := c.Input.context(context.Background())
		e.PutEvent = formatvec.Pairs(sortChannels(append(s.checkpointEvent(cfg, cp, md, c.Input.NewVersions, blobs), tracectx.Fields(traced)...)))

		// What put_writes.lua writes: one field per write, and one event
		// listing the channels (in call order) and, with IncludeValues, the
		// stored values within the bounds by position.
		task, path := c.Input.Writes.TaskID, c.Input.Writes.TaskPath
		var wf []string
		ev := []string{evType, "writes", evThread, keys.Encode(th), evNS, keys.Encode(ns), evID, id, evTask, task}
		var names []string
		for i, w := range writes {
			typ, data, err := s.ser.DumpsTyped(w.Value)
			if err != nil {
				t.Fatal(err)
			}
			val := pack(w.Channel, path, typ, string(data))
			wf = append(wf, codec.WriteField(task, checkpoint.WriteIndex(w.Channel, i)), val)
			names = append(names, w.Channel)
			if opts.Events.IncludeValues && len(val) <= s.opts.Events.MaxValueBytes {
				ev = append(ev, "v:"+strconv.Itoa(i), val)
			}
		}
		ev = append(ev, evChannels, codec.JoinNames(names))
		ev = append(ev, tracectx.Fields(traced)...)
		e.Writes = formatvec.Pairs(wf)
		e.WritesEvent = formatvec.Pairs(ev)
		doc.Cases = append(doc.Cases, c)
	}
	return doc
}

// TestFormatVectorsCheckpoint checks testdata/format/checkpoint.json against
// the saver's field construction.
func TestFormatVectorsCheckpoint(t *testing.T) {
	formatvec.Check(t, "checkpoint.json", buildCheckpointDoc(t))
}

// TestFormatVectorsLive runs every case of checkpoint.json through the real
// saver and scripts, on miniredis and on a real Redis, and reads the raw keys
// back with plain commands: the scripts write exactly the documented bytes,
// and nothing else.
func TestFormatVectorsLive(t *testing.T) {
	var doc cpDoc
	formatvec.Load(t, "checkpoint.json", &doc)
	if len(doc.Cases) == 0 {
		t.Fatal("checkpoint.json has no cases")
	}
	tiers := []struct {
		name string
		rdb  func(t *testing.T) *redis.Client
	}{
		{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
		{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
	}
	for _, tier := range tiers {
		t.Run(tier.name, func(t *testing.T) {
			rdb := tier.rdb(t)
			for _, c := range doc.Cases {
				t.Run(c.Name, func(t *testing.T) { checkLive(t, rdb, c) })
			}
		})
	}
}

var callToken = regexp.MustCompile(`^[a-z2-7]{13}$`)

func checkLive(t *testing.T, rdb *redis.Client, c cpCase) {
	ctx := c.Input.context(context.Background())
	opts, cfg, cp, md, writes := c.Input.toGo(t)
	prefix := redistest.Prefix(t)
	opts.Prefix = prefix
	s, err := New(ctx, rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, cfg, cp, md, c.Input.NewVersions); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, checkpoint.Config{ThreadID: cfg.ThreadID, CheckpointNS: cfg.CheckpointNS, CheckpointID: cp.ID}, writes, c.Input.Writes.TaskID, c.Input.Writes.TaskPath); err != nil {
		t.Fatal(err)
	}
	e := c.Expect
	gen, err := rdb.HGet(ctx, strings.Replace(e.Keys["head"], c.Input.Prefix+":", prefix+":", 1), "g").Result()
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	// here maps what the vector names to what this run wrote: its prefix
	// and the thread's generation.
	here := func(s string) string {
		if rest, ok := strings.CutPrefix(s, c.Input.Prefix+":"); ok {
			s = prefix + ":" + rest
		}
		s = strings.Replace(s, ":g:"+c.Input.Generation+":", ":g:"+gen+":", 1)
		if rest, ok := strings.CutSuffix(s, mb.Sep+c.Input.Generation); ok {
			s = rest + mb.Sep + gen
		}
		if s == c.Input.Generation {
			s = gen
		}
		return s
	}
	k := map[string]string{}
	for name, key := range e.Keys {
		k[name] = here(key)
	}
	hexes := func(bs []formatvec.Bin) []string {
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = here(formatvec.Unhex(t, b.Hex))
		}
		sort.Strings(out)
		return out
	}
	pairs := func(ps []formatvec.Pair) map[string]string {
		out := map[string]string{}
		for _, p := range ps {
			f, val := formatvec.Unhex(t, p.FieldHex), formatvec.Unhex(t, p.ValueHex)
			if f == fieldRunKey || f == "g" { // the run key and the generation
				val = here(val)
			}
			out[f] = val
		}
		return out
	}
	sorted := func(ss []string, err error) []string {
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(ss)
		return ss
	}
	same := func(what string, got, want any) {
		t.Helper()
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("%s:\n got  %s\n want %s", what, gj, wj)
		}
	}

	// Every key, and no other.
	var all []string
	iter := rdb.Scan(ctx, 0, prefix+":*", 100).Iterator()
	for iter.Next(ctx) {
		all = append(all, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	var wantKeys []string
	for _, key := range k {
		wantKeys = append(wantKeys, key)
	}
	// Every shard registry holds the marker member "" from the prefix's
	// creation on (docs/storage-format.md); those of other shards hold only it.
	var others []string
	for _, key := range all {
		if strings.HasSuffix(key, "}:threads") && key != k["threads"] {
			if m := rdb.ZRange(ctx, key, 0, -1).Val(); len(m) != 1 || m[0] != "" {
				t.Errorf("registry %s holds %q, want the marker only", key, m)
			}
			others = append(others, key)
		}
	}
	same("keys", sorted(all, nil), sorted(append(wantKeys, others...), nil))

	same("meta", rdb.HGetAll(ctx, k["meta"]).Val(), pairs(e.Meta))
	same("head", rdb.HGetAll(ctx, k["head"]).Val(), pairs(e.Head))
	var threads []scored
	for _, z := range rdb.ZRangeWithScores(ctx, k["threads"], 0, -1).Val() {
		if z.Member.(string) == "" {
			continue // the marker, checked above for the other shards
		}
		threads = append(threads, scored{Member: z.Member.(string), Score: z.Score})
	}
	same("threads", threads, e.Threads)
	same("all", sorted(rdb.ZRange(ctx, k["all"], 0, -1).Result()), hexes(e.All))
	if len(e.Run) > 0 {
		same("run", sorted(rdb.SMembers(ctx, k["run"]).Result()), hexes(e.Run))
	}
	same("thread_index", sorted(rdb.ZRange(ctx, k["thread_index"], 0, -1).Result()), hexes(e.ThreadIndex))
	same("ns_index", sorted(rdb.ZRange(ctx, k["ns_index"], 0, -1).Result()), e.NSIndex)
	same("ns_set", sorted(rdb.SMembers(ctx, k["ns_set"]).Result()), e.NSSet)

	cpHash := rdb.HGetAll(ctx, k["checkpoint"]).Val()
	token := cpHash["o"]
	if !callToken.MatchString(token) {
		t.Errorf("call token o = %q, want 13 characters of [a-z2-7]", token)
	}
	delete(cpHash, "o")
	wantCp, wantBlobs := pairs(e.Checkpoint), pairs(e.Blobs)
	if !callToken.MatchString(cpHash["ow"]) {
		t.Errorf("PutWrites call token ow = %q, want 13 characters of [a-z2-7]", cpHash["ow"])
	}
	delete(cpHash, "ow")
	gotW := map[string]string{}
	for f, val := range cpHash {
		if strings.HasPrefix(f, prefixWrite) {
			gotW[f] = val
			delete(cpHash, f)
		}
	}
	same("checkpoint", cpHash, wantCp)
	same("writes", gotW, pairs(e.Writes))
	same("blobs", rdb.HGetAll(ctx, k["blobs"]).Val(), wantBlobs)

	for _, stream := range []string{"events", "feed"} {
		msgs, err := rdb.XRange(ctx, k[stream], "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2 {
			t.Fatalf("%s holds %d entries, want 2", stream, len(msgs))
		}
		for i, want := range [][]formatvec.Pair{e.PutEvent, e.WritesEvent} {
			var flat []string
			for f, val := range msgs[i].Values {
				flat = append(flat, f, val.(string))
			}
			if i == 0 { // a checkpoint event lists its channels in no particular order
				flat = sortChannels(flat)
			}
			same(stream+" entry "+strconv.Itoa(i), formatvec.Pairs(flat), want)
		}
	}
}
