package checkpoint_test

import (
	"reflect"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/formatvec"
)

// TestFormatVectorsValues checks the value encodings of
// testdata/format/fields.json (written by redissaver's
// TestFormatVectorsFields) in both directions: the serializers and
// EncodeMetadataValue produce the file's bytes from its typed values, and
// read the bytes back to the same value (MsgpackSerializer exactly; JSON
// normalises, so its values must survive another encoding).
func TestFormatVectorsValues(t *testing.T) {
	var doc struct {
		StoredValues []struct {
			Name       string          `json:"name"`
			Serializer string          `json:"serializer"`
			Value      formatvec.Value `json:"value"`
			Type       string          `json:"type"`
			DataHex    string          `json:"data_hex"`
			StoredHex  string          `json:"stored_hex"`
		} `json:"stored_values"`
		MetadataValues []struct {
			Name  string          `json:"name"`
			Value formatvec.Value `json:"value"`
			JSON  formatvec.Bin   `json:"json"`
		} `json:"metadata_values"`
	}
	formatvec.Load(t, "fields.json", &doc)
	if len(doc.StoredValues) == 0 || len(doc.MetadataValues) == 0 {
		t.Fatalf("fields.json: %d stored values, %d metadata values", len(doc.StoredValues), len(doc.MetadataValues))
	}
	sers := map[string]checkpoint.Serializer{"msgpack": checkpoint.MsgpackSerializer{}, "json": checkpoint.JSONSerializer{}}
	for _, c := range doc.StoredValues {
		ser, ok := sers[c.Serializer]
		if !ok {
			t.Fatalf("%s: unknown serializer %q", c.Name, c.Serializer)
		}
		want := c.Value.MustGo(t)
		data := formatvec.Unhex(t, c.DataHex)
		typ, got, err := ser.DumpsTyped(want)
		if err != nil || typ != c.Type || string(got) != data {
			t.Errorf("%s %s: DumpsTyped = %q, %x, %v; file %q, %s", c.Serializer, c.Name, typ, got, err, c.Type, c.DataHex)
		}
		if stored := codec.Pack(c.Type, data); stored != formatvec.Unhex(t, c.StoredHex) {
			t.Errorf("%s %s: pack(type, data) = %x, file %s", c.Serializer, c.Name, stored, c.StoredHex)
		}
		back, err := ser.LoadsTyped(c.Type, []byte(data))
		if err != nil {
			t.Errorf("%s %s: LoadsTyped: %v", c.Serializer, c.Name, err)
			continue
		}
		if c.Serializer == "msgpack" && !reflect.DeepEqual(back, want) {
			t.Errorf("%s %s: LoadsTyped = %#v, want %#v", c.Serializer, c.Name, back, want)
		}
		// Encoding the decoded value again gives a value that decodes alike
		// (not always the same bytes: JSON writes an invalid UTF-8 byte as
		// the escape \ufffd, and the U+FFFD it decodes to as UTF-8).
		typ2, again, err := ser.DumpsTyped(back)
		if err != nil || typ2 != c.Type {
			t.Errorf("%s %s: the decoded value encodes to %q, %x, %v", c.Serializer, c.Name, typ2, again, err)
			continue
		}
		if back2, err := ser.LoadsTyped(typ2, again); err != nil || !reflect.DeepEqual(back2, back) {
			t.Errorf("%s %s: decoded, encoded and decoded again = %#v, %v; want %#v", c.Serializer, c.Name, back2, err, back)
		}
	}
	for _, c := range doc.MetadataValues {
		want := formatvec.Unhex(t, c.JSON.Hex)
		got, err := checkpoint.EncodeMetadataValue(c.Value.MustGo(t))
		if err != nil || string(got) != want {
			t.Errorf("metadata %s: EncodeMetadataValue = %q, %v; file %q", c.Name, got, err, want)
		}
		back, err := checkpoint.DecodeMetadataValue([]byte(want))
		if err != nil {
			t.Errorf("metadata %s: DecodeMetadataValue: %v", c.Name, err)
			continue
		}
		if again, err := checkpoint.EncodeMetadataValue(back); err != nil || string(again) != want {
			t.Errorf("metadata %s: decoded and encoded again = %q, %v; file %q", c.Name, again, err, want)
		}
	}
}
