package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// versionWidth is the least number of digits of the integer part of a
// version written by NextVersion.
const versionWidth = 12

// NextVersion returns the channel version that follows current. A version is
// an integer counter, zero-padded, then "." and 8 lowercase hex digits of
// crypto randomness, e.g. "000000000001.9f86d081". The random suffix keeps
// two forks that take the same next version from colliding.
//
//   - "" gives the first version, counter 1.
//   - Otherwise the integer part of current is the digits before its first
//     '.' (all of current when it has none): "7", "000000000007.1a2b3c4d",
//     or LangGraph's "00000000000000000000000000000005.0.123". The result's
//     counter is that integer plus one (of any size, without overflow),
//     zero-padded to max(12, number of digits of the integer part), so a
//     32-digit LangGraph version is followed by a 32-digit one.
//   - When current has no integer part (it is empty before its first '.' or
//     holds anything but ASCII digits there), the result is current, "~" and
//     the next version of the counter that follows the last "~" of current
//     when that part is a version of ours ("~" + NextVersion("") otherwise):
//     the result then starts with current's prefix and stays greater in byte
//     order, without growing on every call.
//
// The result is greater than current in byte order whenever current was
// produced by NextVersion, is LangGraph's 32-digit form, or is an integer
// string of at least 12 digits (zero-padded). It is not for a short unpadded
// integer such as "7": "000000000008.…" is numerically next but sorts before
// "7"; callers that mix such versions must compare the integer parts as
// numbers. Byte order also breaks once a counter needs more digits than its
// width (after 999999999999 with the default width), which a channel never
// reaches in practice. NextVersion never panics.
func NextVersion(current string) string {
	if current == "" {
		return formatVersion("1", versionWidth)
	}
	intPart, _, _ := strings.Cut(current, ".")
	if isDigits(intPart) {
		return formatVersion(incrementDigits(intPart), max(versionWidth, len(intPart)))
	}
	if i := strings.LastIndexByte(current, '~'); i >= 0 && isOwnVersion(current[i+1:]) {
		return current[:i+1] + NextVersion(current[i+1:])
	}
	return current + "~" + NextVersion("")
}

// formatVersion zero-pads digits to width and appends the random suffix.
func formatVersion(digits string, width int) string {
	var r [4]byte
	// crypto/rand.Read does not fail on the systems Go supports (and never
	// does from Go 1.24 on); were it to, the suffix would be zeros, which
	// still makes a valid, greater version.
	_, _ = rand.Read(r[:])
	pad := max(0, width-len(digits))
	return strings.Repeat("0", pad) + digits + "." + hex.EncodeToString(r[:])
}

// incrementDigits returns the decimal string s (ASCII digits) plus one,
// keeping its leading zeros where the result fits.
func incrementDigits(s string) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

// isDigits reports whether s is a non-empty string of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isOwnVersion reports whether s has the form NextVersion writes: at least
// 12 digits, ".", 8 lowercase hex digits.
func isOwnVersion(s string) bool {
	digits, suffix, ok := strings.Cut(s, ".")
	if !ok || len(digits) < versionWidth || !isDigits(digits) || len(suffix) != 8 {
		return false
	}
	for i := 0; i < len(suffix); i++ {
		if c := suffix[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
