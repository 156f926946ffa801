package memsaver_test

import (
	"errors"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
	"github.com/graphstate/redcheck/internal/testctx"
)

// bareSerializer fails without wrapping any sentinel when told to, as a
// careless custom Serializer would.
type bareSerializer struct{ failDumps, failLoads bool }

var errBare = errors.New("bare failure")

func (b bareSerializer) DumpsTyped(v any) (string, []byte, error) {
	if b.failDumps {
		return "", nil, errBare
	}
	return checkpoint.MsgpackSerializer{}.DumpsTyped(v)
}

func (b bareSerializer) LoadsTyped(typ string, data []byte) (any, error) {
	if b.failLoads {
		return nil, errBare
	}
	return checkpoint.MsgpackSerializer{}.LoadsTyped(typ, data)
}

// TestSerializationErrorsWrapSentinels checks that a value that cannot be
// encoded, or bytes that cannot be decoded, give errors matched by
// errors.Is: ErrSerialization always, ErrInvalidCheckpoint as well on
// encode, and the serializer's own error.
func TestSerializationErrorsWrapSentinels(t *testing.T) {
	ctx := testctx.Context(t)
	unencodable := make(chan int)
	tests := []struct {
		name  string
		ser   checkpoint.Serializer
		value any
		write bool // PutWrites instead of Put
		want  []error
	}{
		{"msgpack channel value", checkpoint.MsgpackSerializer{}, unencodable, false, []error{checkpoint.ErrSerialization, checkpoint.ErrInvalidCheckpoint}},
		{"json channel value", checkpoint.JSONSerializer{}, unencodable, false, []error{checkpoint.ErrSerialization, checkpoint.ErrInvalidCheckpoint}},
		{"msgpack write value", checkpoint.MsgpackSerializer{}, unencodable, true, []error{checkpoint.ErrSerialization, checkpoint.ErrInvalidCheckpoint}},
		{"bare serializer channel value", bareSerializer{failDumps: true}, "v", false, []error{checkpoint.ErrSerialization, checkpoint.ErrInvalidCheckpoint, errBare}},
		{"bare serializer write value", bareSerializer{failDumps: true}, "v", true, []error{checkpoint.ErrSerialization, checkpoint.ErrInvalidCheckpoint, errBare}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memsaver.New(memsaver.Options{Serializer: tt.ser})
			cfg := checkpoint.Config{ThreadID: "t"}
			var err error
			if tt.write {
				// A checkpoint without values: Put calls no DumpsTyped.
				stored, perr := s.Put(ctx, cfg, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID()}, nil, nil)
				if perr != nil {
					t.Fatal(perr)
				}
				err = s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "c", Value: tt.value}}, "task", "")
			} else {
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": tt.value}, ChannelVersions: map[string]string{"c": "1"}}
				_, err = s.Put(ctx, cfg, cp, nil, map[string]string{"c": "1"})
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to wrap %v", err, want)
				}
			}
		})
	}

	t.Run("decode", func(t *testing.T) {
		s := memsaver.New(memsaver.Options{Serializer: bareSerializer{failLoads: true}})
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"c": "v"}, ChannelVersions: map[string]string{"c": "1"}}
		stored, err := s.Put(ctx, checkpoint.Config{ThreadID: "t"}, cp, nil, map[string]string{"c": "1"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.GetTuple(ctx, stored)
		for _, want := range []error{checkpoint.ErrSerialization, errBare} {
			if !errors.Is(err, want) {
				t.Errorf("GetTuple: err = %v, want it to wrap %v", err, want)
			}
		}
	})
}
