package redisstore

import (
	"context"
	"fmt"
	"math"

	"github.com/graphstate/redcheck/checkpoint"
)

// Embedder turns texts into vectors, one per text, all of Options.Dims
// components. It is called with the texts of many items (or queries) at
// once, each text once. Package redisstore/embed has a deterministic local
// one.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// embed calls the Embedder and checks what it returns.
func (s *Store) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := s.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbedding, err)
	}
	if len(vecs) != len(texts) {
		return nil, errorf(ErrEmbedding, "%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != s.opts.Dims {
			return nil, errorf(ErrEmbedding, "vector %d has %d dimensions, want %d", i, len(v), s.opts.Dims)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, errorf(ErrEmbedding, "vector %d holds %v", i, x)
			}
		}
	}
	return vecs, nil
}

// embedAll embeds, in one Embedder call, the texts of the puts among ws
// and the queries of reqs, each distinct text once, then packs the puts'
// vectors and sets the queries' vectors.
func (s *Store) embedAll(ctx context.Context, ws []*write, reqs []*searchReq) error {
	index := map[string]int{}
	var unique []string
	add := func(t string) {
		if _, ok := index[t]; !ok {
			index[t] = len(unique)
			unique = append(unique, t)
		}
	}
	type job struct {
		w     *write
		texts []string
	}
	var jobs []job
	for _, w := range ws {
		if w.del || len(w.paths) == 0 {
			continue
		}
		tree, err := checkpoint.DecodeMetadataValue(w.value)
		if err != nil {
			return errorf(ErrInvalidValue, "%v", err)
		}
		ts := texts(tree, w.value, w.paths)
		for _, t := range ts {
			add(t)
		}
		jobs = append(jobs, job{w, ts})
	}
	for _, r := range reqs {
		if r.query != "" {
			add(r.query)
		}
	}
	vecs, err := s.embed(ctx, unique)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if len(j.texts) == 0 {
			continue
		}
		mine := make([][]float32, len(j.texts))
		for i, t := range j.texts {
			mine[i] = vecs[index[t]]
		}
		j.w.vecs = packVectors(mine, s.opts.Dims)
	}
	for _, r := range reqs {
		if r.query != "" {
			r.vector = vecs[index[r.query]]
		}
	}
	return nil
}
