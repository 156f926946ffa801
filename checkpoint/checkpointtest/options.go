package checkpointtest

// Capability names an optional interface of package checkpoint that the
// extended groups test: its value is the interface's name.
type Capability string

// The capabilities RunExtended tests, one group each.
const (
	RunDeleter     Capability = "RunDeleter"     // group delete_for_runs
	ThreadCopier   Capability = "ThreadCopier"   // group copy_thread
	Pruner         Capability = "Pruner"         // group prune
	DeltaHistorian Capability = "DeltaHistorian" // group delta_channel_history
)

// capabilities lists every Capability, in the order the groups run.
var capabilities = []Capability{RunDeleter, ThreadCopier, Pruner, DeltaHistorian}

// Option configures Run and RunExtended.
type Option func(*options)

type options struct {
	without []Capability
}

// Without declares that the saver does not implement the capabilities
// named: their groups are skipped instead of failing. A name that is not a
// Capability, and a capability the saver does implement, fail the run, so
// that an opt-out cannot hide a typo or a signature that drifted.
func Without(capabilities ...Capability) Option {
	return func(o *options) { o.without = append(o.without, capabilities...) }
}
