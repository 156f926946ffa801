// Package inspect holds what the redcheck command and its web UI
// (internal/ui) share to show stored checkpoints: turning decoded values into
// plain JSON data (Plain), the difference between two states as an RFC 6902
// JSON Patch (JSONPatch, Diff), and forking a thread at a checkpoint (Fork).
// One implementation serves both, so that "redcheck diff" and the UI's diff
// agree.
package inspect
