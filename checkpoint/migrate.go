package checkpoint

// MigratedTasksVersion is the version MigratePendingSends gives
// TasksChannel when the checkpoint has no channel version at all. It is a
// fixed first version in NextVersion's format, so that two reads of one
// checkpoint give equal tuples.
const MigratedTasksVersion = "000000000001.00000000"

// MigratePendingSends applies the legacy pending-sends migration to a
// checkpoint with V < 4 read back with a parent: sends are the values of the
// parent's writes to TasksChannel, in (task ID, index) order. When there is
// at least one, they become the value of TasksChannel, whose version is the
// greatest of the checkpoint's channel versions (MigratedTasksVersion when
// it has none). Savers call it on read; it changes nothing for V >= 4 or
// without sends.
func MigratePendingSends(cp *Checkpoint, sends []any) {
	if cp.V >= 4 || len(sends) == 0 {
		return
	}
	version := ""
	for _, v := range cp.ChannelVersions {
		version = max(version, v)
	}
	if version == "" {
		version = MigratedTasksVersion
	}
	if cp.ChannelValues == nil {
		cp.ChannelValues = map[string]any{}
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]string{}
	}
	cp.ChannelValues[TasksChannel] = sends
	cp.ChannelVersions[TasksChannel] = version
}
