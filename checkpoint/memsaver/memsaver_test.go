package memsaver_test

import (
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
)

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return memsaver.New(memsaver.Options{})
	})
}

func TestConformanceJSONSerializer(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return memsaver.New(memsaver.Options{Serializer: checkpoint.JSONSerializer{}})
	})
}
