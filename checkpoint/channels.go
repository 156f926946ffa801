package checkpoint

// Special channels. Their writes have fixed negative indices and overwrite
// each other instead of being insert-if-absent.
const (
	ErrorChannel     = "__error__"
	ScheduledChannel = "__scheduled__"
	InterruptChannel = "__interrupt__"
	ResumeChannel    = "__resume__"
	// TasksChannel carries legacy pending sends (checkpoints with V < 4).
	TasksChannel = "__pregel_tasks"
)

// WriteIndex returns the index a write to channel gets at position pos of a
// PutWrites call: the fixed negative index of a special channel (-1 to -4),
// or pos.
func WriteIndex(channel string, pos int) int {
	switch channel {
	case ErrorChannel:
		return -1
	case ScheduledChannel:
		return -2
	case InterruptChannel:
		return -3
	case ResumeChannel:
		return -4
	}
	return pos
}
