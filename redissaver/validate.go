package redissaver

import (
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
)

// validateAddress checks the thread and namespace of cfg.
func validateAddress(cfg checkpoint.Config) error {
	if cfg.ThreadID == "" {
		return invalidConfig("missing thread id")
	}
	if err := keys.ValidateThreadID(cfg.ThreadID); err != nil {
		return invalidConfig("%v", err)
	}
	if err := keys.ValidateNamespace(cfg.CheckpointNS); err != nil {
		return invalidConfig("%v", err)
	}
	return nil
}
