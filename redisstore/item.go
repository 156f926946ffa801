package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
)

// Item is one stored value with its address and timestamps.
type Item struct {
	// Namespace and Key address the item: no two items share both.
	Namespace []string
	Key       string
	// Value is the stored value as JSON gives it back: map[string]any,
	// []any, string, bool, nil, and numbers as int64 (integers that fit),
	// uint64 (larger integers) or float64.
	Value map[string]any
	// CreatedAt is when the item was first put; an update keeps it.
	// UpdatedAt is when it was last put. Both come from the Redis server's
	// clock, to the microsecond, in UTC; UpdatedAt grows with every Put of
	// the item.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SearchItem is an Item found by Search.
type SearchItem struct {
	Item
	// Score is the cosine similarity of the item's best vector to the
	// query, from -1 to 1, when the search had a query; nil otherwise.
	Score *float64
}

// Refresh says whether a read extends the TTL of the items it returns.
type Refresh int8

const (
	// RefreshDefault follows Options.RefreshOnRead in a read, and means on
	// in Options.RefreshOnRead.
	RefreshDefault Refresh = iota
	// RefreshOn extends the TTL of every item returned that has one.
	RefreshOn
	// RefreshOff leaves TTLs alone.
	RefreshOff
)

// on reports whether Options.RefreshOnRead r turns refreshing on (checked
// by New).
func (r Refresh) on() bool { return r != RefreshOff }

// resolve returns whether to refresh, given the store's default.
func (r Refresh) resolve(def bool) (bool, error) {
	switch r {
	case RefreshDefault:
		return def, nil
	case RefreshOn:
		return true, nil
	case RefreshOff:
		return false, nil
	}
	return false, errorf(ErrInvalidArgument, "unknown Refresh %d", r)
}

// decodeItem builds an Item from what the scripts return: the stored value,
// the created and updated timestamps in microseconds.
func (s *Store) decodeItem(ctx context.Context, ns []string, key string, raw []any) (Item, error) {
	if len(raw) < 3 {
		return Item{}, errorf(ErrCorrupt, "item %q/%q: reply of %d fields", ns, key, len(raw))
	}
	val, ok1 := raw[0].(string)
	cs, ok2 := raw[1].(string)
	us, ok3 := raw[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return Item{}, errorf(ErrCorrupt, "item %q/%q: missing fields", ns, key)
	}
	val, err := s.openItem(ctx, ns, key, val)
	if err != nil {
		return Item{}, err
	}
	v, err := checkpoint.DecodeMetadataValue([]byte(val))
	if err != nil {
		return Item{}, errorf(ErrCorrupt, "item %q/%q: value: %v", ns, key, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Item{}, errorf(ErrCorrupt, "item %q/%q: value is %T, not an object", ns, key, v)
	}
	created, err1 := strconv.ParseInt(cs, 10, 64)
	updated, err2 := strconv.ParseInt(us, 10, 64)
	if err1 != nil || err2 != nil {
		return Item{}, errorf(ErrCorrupt, "item %q/%q: timestamps %q %q", ns, key, cs, us)
	}
	return Item{
		Namespace: slices.Clone(ns),
		Key:       key,
		Value:     m,
		CreatedAt: time.UnixMicro(created).UTC(),
		UpdatedAt: time.UnixMicro(updated).UTC(),
	}, nil
}

// splitID splits "encoded namespace:encoded key" and decodes both.
func splitID(id string) ([]string, string, error) {
	at := strings.LastIndexByte(id, ':')
	if at < 0 {
		return nil, "", errorf(ErrCorrupt, "item id %q", id)
	}
	ns, err := decodeNS(id[:at])
	if err != nil {
		return nil, "", err
	}
	key, err := keys.Decode(id[at+1:])
	if err != nil {
		return nil, "", errorf(ErrCorrupt, "item id %q: %v", id, err)
	}
	return ns, key, nil
}
