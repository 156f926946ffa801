package scripts

// HelperText returns one lib.lua helper's source, for the tests of helpers
// (package scripts_test: the Redis test helpers import this package).
func HelperText(name string) (string, bool) {
	helpers, err := libHelpers()
	if err != nil {
		return "", false
	}
	for _, h := range helpers {
		if h.name == name {
			return h.text, true
		}
	}
	return "", false
}
