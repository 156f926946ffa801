package redisstore

import (
	"context"

	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
)

// GetOption changes how Get reads an item.
type GetOption func(*getConfig)

type getConfig struct{ refresh Refresh }

// WithRefresh says whether Get extends the item's TTL, overriding
// Options.RefreshOnRead.
func WithRefresh(r Refresh) GetOption {
	return func(c *getConfig) { c.refresh = r }
}

// Get returns the item at (namespace, key): one round trip. With
// Options.RefreshOnRead (or WithRefresh(RefreshOn)) it also extends the
// item's TTL, if it has one, in the same atomic script.
//
// Errors: ErrNotFound when there is no live item there; ErrInvalidNamespace,
// ErrInvalidKey, ErrInvalidArgument; ErrCorrupt; or the Redis error, wrapped.
func (s *Store) Get(ctx context.Context, namespace []string, key string, opts ...GetOption) (_ *Item, err error) {
	ctx, call := s.begin(ctx, opGet)
	defer func() { call.end(err) }()
	call.item(namespace, key)
	var cfg getConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	g, err := s.prepareGet(namespace, key, cfg.refresh)
	if err != nil {
		return nil, err
	}
	items, err := s.getItems(ctx, g.refresh, []getReq{g})
	if err != nil {
		return nil, err
	}
	if items[0] == nil {
		return nil, errorf(ErrNotFound, "namespace %q, key %q", namespace, key)
	}
	return items[0], nil
}

type getReq struct {
	ns      []string
	key     string
	refresh bool
}

func (s *Store) prepareGet(ns []string, key string, r Refresh) (getReq, error) {
	if err := validateNamespace(ns); err != nil {
		return getReq{}, err
	}
	if err := validateKey(key); err != nil {
		return getReq{}, err
	}
	refresh, err := r.resolve(s.opts.RefreshOnRead.on())
	if err != nil {
		return getReq{}, err
	}
	return getReq{ns: ns, key: key, refresh: refresh}, nil
}

// getChunk is the number of items one get script reads at most.
const getChunk = 64

// getItems reads items that share one refresh setting, getChunk per round
// trip: nil for an absent item.
func (s *Store) getItems(ctx context.Context, refresh bool, gs []getReq) ([]*Item, error) {
	out := make([]*Item, 0, len(gs))
	for from := 0; from < len(gs); from += getChunk {
		chunk := gs[from:min(from+getChunk, len(gs))]
		res, err := s.run(ctx, scriptrun.StoreGet, s.getArgs(refresh, chunk)).Slice()
		if err != nil {
			return nil, redisErr("get", err)
		}
		items, err := s.decodeGets(ctx, chunk, res)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			if raw, ok := r.([]any); ok && len(raw) > 0 {
				if v, ok := raw[0].(string); ok {
					readBytes(ctx, len(v))
				}
			}
		}
		out = append(out, items...)
	}
	return out, nil
}

// getArgs are the arguments of the get script for gets that share one
// refresh setting.
func (s *Store) getArgs(refresh bool, gs []getReq) []any {
	flag := "0"
	if refresh {
		flag = "1"
	}
	args := make([]any, 0, 2+2*len(gs))
	args = append(args, s.base, flag)
	for _, g := range gs {
		args = append(args, encodeNS(g.ns), keys.Encode(g.key))
	}
	return args
}

// decodeGets reads the reply of the get script: nil for an absent item.
func (s *Store) decodeGets(ctx context.Context, gs []getReq, res []any) ([]*Item, error) {
	if len(res) != len(gs) {
		return nil, errorf(ErrCorrupt, "get script returned %d entries for %d items", len(res), len(gs))
	}
	out := make([]*Item, len(gs))
	for i, r := range res {
		if r == nil {
			continue
		}
		raw, ok := r.([]any)
		if !ok {
			return nil, errorf(ErrCorrupt, "get script returned %T", r)
		}
		it, err := s.decodeItem(ctx, gs[i].ns, gs[i].key, raw)
		if err != nil {
			return nil, err
		}
		out[i] = &it
	}
	return out, nil
}
